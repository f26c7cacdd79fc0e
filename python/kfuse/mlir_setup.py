"""Connects kfuse's native extension to the `mlir` Python package.

Importing this module registers the fusion dialect into the mlir package's
shared dialect registry, which every `mlir.ir.Context` created afterwards
appends (so no user can forget it), and registers kfuse's passes and named
pipelines globally, so `PassManager.parse("builtin.module(fusion-plan)")`
works in any context, and puts kfuse.dialects on the package's dialect
search path, so fusion ops read from IR are kfuse.dialects.fusion's classes."""

from mlir import ir  # noqa: F401  (initializes the mlir package first)
from mlir._mlir_libs import get_dialect_registry
from mlir._mlir_libs._mlir import globals as _mlir_globals

from . import _kfuse_native

_kfuse_native.register_dialects(get_dialect_registry())
_kfuse_native.register_passes()
# The fusion dialect's op classes (kfuse.dialects.fusion): the mlir package
# imports `<prefix>.fusion` when it first wraps a fusion op.
_mlir_globals.append_dialect_search_prefix("kfuse.dialects")
