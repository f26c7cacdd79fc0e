"""kfuse.compile and the compiled program object."""

from __future__ import annotations

import json
import os
import re
from dataclasses import fields, replace

import numpy as np
from typing import Optional, Tuple, Union

from mlir import ir
from mlir.dialects import gpu

from . import report as report_mod
from . import runtime
from .builder import Program
from .errors import CompileError, KfuseError
from .launch_plan import build_plan, guard_messages
from .pipeline import Options, parse_module, run_stages
from .runtime.plan import BufferSpec, HoldsPlan, LaunchPlan
from .runtime.ptx import FUNC_HEADER
from .signature import signature

PTX_FILE = "kernels.ptx"


def _detect_device() -> Optional[Tuple[str, int]]:
    """(sm_XY, number of SMs) of GPU 0, or None without a usable GPU."""
    if not runtime.cuda_available():
        return None
    try:
        from cuda.bindings import driver as cu
        cu.cuInit(0)
        _, dev = cu.cuDeviceGet(0)
        A = cu.CUdevice_attribute
        _, major = cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        _, minor = cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
        _, sms = cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)
        return f"sm_{major}{minor}", int(sms)
    except Exception:
        return None


class CompiledProgram(HoldsPlan):
    """A compiled kfuse program: call it like a function.

    Keeps the IR after every stage (`stages`), the PTX (`ptx`, CUDA only), the
    LLVM dialect module (`llvm`, CPU only), the launch plan (`plan`) and the
    fusion report (`report`)."""

    def __init__(self, name, options, stages, report, plan, ptx=None, constants=None):
        self.name = name
        self.options = options
        self.stages = stages
        self.report = report
        self.plan = plan
        self.ptx = ptx
        self.constants = constants or {}  # CUDA: tensor constants, by plan file name
        self._exe = None
        self._emu = None

    @property
    def target(self) -> str:
        return self.options.target

    @property
    def llvm(self) -> Optional[str]:
        """The CPU program: its last stage, the LLVM dialect module the
        executable is built from (printed when first read); None for CUDA."""
        return self.stages["target"] if self.target == "cpu" else None

    def _executable(self):
        if self._exe is None:
            if self.target == "cuda":
                self._exe = runtime.CudaExecutable(self.plan, self.ptx.encode(),
                                                   constants=self.constants)
            else:
                from .targets.cpu import CpuExecutable
                # (built from the stage's bytecode: no text printed and parsed)
                self._exe = CpuExecutable(self.plan, self.stages.code("target"))
        return self._exe

    def __call__(self, *args, **kwargs):
        return self._executable()(*args, **kwargs)

    def check_guards(self, stream=None) -> None:
        """Raises GuardError if a call on `stream` read a tensor at an index outside
        it (see plan.guards). Calls on host arrays check by themselves; a CUDA
        call on device arrays returns before its kernels end, so this waits for
        the stream first. Nothing to do on the CPU target."""
        if self.target == "cuda" and self.plan.guards:
            self._executable().check_guards(stream)

    def emulate(self, *args):
        """Runs a CUDA program's PTX in kfuse's PTX emulator on the host (no GPU):
        numpy arrays in and out. It checks what a GPU leaves undefined (out of
        bounds and misaligned accesses, data races, barriers and shuffles that
        not every thread reaches) and raises EmulatorError naming the PTX
        statement. Slow: for tests with small shapes. `emulator.last_stats`
        then says what each launch did to global memory and the PTX
        warp-instructions its warps issued; `emulator.profile(*args)` runs
        full-size launches on a sample of their blocks for those counts."""
        return self.emulator(*args)

    @property
    def emulator(self):
        """The program's runtime.EmulatedExecutable (CUDA programs only)."""
        if self.target != "cuda":
            raise KfuseError(f"{self.name!r} was compiled for target {self.target!r}; "
                             f"emulate() runs CUDA programs")
        if self._emu is None:
            self._emu = runtime.EmulatedExecutable(self.plan, self.ptx,
                                                   constants=self.constants)
        return self._emu

    def save(self, path: Union[str, os.PathLike]) -> str:
        """Writes a directory that `kfuse.load` (or `kfuse.runtime.load`, for
        CUDA, on a machine with only numpy and cuda-python) runs again."""
        path = os.fspath(path)
        os.makedirs(os.path.join(path, "stages"), exist_ok=True)
        self.plan.save(path)
        if self.target == "cuda":
            with open(os.path.join(path, PTX_FILE), "w") as f:
                f.write(self.ptx)
            for file, data in self.constants.items():
                np.save(os.path.join(path, file), data, allow_pickle=False)
        else:
            from .targets.cpu import save_cpu
            save_cpu(self.plan, self.llvm, path)
        for i, (stage, text) in enumerate(self.stages.items()):
            with open(os.path.join(path, "stages", f"{i}-{stage}.mlir"), "w") as f:
                f.write(text)
        with open(os.path.join(path, "report.json"), "w") as f:
            f.write(self.report.to_json())
        with open(os.path.join(path, "options.json"), "w") as f:
            json.dump(self.options.__dict__, f, indent=2)
        return path

    def __repr__(self):
        return (f"<kfuse.CompiledProgram {self.name} target={self.target} "
                f"kernels={self.report.after.kernels}>")


def compile(program: Union[Program, str], target: str = "auto", *,
            chip: Optional[str] = None, recompute: str = "auto",
            numerics: str = "fast", fuse: bool = True,
            filename: str = "<input>", **strategy) -> CompiledProgram:
    """Compiles a builder Program or MLIR text (linalg-on-tensors, one public
    function) for `target`: 'cuda', 'cpu', or 'auto' (CUDA when a GPU is
    present, else CPU). CUDA programs compile without a GPU (for artifacts);
    calling one needs a GPU. Without `chip`, CUDA code targets the GPU that is
    here (chip and SM count queried through cuda-python), or sm_90 with its
    132 SMs where there is none. `strategy` overrides threads, unroll,
    blocks_per_sm (elementwise kernels), sm_count (grid sizes, and the launch
    shapes of reduction kernels), row_chunks, row_cluster, row_occupancy,
    row_prefetch, row_tile, row_trip, row_peel, row_persist, row_exchange, row_fold, row_shift, row_joint, row_smem, row_last_block, row_split_tail, row_store_transposed and row_pack (row kernels), pdl
    (kernels launched before the one they follow ends, sm_90 and later) and
    multi_tensor (independent elementwise groups over different spaces in
    one launch, and small independent kernels packed into one launch,
    each over blocks of its own; False: a launch each), pack_bytes (the
    most bytes of buffers a kernel that joins a packed launch has, default
    1 MiB) and readonly_inputs (kernels load the program's inputs with
    ld.global.nc; default False, not yet timed).
    `numerics="strict"` forbids FMA contraction and reassociation beyond the input (on the CPU target the fused program then
    computes the same bits as the unfused one; on CUDA square roots and
    divisions are correctly rounded too); `fuse=False` compiles every
    op as its own kernel. `filename` names MLIR text in diagnostics."""
    text, filename, guard = _program_text(program, filename)
    options, given, baseline = _resolve_options(target, chip, recompute, numerics, fuse,
                                                strategy)
    compiled = _build(text, filename, guard, options)
    if given:
        # (what the report says of options that change nothing: found by
        # compiling without each, once it is asked for)
        compiled.report.options_check = lambda: _options_without_effect(
            compiled, text, filename, options, given, baseline)
    return compiled


# The options kfuse.compile takes as keywords: Options' fields but those it
# names as parameters of its own.
STRATEGY_OPTIONS = frozenset(f.name for f in fields(Options)) - {
    "target", "chip", "recompute", "numerics", "fuse"}


def _program_text(program, filename):
    """(MLIR text, its name in diagnostics, whether it came from outside and
    is parsed in a child process first) of a builder Program or MLIR text."""
    if isinstance(program, Program):
        return program.to_mlir(), f"<program {program.name}>", False
    if isinstance(program, str):
        return program, filename, True
    raise CompileError(f"kfuse.compile takes a kfuse.builder.Program or MLIR text, "
                       f"got {type(program).__name__}")


def _resolve_options(target, chip, recompute, numerics, fuse, strategy):
    """(Options, the strategy options the caller gave, the values options not
    given take where not their defaults: the device's SM count)."""
    strategy = dict(strategy)
    given = dict(strategy)      # (the caller's, before the device's SM count)
    baseline = {}               # (an option's value when not given, where not the default)
    if target in ("auto", "cuda") and chip is None:
        # Target the GPU that is here: its chip and SM count (grid sizes).
        detected = _detect_device()
        if target == "auto":
            target = "cuda" if detected else "cpu"
        if detected and target == "cuda":
            chip = detected[0]
            strategy.setdefault("sm_count", detected[1])
            baseline["sm_count"] = detected[1]
    elif target == "auto":
        target = "cuda" if _detect_device() else "cpu"
    unknown = set(strategy) - STRATEGY_OPTIONS
    if unknown:
        raise CompileError(f"kfuse.compile: unknown options {sorted(unknown)}")
    options = Options(target=target, chip=chip or "sm_90", recompute=recompute,
                      numerics=numerics, fuse=fuse, **strategy)
    return options, given, baseline


def _same_code(a: "CompiledProgram", b: "CompiledProgram") -> bool:
    if a.target == "cuda":
        return a.ptx == b.ptx and a.plan.to_dict() == b.plan.to_dict()
    return a.llvm == b.llvm


def _options_without_effect(compiled, text, filename, options, given, baseline):
    """The options of `given` (those the caller passed) without which the
    program compiles to the same code (PTX and plan, or LLVM IR): each
    compiled again with that one option at its default (the device's SM
    count where one was detected), the others as given. (Options are checked
    when they are built: where the others alone are refused, an option counts
    as needed.)"""
    defaults = Options(target=options.target, chip=options.chip)
    same = {}
    for name, value in given.items():
        if name in baseline:
            other = replace(options, **{name: baseline[name]})
        else:
            other = replace(options, **{name: getattr(defaults, name)})
        try:
            # (the text parsed once, in a child where it came from outside:
            # parsed here now)
            again = _build(text, filename, False, other)
        except KfuseError:
            continue    # (the others refused without it: it is needed)
        if _same_code(compiled, again):
            same[name] = value
    return same


def _build(text: str, filename: str, guard: bool, options: Options) -> CompiledProgram:
    """Compiles MLIR text with `options` (`guard`: text from outside, parsed in
    a child process first)."""
    with ir.Context(), ir.Location.unknown():
        # (text from outside is parsed in a forked child first: MLIR's parser
        # aborts the process on some malformed input; the builder's is sound)
        module = parse_module(text, ir.Context.current, filename, guard=guard)
        name, inputs, outputs = signature(module)
        # The unfused baseline is the program as written (normalization
        # already folds data movement into indexing).
        holder = {"before": report_mod.baseline(module)}

        def after(stage, mod):
            if stage == "plan":
                holder["report"] = report_mod.planned(mod, name, holder["before"])
            elif stage == "codegen" and options.target == "cuda":
                holder["plan"], holder["constants"], holder["traffic"] = build_plan(
                    mod, name, inputs, outputs, options.chip, PTX_FILE)
            elif stage == "codegen":
                holder["guards"] = guard_messages(mod)

        stages = run_stages(module, options, after)
        if options.target == "cuda":
            ptx = _extract_ptx(module)
            holder["report"].launches = report_mod.launch_lines(
                holder["plan"], ptx, holder["report"].groups)
            holder["report"].set_launch_traffic(holder["plan"], holder["traffic"])
            holder["report"].guards = list(holder["plan"].guards)
            return CompiledProgram(name, options, stages, holder["report"], holder["plan"],
                                   ptx=ptx, constants=holder["constants"])
        plan = LaunchPlan(
            name=name, target="cpu", inputs=tuple(inputs), outputs=tuple(outputs),
            buffers=tuple([BufferSpec("input", s.shape, s.dtype, i)
                           for i, s in enumerate(inputs)] +
                          [BufferSpec("output", s.shape, s.dtype, i)
                           for i, s in enumerate(outputs)]),
            steps=(), extra={"llvm": "program.llvm.mlir", "entry": name, "args": "argv"},
            guards=tuple(holder.get("guards", ())))
        holder["report"].guards = list(plan.guards)
        return CompiledProgram(name, options, stages, holder["report"], plan)


def _extract_ptx(module: ir.Module) -> str:
    ptx = []
    for op in module.body.operations:
        if op.operation.name == "gpu.binary":
            for obj in ir.ArrayAttr(op.operation.attributes["objects"]):
                ptx.append(gpu.ObjectAttr(obj).object.decode())
    if len(ptx) > 1:
        raise CompileError(f"kfuse: expected one PTX module, got {len(ptx)} (internal error)")
    # (no module: every output is an input or a copy of one, nothing to launch)
    text = ptx[0] if ptx else ""
    problems = ptx_call_problems(text)
    if problems:
        raise CompileError(
            f"kfuse: the generated PTX {'; '.join(problems)}: the module would not load "
            "or would call a function with the wrong arguments (a math function "
            "that libdevice lacks, or takes with other types; internal error)")
    return text


# A call through a register (`call (retval0), %rd10, (param0), prototype_0;`):
# what LLVM emits when a call's types differ from the callee's declaration.
_PTX_INDIRECT_CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?(%\w+)\s*,")


def ptx_call_problems(ptx: str):
    """What in a PTX module's calls cannot work, as phrases (empty when none):
    functions it declares but does not define (the driver cannot resolve
    them: kernels call nothing outside their module) and calls through a
    function pointer (a call whose argument types differ from the callee's,
    which reads its parameters wrongly)."""
    declared, defined = set(), set()
    for m in FUNC_HEADER.finditer(ptx):
        (defined if m.group(5) == "{" else declared).add(m.group(3))
    problems = []
    missing = sorted(declared - defined)
    if missing:
        problems.append(f"calls {', '.join(missing)} without defining it")
    targets = set()
    for reg in set(_PTX_INDIRECT_CALL.findall(ptx)):
        targets.update(re.findall(rf"mov\.b64\s+{re.escape(reg)}\s*,\s*([\w$]+)\s*;", ptx))
    if _PTX_INDIRECT_CALL.search(ptx):
        problems.append("calls " + (", ".join(sorted(targets)) or "a function")
                        + " through a pointer (its arguments differ from its declaration)")
    return problems


def load(path: Union[str, os.PathLike]):
    """Loads a directory written by CompiledProgram.save (any target)."""
    return runtime.load(path)
