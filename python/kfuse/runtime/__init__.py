"""kfuse runtime: loads and runs compiled kfuse programs.

Needs only numpy (and cuda-bindings for target 'cuda'); never imports MLIR::

    import kfuse.runtime as rt
    exe = rt.load("kfuse-out/softplus")     # directory holding plan.json + kernels.ptx
    y = exe(x)                               # torch / cupy CUDA tensors or numpy arrays

    emu = rt.load_emulated("kfuse-out/softplus")   # no GPU: the PTX emulator (numpy in
    y = emu(x)                                     # and out; slow, for small shapes)
"""

from __future__ import annotations

import importlib
import os
from typing import Optional, Union

from ..errors import ArtifactError, KfuseError
from .plan import (BufferArg, BufferSpec, CopyStep, LaunchPlan, LaunchStep, ScalarArg,
                   TensorSpec, describe_array)
from .cuda import CudaExecutable, Executable, cuda_available, device_count
from .emulator import EmulatedExecutable
from .tune import TunedExecutable, is_tuned_dir, read_tuning

__all__ = [
    "load", "cuda_available", "device_count", "LaunchPlan", "TensorSpec", "BufferSpec",
    "BufferArg", "ScalarArg", "LaunchStep", "CopyStep", "CudaExecutable", "Executable",
    "describe_array", "EmulatedExecutable", "load_emulated", "TunedExecutable",
]


def _plan_dir(path) -> str:
    path = os.fspath(path)
    return (os.path.dirname(path) or ".") if os.path.isfile(path) else path


def _read_ptx(plan: LaunchPlan, plan_dir: str) -> bytes:
    ptx_file = os.path.join(plan_dir, plan.ptx)
    try:
        with open(ptx_file, "rb") as f:
            return f.read()
    except OSError as e:
        raise ArtifactError(f"{ptx_file}: cannot read the PTX: {e}") from None


def load_emulated(path: Union[str, os.PathLike]) -> EmulatedExecutable:
    """Loads a saved CUDA program directory (or its plan.json) to run in the PTX
    emulator on the host (numpy in and out; no GPU)."""
    if is_tuned_dir(path):
        _, dirs, _, _ = read_tuning(os.fspath(path))
        raise ArtifactError(f"{os.fspath(path)} is a tuned program (kfuse.autotune): emulate "
                            f"one of its variants, e.g. {dirs[0][1]} "
                            f"({dirs[0][0]!r})")
    plan = LaunchPlan.load(path)
    plan_dir = _plan_dir(path)
    return EmulatedExecutable(plan, _read_ptx(plan, plan_dir), path=plan_dir)


def load(path: Union[str, os.PathLike], device: Optional[int] = None):
    """Loads a compiled program directory (or its plan.json).

    Target 'cuda' -> :class:`CudaExecutable` (no GPU is touched until the first call).
    Target 'cpu'  -> ``kfuse.targets.cpu.load_cpu_executable(plan_dir, plan)``, which needs
    the kfuse compiler (MLIR) to be installed.
    A tuned program's directory (``kfuse.autotune``, holding tuning.json) ->
    :class:`TunedExecutable` over its variants, timed at the first call (or
    the variant its tuning.json records for a device of this name)."""
    if is_tuned_dir(path):
        name, dirs, dropped, chosen = read_tuning(os.fspath(path))
        variants = []
        for label, d in dirs:
            exe = load(d, device=device)
            if not isinstance(exe, CudaExecutable):
                raise ArtifactError(f"{d}: variant {label!r} of a tuned program must be a "
                                    f"CUDA program")
            variants.append((label, exe))
        return TunedExecutable(variants, name=name, dropped=dropped, path=os.fspath(path),
                               chosen=chosen)
    plan = LaunchPlan.load(path)
    plan_dir = _plan_dir(path)
    if plan.target == "cuda":
        return CudaExecutable(plan, _read_ptx(plan, plan_dir), device=device, path=plan_dir)
    if plan.target == "cpu":
        if device is not None:
            raise KfuseError(f"{plan_dir}: device= applies to target 'cuda' only")
        try:
            # lazy: the CPU target pulls in the compiler (MLIR)
            cpu_target = importlib.import_module("kfuse.targets.cpu")
        except ImportError as e:
            raise ArtifactError(
                f"{plan_dir}: this program was compiled for target 'cpu', which needs the "
                f"kfuse compiler and its MLIR Python bindings; they could not be imported "
                f"({type(e).__name__}: {e})") from None
        return cpu_target.load_cpu_executable(plan_dir, plan)
    raise ArtifactError(f"{plan_dir}: unknown target {plan.target!r}")
