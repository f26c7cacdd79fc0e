"""kfuse: a kernel-fusion compiler for NVIDIA GPUs, built on MLIR.

    import kfuse
    from kfuse import builder as kb
    p = kb.Program("softplus")
    x = p.input("x", (1 << 20,), "f32")
    p.output(kb.log(kb.exp(x) + 1.0), name="y")
    f = kfuse.compile(p)          # CUDA when a GPU is present, else CPU
    print(f.report)
    y = f(x_numpy_or_torch)
    t = kfuse.autotune(p)         # variants of its kernels, the fastest chosen
    y = t(x_torch)                # on the GPU at the first call

`kfuse.runtime` (loading and running compiled programs) needs only numpy and
cuda-python; everything else needs the MLIR Python bindings.
"""

from . import dtypes, errors, runtime
from .errors import (ArtifactError, BuilderError, CallError, CompileError, DeviceError,
                     EmulatorError, KfuseError, ParseError, PtxError, UnsupportedOpError)

try:
    from . import builder
    from .api import CompiledProgram, compile, load
    from .autotune import TunedProgram, autotune
    from .pipeline import Options
except ImportError as _e:  # the runtime-only install (no MLIR): keep kfuse.runtime usable
    _compiler_import_error = _e

    def compile(*args, **kwargs):  # noqa: A001
        raise KfuseError(f"the kfuse compiler is not available here: {_compiler_import_error}")

    autotune = compile
    load = runtime.load

__all__ = ["compile", "autotune", "load", "runtime", "builder", "dtypes", "errors", "KfuseError",
           "BuilderError", "CallError", "CompileError", "DeviceError", "ParseError",
           "UnsupportedOpError", "ArtifactError", "EmulatorError", "PtxError"]
