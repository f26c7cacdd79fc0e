"""What the generated op classes import from their package (mlir-tblgen's
Python bindings import `._ods_common`): the mlir package's own helpers."""

from mlir.dialects._ods_common import *  # noqa: F401,F403
from mlir.dialects._ods_common import _cext  # noqa: F401
