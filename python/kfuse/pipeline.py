"""The compiler driver: runs kfuse's registered pipelines, stage by stage.

Every stage is a pipeline registered in C++ (transforms/Pipelines.cpp); this
module only chooses their options and keeps the IR after each stage. A failing
stage raises CompileError with the diagnostics and a fuse-opt command line
that reproduces the failure on the saved input of that stage."""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Optional, Tuple, Union

from mlir import ir
from mlir.passmanager import PassManager

from . import mlir_setup  # noqa: F401  (registers dialect + pipelines)
from .errors import CompileError, ParseError, UnsupportedOpError

TARGETS = ("cpu", "cuda")
RECOMPUTE = ("auto", "never", "always")
NUMERICS = ("fast", "strict")
_SHIFT = {None: "auto", True: "true", False: "false"}  # row_shift -> row-shift


@dataclass(frozen=True)
class Options:
    """Everything that changes generated code. Frozen and hashable: it is part
    of a compiled program's identity (and of a cache key)."""

    target: str = "cpu"
    chip: str = "sm_90"
    sm_count: int = 0          # 0: the chip's default
    threads: int = 256
    unroll: int = 4
    blocks_per_sm: int = 0     # 0: grid covers the space once
    row_chunks: int = 4        # row kernels: vector chunks per thread in registers
                               # (0: stream every row through one pass per
                               # dependency level instead)
    row_cluster: Optional[int] = None  # rows too long for a block: spread over a
                               # cluster of up to this many blocks (2, 4, 8, 16; sm_90+;
                               # 16 is beyond CUDA's portable 8, the runtime opts in);
                               # 0: stream; None: the chip's (8 on sm_90+, else 0)
    row_occupancy: int = 1     # blocks of a block-per-row kernel an SM holds at
                               # once (1, 2 or 4): blocks of at most 1024 / this
                               # many threads, each thread its share of the
                               # registers; a row longer than they hold goes to
                               # shared memory (each block its share) or over a
                               # cluster, of blocks of 1024 / this many threads
                               # (512 at most where row_cluster is 16), 8 vectors
                               # a thread in registers at most (not kernels that
                               # also sum columns)
    row_prefetch: int = 0      # row kernels holding their rows on chip (a block or
                               # a cluster a row) ask L2 for their share of the
                               # row this many rows on once their own has landed
                               # (cp.async.bulk.prefetch; sm_90+; 0: none)
    row_fold: int = 0          # column sums beside row reductions: rows each block
                               # folds into partials (the largest divisor of the
                               # rows up to this; 0: from the SM count; 1: store
                               # every term)
    row_exchange: str = "async"  # how a cluster's blocks combine their totals:
                               # "async" (st.async into every block, awaited on
                               # an mbarrier; where a cluster of blocks holding
                               # their share in registers alone exists, it is
                               # taken over a smaller one with shared memory) or
                               # "barrier" (published, a cluster barrier per
                               # exchange)
    row_shift: Optional[bool] = None  # rows that do not all start on a vector boundary
                               # (softmax over 50257 logits, a ragged split's
                               # views of rows of an odd width) move aligned
                               # vectors anyway, chunks following memory, lanes
                               # outside the row masked: None, but rows of
                               # 4-byte or wider elements of a group streamed
                               # by choice (vectors as wide as their starts
                               # allow); True, those too; False, never
    row_joint: bool = True     # clusters: reductions that do not read each other
                               # cross the cluster in one exchange, and (fast
                               # numerics) a max and a later sum of exp(e - max)
                               # too (each block's sum against its own max), and
                               # a sum and a later sum of squares around its mean
                               # (each block's around its own, combined with Chan
                               # et al.'s formula); False: an exchange per reduction
    row_smem: int = -1         # row kernels: bytes of dynamic shared memory a block
                               # may keep its share of a row in beyond its registers
                               # (a row too long for them: one block, or a smaller
                               # cluster); 0: registers only; -1: the chip's
    row_last_block: bool = True  # each wave of a row split into slices along its
                               # columns (an L2 norm, a variance over everything) is
                               # finished by the last block of its partials kernel to store its
                               # partial (an atomic count a row), not by a kernel
                               # of its own; slices of rows (x.sum(0)) likewise
                               # by the last block of each tile of output points,
                               # where the finish runs a thread per point; and a
                               # full reduction of a row kernel's results (a
                               # loss's mean) by the row kernel's last block to end
    row_split_tail: bool = True  # a long row that no good number of slices divides
                               # (a prime length) splits anyway: equal slices of a
                               # multiple of 8 columns and a tail of the rest,
                               # reduced by one more block (along rows, x.sum(0):
                               # equal slices of rows and a shorter tail); False:
                               # dividing slices only (a prime length unsplit)
    row_store_transposed: bool = True  # a split along rows (statistics over
                               # leading axes, NHWC batch normalization) stores its
                               # full-space results in a kernel over (positions,
                               # rows): vectors along the rows, each row's values
                               # computed once by the finishing kernel (rows
                               # narrower than a warp's vectors: several a warp);
                               # along a row's columns (x / ||x||) over pieces of
                               # the slices, 2048 floats a block of 256 threads;
                               # False: over the slices (along rows a thread per
                               # slice and row, scalars)
    row_persist: Union[int, str] = 0  # rows over a cluster whose blocks hold their
                               # shares in registers, or in one block's: a
                               # persistent kernel of at most this many clusters
                               # (or blocks, a block a row; the runtime launches
                               # those the device holds at once, if fewer), each
                               # block's share of its next row copied into shared
                               # memory meanwhile (0: a cluster a row; "auto": up
                               # to a cluster a row, the device's count; sm_90+)
    row_tile: int = 0          # row tiles (rows contiguous in memory, reduced along a
                               # strided axis): rows a block's tile holds, a power
                               # of two up to 32 (0: a 32-byte sector of each column)
    row_trip: int = 0          # a streamed row (a block per row, its column loop):
                               # chunks each thread loads per trip of the loop, up
                               # to 32 (0: 4, or its whole share up to 8 chunks;
                               # a chunk is a 16-byte vector where rows start on
                               # one, a single element where they do not)
    row_peel: bool = True      # a streamed row its trips do not divide (or a
                               # thread's row: a split's slice): the trips
                               # wholly in the row run without testing their
                               # chunks against its end, the last one tested
                               # (False: every trip tests them)
    readonly_inputs: bool = False  # kernels load the program's inputs with
                               # ld.global.nc (fusion-readonly-inputs): ptxas may
                               # then issue them before the kernel's earlier
                               # stores, at the cost of registers (not yet timed)
    row_pack: int = 0          # rows one warp covers (a block per row of 32 threads)
                               # share a block, a warp each, up to this many (a
                               # power of two up to 32); 0: up to 4 where the
                               # blocks still number twice the SMs; 1: a block a row.
                               # Beside column sums also rows of a group of warps,
                               # a group each (0: 8 warps, or 512 threads, a block);
                               # in kernels without reductions (a split's store)
                               # rows of fewer vectors than a warp has lanes share
                               # warps too (0: up to 4 warps' worth a block)
    multi_tensor: bool = True  # independent elementwise groups over different
                               # spaces (an optimizer's update of each
                               # parameter) share one launch, each over blocks
                               # of its own; so do kernels too small to fill
                               # the GPU that touch no buffer another writes
                               # (a norm of each parameter; fusion-pack-launches)
    pack_bytes: int = 1 << 20  # the most bytes of buffers a kernel that joins a
                               # packed launch has (few blocks may still move
                               # much: a grid-stride loop's each)
    pdl: bool = True           # a kernel that directly follows another is launched
                               # before that one ends and waits for it on the GPU
                               # (programmatic dependent launch; sm_90 and later,
                               # no effect on older chips)
    recompute: str = "auto"
    numerics: str = "fast"     # "strict": no FMA contraction or reassociation
    fuse: bool = True          # False: every op its own kernel (the baseline)

    def __post_init__(self):
        if self.target not in TARGETS:
            raise CompileError(f"unknown target {self.target!r}: use one of {TARGETS} or 'auto'")
        if self.numerics not in NUMERICS:
            raise CompileError(f"numerics must be one of {NUMERICS}, got {self.numerics!r}")
        if self.recompute not in RECOMPUTE:
            raise CompileError(f"recompute must be one of {RECOMPUTE}, got {self.recompute!r}")
        if self.row_cluster not in (None, 0, 1, 2, 4, 8, 16) or isinstance(self.row_cluster, bool):
            raise CompileError(f"option row_cluster must be 0, 2, 4, 8, 16 or None (the chip's "
                               f"default), got {self.row_cluster!r}")
        chip = re.fullmatch(r"sm_(\d+)[a-z]?", str(self.chip))
        if self.target == "cuda" and self.row_cluster in (2, 4, 8, 16) and chip and \
                int(chip.group(1)) < 90:
            # (said before any stage runs; fusion-codegen-cuda checks it too,
            # for fuse-opt)
            raise CompileError(f"option row_cluster={self.row_cluster} needs thread-block "
                               f"clusters (sm_90 or later), but chip is {self.chip}: leave "
                               f"row_cluster None or 0 there")
        for name in ("sm_count", "threads", "unroll", "blocks_per_sm", "row_chunks", "row_fold",
                     "row_prefetch", "row_persist", "pack_bytes"):
            v = getattr(self, name)
            least = 1 if name in ("threads", "unroll") else 0
            if name == "row_persist" and v == "auto":
                continue
            if not isinstance(v, int) or isinstance(v, bool) or v < least:
                kind = "a positive" if least else "a non-negative"
                extra = " or 'auto'" if name == "row_persist" else ""
                raise CompileError(f"option {name} must be {kind} integer{extra}, got {v!r}")
        if self.row_occupancy not in (1, 2, 4) or isinstance(self.row_occupancy, bool):
            raise CompileError(f"option row_occupancy must be 1, 2 or 4, got "
                               f"{self.row_occupancy!r}")
        if self.target == "cuda" and self.row_prefetch and chip and int(chip.group(1)) < 90:
            raise CompileError(f"option row_prefetch={self.row_prefetch} needs "
                               f"cp.async.bulk.prefetch (sm_90 or later), but chip is "
                               f"{self.chip}: leave row_prefetch 0 there")
        if self.row_exchange not in ("barrier", "async"):
            raise CompileError(f"option row_exchange must be 'barrier' or 'async', got "
                               f"{self.row_exchange!r}")
        if self.row_shift not in (None, True, False):
            raise CompileError(f"option row_shift must be None (kfuse's choice), True or "
                               f"False, got {self.row_shift!r}")
        for name in ("row_joint", "row_last_block", "row_split_tail", "row_store_transposed",
                     "row_peel", "pdl", "multi_tensor", "readonly_inputs"):
            if not isinstance(getattr(self, name), bool):
                raise CompileError(f"option {name} must be True or False, got "
                                   f"{getattr(self, name)!r}")
        if (not isinstance(self.row_smem, int) or isinstance(self.row_smem, bool)
                or self.row_smem < -1):
            raise CompileError(f"option row_smem must be -1 (the chip's) or a non-negative "
                               f"number of bytes, got {self.row_smem!r}")
        if self.target == "cuda" and self.row_persist and (
                self.row_cluster in (0, 1) or (chip and int(chip.group(1)) < 90)):
            raise CompileError(f"option row_persist={self.row_persist} needs thread-block "
                               f"clusters (sm_90 or later, row_cluster not 0), chip is "
                               f"{self.chip}, row_cluster {self.row_cluster}")
        if (not isinstance(self.row_trip, int) or isinstance(self.row_trip, bool)
                or not 0 <= self.row_trip <= 32):
            raise CompileError(f"option row_trip must be 0 (kfuse's choice) or 1 to 32 "
                               f"chunks a trip, got {self.row_trip!r}")
        for name in ("row_tile", "row_pack"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v not in (0, 1, 2, 4, 8, 16, 32):
                raise CompileError(f"option {name} must be 0 (kfuse's choice) or a power of two "
                                   f"up to 32, got {v!r}")

    def stages(self) -> List[Tuple[str, str]]:
        """(stage name, pipeline) in order; the pipelines are fuse-opt syntax."""
        plan = (f"fusion-plan{{recompute={self.recompute} "
                f"no-fusion={int(not self.fuse)} multi-tensor={int(self.multi_tensor)}}}")
        if self.target == "cuda":
            codegen = (f"fusion-codegen-cuda{{chip={self.chip} sm-count={self.sm_count} "
                       f"threads={self.threads} unroll={self.unroll} "
                       f"blocks-per-sm={self.blocks_per_sm} row-chunks={self.row_chunks} "
                       f"row-cluster={-1 if self.row_cluster is None else self.row_cluster} "
                       f"row-exchange={self.row_exchange} row-fold={self.row_fold} "
                       f"row-shift={_SHIFT[self.row_shift]} row-joint={int(self.row_joint)} "
                       f"row-smem={self.row_smem} row-last-block={int(self.row_last_block)} "
                       f"row-split-tail={int(self.row_split_tail)} "
                       f"row-store-transposed={int(self.row_store_transposed)} "
                       f"row-pack={self.row_pack} "
                       f"row-occupancy={self.row_occupancy} "
                       f"row-prefetch={self.row_prefetch} "
                       f"row-tile={self.row_tile} "
                       f"row-trip={self.row_trip} row-peel={int(self.row_peel)} "
                       f"row-persist={-1 if self.row_persist == 'auto' else self.row_persist} "
                       f"pdl={int(self.pdl)} pack-launches={int(self.multi_tensor and self.fuse)} "
                       f"pack-bytes={self.pack_bytes} "
                       f"readonly-inputs={int(self.readonly_inputs)} "
                       f"numerics={self.numerics}}}")
            target = f"fusion-target-cuda{{chip={self.chip}}}"
        else:
            codegen = f"fusion-codegen-cpu{{numerics={self.numerics}}}"
            target = "fusion-target-cpu"
        return [("normalize", "fusion-normalize"), ("plan", plan),
                ("codegen", codegen), ("target", target)]

    def with_(self, **kw) -> "Options":
        return replace(self, **kw)


def fuse_opt_path() -> str:
    """The fuse-opt binary next to this package (installed), in the build tree
    (development), or on PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "bin", "fuse-opt"),
                 os.path.join(here, "..", "..", "build", "bin", "fuse-opt")):
        if os.path.isfile(cand):
            return os.path.normpath(cand)
    return shutil.which("fuse-opt") or "fuse-opt"


def format_diagnostics(diags) -> List[str]:
    """One line per error: 'file:line:col: message' (notes without IR dumps)."""
    lines = []
    for d in diags:
        loc = str(d.location)
        lines.append(f"{loc}: {d.message}")
        for n in d.notes:
            if "see current operation" not in n.message:
                lines.append(f"  note: {n.location}: {n.message}")
    return lines


def _parser_aborts(text: str) -> Optional[str]:
    """Parses `text` in a forked child process first: MLIR's parser aborts the
    process on some malformed input (e.g. a block label after operations in a
    linalg.generic region: "operation destroyed but still has uses") instead
    of reporting an error. Returns what the child printed when it aborted,
    else None (also where fork is not available)."""
    if not hasattr(os, "fork"):
        return None
    import signal
    import time
    import warnings
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # (Python 3.12+ warns about fork in a process with threads, such as
        # MLIR's thread pool: the child only parses in a fresh context, and a
        # child that hangs is killed below)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: parse, say nothing, exit
        try:
            import faulthandler
            faulthandler.disable()   # (an abort here is the expected answer)
            os.close(read_end)
            os.dup2(write_end, 2)
            ctx = ir.Context()
            ctx.enable_multithreading(False)

            def show(d):
                os.write(2, f"{d.location}: error: {d.message}\n".encode())
                return True
            ctx.emit_error_diagnostics = True   # to `show`, not into an exception
            ctx.attach_diagnostic_handler(show)
            with ctx, ir.Location.unknown():
                ir.Module.parse(text)
        except BaseException:
            pass
        os._exit(0)
    os.close(write_end)
    os.set_blocking(read_end, False)
    chunks = []
    deadline = time.monotonic() + 30 + len(text) / 1e5
    status = None
    with os.fdopen(read_end, "rb") as f:
        while status is None:
            try:
                b = f.read(65536)
                if b:
                    chunks.append(b)
            except BlockingIOError:
                pass
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                rest = f.read()
                if rest:
                    chunks.append(rest)
            elif time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)   # hung (not aborted): parse here
                os.waitpid(pid, 0)
                return None
            else:
                time.sleep(0.001)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return None
    return b"".join(chunks).decode(errors="replace")


def parse_module(text: str, context: ir.Context, filename: str = "<input>",
                 guard: bool = True) -> ir.Module:
    """Parses and verifies; errors show file:line:col, the source line and a caret.
    With `guard` (text from outside), a forked child parses it first, so that
    input on which MLIR's parser aborts gives a ParseError, not a dead process."""
    src = text.splitlines()

    def describe(location: str, message: str) -> List[str]:
        m = re.search(r'"-":(\d+):(\d+)', location)
        if not m:
            return [f"{filename}: {message}"]
        row, col = int(m.group(1)), int(m.group(2))
        out = [f"{filename}:{row}:{col}: {message}"]
        if 0 < row <= len(src):
            out += ["    " + src[row - 1], "    " + " " * (col - 1) + "^"]
        return out

    if guard:
        aborted = _parser_aborts(text)
        if aborted is not None:
            lines = []
            for ln in aborted.splitlines():
                loc, sep, msg = ln.partition(": error: ")
                if sep:
                    lines += describe(loc, msg)
                elif ln.startswith("LLVM ERROR"):
                    lines.append(ln)
            raise ParseError(f"kfuse: {filename} is not valid MLIR (MLIR's parser aborts on "
                             f"it):\n  " + "\n  ".join(lines), diagnostics=lines)
    try:
        module = ir.Module.parse(text)
    except ir.MLIRError as e:  # type: ignore[attr-defined]
        lines = []
        for d in e.error_diagnostics:
            lines += describe(str(d.location), d.message)
        # (an op of a dialect kfuse does not load: say so, not only that
        # the text does not parse)
        unknown = sorted({m.group(1) for d in e.error_diagnostics for m in
                          [re.search(r"Dialect `([\w.]+)' not found for custom op", d.message)]
                          if m})
        hint = "".join(f"\n  kfuse does not support the '{name}' dialect: lower its ops to "
                       f"linalg, tensor, arith and math first, or leave them out of the "
                       f"program" for name in unknown)
        raise ParseError(f"kfuse: {filename} is not valid MLIR:\n  " + "\n  ".join(lines)
                         + hint, diagnostics=lines) from None
    lines = []
    # (a module whose text never names dense_resource has none: no walk)
    for location, message in (_resource_size_errors(module)
                              if "dense_resource" in text else []):
        lines += describe(location, message)
    if lines:
        raise ParseError(f"kfuse: {filename} is not valid MLIR:\n  " + "\n  ".join(lines),
                         diagnostics=lines)
    return module


def resource_blobs(module: ir.Module) -> Dict[str, bytes]:
    """The blobs of the module's `dialect_resources` section by key: each
    `dense_resource<key>`'s elements, past the blob's 4 bytes of alignment."""
    asm = module.operation.get_asm(large_elements_limit=None)
    start = asm.rfind("dialect_resources")
    if start < 0:
        return {}
    return {m.group(1) or m.group(2): bytes.fromhex(m.group(3))[4:] for m in
            re.finditer(r'(?:"([^"]+)"|([^\s":{}]+))\s*:\s*"0x([0-9A-Fa-f]*)"',
                        asm[start:])}


_RESOURCE_TYPEID = []


def _dense_resource_typeid():
    """The TypeID of DenseResourceElementsAttr (the bindings give it only
    through an instance: one parsed once, in a context of its own)."""
    if not _RESOURCE_TYPEID:
        with ir.Context():
            _RESOURCE_TYPEID.append(
                ir.Attribute.parse("dense_resource<probe> : tensor<1xf32>").typeid)
    return _RESOURCE_TYPEID[0]


def _resource_size_errors(module: ir.Module) -> List[Tuple[str, str]]:
    """(location, message) for each `dense_resource` constant whose blob does
    not hold its type's elements (MLIR's parser takes it; only translating
    to LLVM, or reading it for the GPU, finds out)."""
    found = []
    resource = _dense_resource_typeid()

    def visit(op):
        for name in op.attributes:
            attr = op.attributes[name]
            # (by type id: printing every attribute would print every inline
            # dense constant whole)
            if attr.typeid == resource:
                found.append((op, str(attr), attr))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    errors = []
    blobs = resource_blobs(module) if found else {}
    for op, text, attr in found:
        key = re.match(r"dense_resource<([^>]+)>", text).group(1).strip('"')
        try:
            shaped = ir.ShapedType(attr.type)
        except (ValueError, TypeError, AttributeError):
            continue
        if not shaped.has_static_shape:
            continue
        elem = shaped.element_type
        if isinstance(elem, ir.IntegerType):
            width = ir.IntegerType(elem).width
            size = 1 if width == 1 else (width + 7) // 8
        elif isinstance(elem, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
            size = {ir.F16Type: 2, ir.BF16Type: 2, ir.F32Type: 4,
                    ir.F64Type: 8}[type(elem)]
        else:
            continue
        need = size
        for d in shaped.shape:
            need *= d
        blob = blobs.get(key)
        if blob is None:
            errors.append((str(op.location), f"dense_resource<{key}> has no data in the "
                                             f"module's dialect_resources section"))
        elif len(blob) != need:
            errors.append((str(op.location), f"dense_resource<{key}> holds {len(blob)} "
                                             f"bytes, but {shaped} needs {need}"))
    return errors


def _classify(lines: List[str], message: str, repro: str):
    for line in lines:
        m = re.search(r"kfuse cannot generate code for '([^']+)'", line)
        if m:
            err = UnsupportedOpError(message)
            err.op = m.group(1)
            err.diagnostics, err.repro = lines, repro
            return err
    return CompileError(message, diagnostics=lines, repro=repro)


class StageTexts(Mapping):
    """The IR after each stage, by stage name, in order: kept as bytecode and
    printed when first read (printing a long program takes seven times as
    long as writing its bytecode, and most compiles never read a stage)."""

    def __init__(self):
        self._code: Dict[str, bytes] = {}
        self._text: Dict[str, str] = {}

    def keep(self, name: str, module: ir.Module) -> None:
        """Snapshots `module` as stage `name`."""
        code = io.BytesIO()
        module.operation.write_bytecode(code)
        self._code[name] = code.getvalue()

    def code(self, name: str) -> bytes:
        """Stage `name` as MLIR bytecode (what ir.Module.parse reads back
        without printing and parsing text: the CPU program's executable is
        built from its last stage's)."""
        return self._code[name]

    def __getitem__(self, name: str) -> str:
        if name not in self._text:
            code = self._code[name]     # (KeyError for a stage that is not here)
            with ir.Context():
                self._text[name] = str(ir.Module.parse(code))
        return self._text[name]

    def __iter__(self):
        return iter(self._code)

    def __len__(self):
        return len(self._code)


def run_stages(module: ir.Module, options: Options,
               after_stage: Optional[Callable[[str, ir.Module], None]] = None
               ) -> StageTexts:
    """Runs every stage on `module` in place; returns the IR after each
    (StageTexts), starting with 'input'. `after_stage(name, module)` sees the
    live module (and must leave it as it is: the next stage's input is the
    snapshot taken before it runs)."""
    texts = StageTexts()
    texts.keep("input", module)
    before = "input"
    for name, pipeline in options.stages():
        try:
            PassManager.parse(f"builtin.module({pipeline})").run(module.operation)
        except ir.MLIRError as e:  # type: ignore[attr-defined]
            lines = format_diagnostics(e.error_diagnostics)
            repro_dir = tempfile.mkdtemp(prefix="kfuse-repro-")
            path = os.path.join(repro_dir, f"{name}.input.mlir")
            with open(path, "w") as f:
                f.write(texts[before])
            repro = (f"{shlex.quote(fuse_opt_path())} {shlex.quote(path)} "
                     f"--pass-pipeline={shlex.quote(f'builtin.module({pipeline})')}")
            msg = (f"kfuse: stage '{name}' failed:\n  " + "\n  ".join(lines) +
                   f"\nreproduce with:\n  {repro}")
            raise _classify(lines, msg, repro) from None
        texts.keep(name, module)
        before = name
        if after_stage is not None:
            after_stage(name, module)
    return texts
