"""The CPU target: runs the LLVM-dialect module of a program with MLIR's
ExecutionEngine, behind the same callable interface as the CUDA runtime.

The entry function takes the inputs then the outputs as memrefs (destination
passing style) through its C interface (`_mlir_ciface_<name>`): since
fusion-cpu-argv-entries, one argument, an array of pointers to the memref
descriptors (plans say so: extra["args"] == "argv"); programs saved before
take one pointer an argument."""

from __future__ import annotations

import ctypes
import os
from typing import Optional, Sequence, Union

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import get_ranked_memref_descriptor

from .. import dtypes, mlir_setup  # noqa: F401
from ..errors import ArtifactError, CallError, CompileError
from ..runtime.plan import LaunchPlan, describe_array

LLVM_FILE = "program.llvm.mlir"
# The function fusion-lower-guards adds for the CPU target: copies the guards'
# status words into its argument and zeroes them.
TAKE_STATUS = "kfuse_take_status"


def _memref(arr: np.ndarray):
    """The memref descriptor of `arr` (ctypes knows no 16-bit floats: their
    bits; 0-d arrays as one element)."""
    view = arr.reshape(1) if arr.ndim == 0 else arr
    if view.dtype.itemsize == 2 and view.dtype.kind in "fV":
        view = view.view(np.uint16)
    return get_ranked_memref_descriptor(view)


def _descriptor(arr: np.ndarray):
    """An argument of a C interface taking a pointer to each descriptor."""
    return ctypes.pointer(ctypes.pointer(_memref(arr)))


def _invoke(engine, name: str, arrays, argv: bool) -> None:
    """Calls entry `name` on `arrays`: through one array of descriptor
    pointers (`argv`, fusion-cpu-argv-entries), or a pointer an array."""
    if not argv:
        engine.invoke(name, *[_descriptor(a) for a in arrays])
        return
    descs = [_memref(a) for a in arrays]  # (alive until the call returns)
    table = (ctypes.c_void_p * max(1, len(descs)))(*[ctypes.addressof(d) for d in descs])
    engine.invoke(name, ctypes.pointer(ctypes.pointer(table)))


class CpuExecutable:
    """Callable compiled program on the host CPU."""

    def __init__(self, plan: LaunchPlan, llvm: Union[str, bytes], opt_level: int = 3):
        """`llvm`: the program's LLVM dialect module, as text or MLIR
        bytecode."""
        self.plan = plan
        self._context = ir.Context()
        notes = []

        def note(d):
            notes.append(f"{d.location}: {d.message}")
            return True

        handler = self._context.attach_diagnostic_handler(note)
        with self._context:
            self._module = ir.Module.parse(llvm)
            try:
                self._engine = ExecutionEngine(self._module, opt_level=opt_level)
            except RuntimeError as e:
                # (what LLVM's translation refused, e.g. data that does not
                # fit its type: a compiler problem, named, not a bare error)
                raise CompileError(
                    f"kfuse: the CPU program '{plan.name}' could not be built: "
                    + ("; ".join(notes) or str(e))) from None
            finally:
                handler.detach()
        self._entry = plan.extra.get("entry", plan.name)
        self._argv = plan.extra.get("args") == "argv"
        try:  # link now: a missing symbol is a compiler problem, not a call error
            self._engine.lookup(self._entry)
            if plan.guards:
                self._engine.lookup(TAKE_STATUS)
        except RuntimeError as e:
            raise CompileError(f"kfuse: the CPU program '{plan.name}' could not be "
                               f"linked: {e}") from None

    @property
    def name(self) -> str:
        return self.plan.name

    def check_guards(self, stream=None) -> None:
        """Nothing to wait for: each call on the CPU reports its own bad indices
        (GuardError) before it returns. (The CUDA executable's waits for a stream.)"""

    def _host(self, a, spec, role):
        if not isinstance(a, np.ndarray):
            if hasattr(a, "__array__") and not hasattr(a, "__cuda_array_interface__"):
                a = np.asarray(a)
            else:
                raise CallError(f"{role} '{spec.name}': the cpu target takes numpy arrays, "
                                f"got {type(a).__name__}")
        return a

    def __call__(self, *args, out=None, stream=None):
        plan = self.plan
        plan.check_call(args)
        try:
            host = [np.ascontiguousarray(self._host(a, s, "input"))
                    for a, s in zip(args, plan.inputs)]
            np_out = [dtypes.to_numpy(s.dtype) for s in plan.outputs]
        except KeyError as e:
            raise CallError(str(e).strip("'\"")) from None
        if out is not None:
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            plan.check_outputs(outs)
            for o, s in zip(outs, plan.outputs):
                if not isinstance(o, np.ndarray) or not o.flags.c_contiguous:
                    raise CallError(f"output '{s.name}': out= needs C-contiguous numpy arrays")
            span = lambda a: ("host", a.__array_interface__["data"][0])  # noqa: E731
            plan.check_disjoint_outputs([span(a) for a in host], [span(o) for o in outs])
        else:
            outs = [np.empty(s.shape, dtype=d) for s, d in zip(plan.outputs, np_out)]
        _invoke(self._engine, self._entry, host + outs, self._argv)
        if plan.guards:
            # (the words the program's guards set: taken, which zeroes them)
            words = np.zeros(2 * len(plan.guards), np.int64)
            _invoke(self._engine, TAKE_STATUS, [words], self._argv)
            error = plan.guard_error(words)
            if error is not None:
                raise error
        return outs[0] if len(outs) == 1 else tuple(outs)


def save_cpu(plan: LaunchPlan, llvm_text: str, path: str) -> None:
    with open(os.path.join(path, LLVM_FILE), "w") as f:
        f.write(llvm_text)


def load_cpu_executable(plan_dir: str, plan: LaunchPlan) -> CpuExecutable:
    name = plan.extra.get("llvm", LLVM_FILE)
    file = os.path.join(plan_dir, name)
    try:
        with open(file) as f:
            text = f.read()
    except OSError as e:
        raise ArtifactError(f"{file}: cannot read the compiled CPU program: {e}") from None
    return CpuExecutable(plan, text)
