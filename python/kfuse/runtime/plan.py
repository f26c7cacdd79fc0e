"""The launch plan of a compiled kfuse program (``plan.json``) and argument checking.

Pure Python (json + numpy via kfuse.dtypes): no MLIR, no CUDA. The CPU target reuses
:class:`LaunchPlan` and :meth:`LaunchPlan.check_call`.

Schema (version 1), every field required unless marked optional::

    {
      "format": "kfuse-plan", "version": 1,
      "name": str (non-empty), "target": "cuda" | "cpu",
      "chip": str                      (required for target "cuda", optional otherwise),
      "ptx": str                       (file name relative to the plan directory;
                                        required for target "cuda", optional otherwise),
      "inputs":  [{"name": str, "shape": [int >= 0, ...], "dtype": kfuse dtype name}],
      "outputs": [ same as inputs ],
      "buffers": [{"kind": "input" | "output", "index": int, "shape": [...], "dtype": str}
                  | {"kind": "temp", "shape": [...], "dtype": str}
                  | {"kind": "counter", "shape": [...], "dtype": "i32"}
                  | {"kind": "status", "shape": [2 * len(guards)], "dtype": "i64"}
                  | {"kind": "const", "shape": [...], "dtype": str, "file": "const0.npy"}],
      "steps":   [{"op": "launch", "kernel": str, "grid": [3 ints >= 1],
                   "block": [3 ints >= 1], "smem": int >= 0 (optional, default 0),
                   "args": [{"buffer": int} | {"scalar": number, "type": i32|i64|f32|f64|index}],
                   "align": power of two >= 1 (optional, default 1),
                   "programmatic": bool (optional, default false: launched
                                   before the launch it follows ends; only
                                   directly after a launch, and its kernel
                                   starts with griddepcontrol.wait),
                   "persistent": int >= 0 (optional, default 0: the grid as
                                   planned; n: a persistent kernel of n clusters
                                   of grid[0] / n blocks, its .reqnctapercluster
                                   (1: plain blocks), grid [x, 1, 1], which
                                   computes the same over any number of them:
                                   the runtime launches as many as the device
                                   holds at once, if fewer),
                   "packs": [[str, int >= 1, int >= 1], ...] (optional: the
                                   kernels a packed launch runs side by side, in
                                   block order, each its name, blocks and threads;
                                   their blocks add up to grid[0] and none has more
                                   threads than block[0]. For the report only),
                   "as": str (optional: the name the launch's kernel was
                                   generated with, where the launch runs
                                   another kernel of the same code,
                                   "kernel"; for the report only)}
                  | {"op": "copy", "src": int, "dst": int}],
      "guards":  [str, ...]            (optional: the message of each pair of status words)
    }

Every input and every output is named by exactly one buffer of its kind, with the same
shape and dtype. A counter buffer (32-bit counts that the kernels find zero and leave
zero: the last block of a split row to store its partial finishes the row) persists
between calls: one per device and stream, zeroed once; a copy never writes one. A
status buffer (at most one) holds two 64-bit words per entry of ``guards``: a kernel
sets the first to 1 when a gather of its reads at an index out of range, and the second
to that index; the runtime reports the messages (and indices) of the guards a call set,
then zeroes the words; it persists like a counter. A CPU plan lists its ``guards`` too:
their words are the LLVM module's ``kfuse_status``. Unknown top-level keys are kept (``LaunchPlan.extra``) and written back.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Tuple, Union

from .. import dtypes
from ..dtypes import DType
from ..errors import ArtifactError, CallError, GuardError

FORMAT = "kfuse-plan"
VERSION = 1
PLAN_FILE = "plan.json"
TARGETS = ("cuda", "cpu")
BUFFER_KINDS = ("input", "output", "temp", "const", "counter", "status")
SCALAR_TYPES = ("i32", "i64", "f32", "f64", "index")

_KNOWN_KEYS = {"format", "version", "name", "target", "chip", "ptx", "inputs", "outputs",
               "buffers", "steps", "guards"}


# --------------------------------------------------------------------------- records

class _Sized:
    """Element count and byte size of a record with `shape` and `dtype`."""

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize


@dataclass(frozen=True)
class TensorSpec(_Sized):
    """One program input or output."""
    name: str
    shape: Tuple[int, ...]
    dtype: DType

    def to_json(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype.name}


@dataclass(frozen=True)
class BufferSpec(_Sized):
    """One device buffer a step refers to: an input, an output, a per-call temporary,
    a constant (a tensor constant of the program, stored as .npy next to the plan
    and uploaded once per device) or a counter (i32 counts the kernels find zero
    and leave zero; one per device and stream) or the status words of the plan's
    guards (i32, kept like counters)."""
    kind: str                       # "input", "output", "temp", "const", "counter", "status"
    shape: Tuple[int, ...]
    dtype: DType
    index: Optional[int] = None     # index into plan.inputs / plan.outputs (None for temp)
    file: Optional[str] = None      # const only: .npy file in the plan directory

    def to_json(self) -> dict:
        d = {"kind": self.kind}
        if self.index is not None:
            d["index"] = self.index
        d["shape"] = list(self.shape)
        d["dtype"] = self.dtype.name
        if self.file is not None:
            d["file"] = self.file
        return d


@dataclass(frozen=True)
class BufferArg:
    buffer: int

    def to_json(self) -> dict:
        return {"buffer": self.buffer}


@dataclass(frozen=True)
class ScalarArg:
    value: Union[int, float]
    type: str                       # one of SCALAR_TYPES

    def to_json(self) -> dict:
        return {"scalar": self.value, "type": self.type}


@dataclass(frozen=True)
class LaunchStep:
    kernel: str
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    args: Tuple[Union[BufferArg, ScalarArg], ...]
    smem: int = 0
    align: int = 1
    programmatic: bool = False  # launched before the previous launch ends (sm_90+)
    persistent: int = 0  # a persistent kernel's clusters (0: not one), see the schema
    # the kernels a packed launch runs (name, blocks, threads), in block order
    packs: Tuple[Tuple[str, int, int], ...] = ()
    # the name its kernel was generated with, where it runs another kernel
    # of the same code (fusion-dedup-kernels; "": its own)
    alias: str = ""
    op: str = field(default="launch", init=False)

    @property
    def name(self) -> str:
        """The launch's own kernel name (the one it was generated with)."""
        return self.alias or self.kernel

    def to_json(self) -> dict:
        d = {"op": "launch", "kernel": self.kernel, "grid": list(self.grid),
             "block": list(self.block), "smem": self.smem,
             "args": [a.to_json() for a in self.args], "align": self.align}
        if self.programmatic:
            d["programmatic"] = True
        if self.persistent:
            d["persistent"] = self.persistent
        if self.packs:
            d["packs"] = [list(p) for p in self.packs]
        if self.alias:
            d["as"] = self.alias
        return d

    @property
    def cluster_blocks(self) -> int:
        """The blocks of a persistent launch's clusters (1 for other launches)."""
        return self.grid[0] // self.persistent if self.persistent else 1

    @property
    def persistent_units(self) -> str:
        """What a persistent launch's `persistent` counts: clusters, or blocks."""
        return "clusters" if self.cluster_blocks > 1 else "blocks"

    def grid_on(self, resident: Optional[int]) -> Tuple[int, int, int]:
        """The grid this launch runs with on a device that holds `resident` of its
        clusters at once (None: not known): a persistent launch's clusters cut to
        those, never more than planned; any other launch's grid as planned."""
        if not self.persistent or resident is None or resident < 1 \
                or resident >= self.persistent:
            return self.grid
        return (resident * self.cluster_blocks, 1, 1)


@dataclass(frozen=True)
class CopyStep:
    src: int
    dst: int
    op: str = field(default="copy", init=False)

    def to_json(self) -> dict:
        return {"op": "copy", "src": self.src, "dst": self.dst}


Step = Union[LaunchStep, CopyStep]


# --------------------------------------------------------------------------- validation helpers

def _fail(where: str, msg: str):
    raise ArtifactError(f"invalid plan: {where}: {msg}")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _req(d: dict, key: str, where: str):
    if not isinstance(d, dict):
        _fail(where, f"expected an object, got {type(d).__name__}")
    if key not in d:
        _fail(f"{where}.{key}" if where else key, "missing field")
    return d[key]


def _str(d: dict, key: str, where: str, nonempty: bool = True) -> str:
    v = _req(d, key, where)
    path = f"{where}.{key}" if where else key
    if not isinstance(v, str) or (nonempty and not v):
        _fail(path, f"expected a non-empty string, got {v!r}")
    return v


def _int(d: dict, key: str, where: str, lo: Optional[int] = None, default=None) -> int:
    path = f"{where}.{key}" if where else key
    if default is not None and key not in d:
        return default
    v = _req(d, key, where)
    if not _is_int(v):
        _fail(path, f"expected an integer, got {v!r}")
    if lo is not None and v < lo:
        _fail(path, f"must be >= {lo}, got {v}")
    return v


def _list(d: dict, key: str, where: str) -> list:
    v = _req(d, key, where)
    if not isinstance(v, list):
        _fail(f"{where}.{key}" if where else key, f"expected a list, got {type(v).__name__}")
    return v


def _shape(d: dict, where: str) -> Tuple[int, ...]:
    v = _list(d, "shape", where)
    for i, s in enumerate(v):
        if not _is_int(s) or s < 0:
            _fail(f"{where}.shape[{i}]", f"expected a non-negative integer, got {s!r}")
    return tuple(v)


def _dtype(d: dict, where: str) -> DType:
    v = _req(d, "dtype", where)
    if not isinstance(v, str) or v not in dtypes.ALL:
        _fail(f"{where}.dtype", f"unknown dtype {v!r} (known: {', '.join(dtypes.ALL)})")
    return dtypes.ALL[v]


def _dim3(d: dict, key: str, where: str) -> Tuple[int, int, int]:
    v = _list(d, key, where)
    if len(v) != 3:
        _fail(f"{where}.{key}", f"expected 3 integers, got {v!r}")
    for i, s in enumerate(v):
        if not _is_int(s) or s < 1:
            _fail(f"{where}.{key}[{i}]", f"expected a positive integer, got {s!r}")
    return tuple(v)


_INT_RANGE = {"i32": (-(1 << 31), (1 << 31) - 1), "i64": (-(1 << 63), (1 << 63) - 1),
              "index": (-(1 << 63), (1 << 63) - 1)}


def _tensor_spec(d, where: str) -> TensorSpec:
    return TensorSpec(_str(d, "name", where), _shape(d, where), _dtype(d, where))


def _buffer_spec(d, where: str, n_in: int, n_out: int) -> BufferSpec:
    kind = _req(d, "kind", where)
    if kind not in BUFFER_KINDS:
        _fail(f"{where}.kind", f"expected one of {', '.join(BUFFER_KINDS)}, got {kind!r}")
    index = None
    if kind == "const":
        if "index" in d:
            _fail(f"{where}.index", "a const buffer has no index")
        f = _str(d, "file", where)
        if os.path.isabs(f) or ".." in f.replace("\\", "/").split("/"):
            _fail(f"{where}.file", f"must be a file name inside the plan directory, got {f!r}")
        return BufferSpec(kind, _shape(d, where), _dtype(d, where), None, f)
    if kind in ("counter", "status"):
        if "index" in d:
            _fail(f"{where}.index", f"a {kind} buffer has no index")
        dt = _dtype(d, where)
        word = "i32" if kind == "counter" else "i64"
        if dt.name != word:
            _fail(f"{where}.dtype", f"a {kind} buffer holds {word} words, got {dt.name}")
        return BufferSpec(kind, _shape(d, where), dt)
    if kind != "temp":
        index = _int(d, "index", where, lo=0)
        n = n_in if kind == "input" else n_out
        if index >= n:
            _fail(f"{where}.index", f"{kind} index {index} out of range: the plan has {n} {kind}s")
    elif "index" in d:
        _fail(f"{where}.index", "a temp buffer has no index")
    return BufferSpec(kind, _shape(d, where), _dtype(d, where), index)


def _arg(d, where: str, n_buf: int):
    if not isinstance(d, dict):
        _fail(where, f"expected an object, got {d!r}")
    if "buffer" in d:
        b = d["buffer"]
        if not _is_int(b) or not 0 <= b < n_buf:
            _fail(f"{where}.buffer", f"buffer index {b!r} out of range: the plan has {n_buf} buffers")
        return BufferArg(b)
    if "scalar" in d:
        t = _req(d, "type", where)
        if t not in SCALAR_TYPES:
            _fail(f"{where}.type", f"expected one of {', '.join(SCALAR_TYPES)}, got {t!r}")
        v = d["scalar"]
        if t in _INT_RANGE:
            lo, hi = _INT_RANGE[t]
            if not _is_int(v) or not lo <= v <= hi:
                _fail(f"{where}.scalar", f"expected a {t} integer, got {v!r}")
        else:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                _fail(f"{where}.scalar", f"expected a number, got {v!r}")
            v = float(v)
        return ScalarArg(v, t)
    _fail(where, "expected {\"buffer\": index} or {\"scalar\": value, \"type\": type}")


def _step(d, where: str, buffers: Sequence[BufferSpec]) -> Step:
    op = _req(d, "op", where)
    n_buf = len(buffers)
    if op == "launch":
        kernel = _str(d, "kernel", where)
        grid = _dim3(d, "grid", where)
        block = _dim3(d, "block", where)
        if math.prod(block) > 1024:
            _fail(f"{where}.block", f"{list(block)} has more than 1024 threads")
        smem = _int(d, "smem", where, lo=0, default=0)
        args = tuple(_arg(a, f"{where}.args[{i}]", n_buf)
                     for i, a in enumerate(_list(d, "args", where)))
        align = _int(d, "align", where, lo=1, default=1)
        if align & (align - 1):
            _fail(f"{where}.align", f"must be a power of two, got {align}")
        programmatic = d.get("programmatic", False)
        if not isinstance(programmatic, bool):
            _fail(f"{where}.programmatic", f"expected true or false, got {programmatic!r}")
        persistent = _int(d, "persistent", where, lo=0, default=0)
        if persistent and (grid[1:] != (1, 1) or grid[0] % persistent):
            _fail(f"{where}.persistent", f"{persistent} clusters do not divide grid "
                                         f"{list(grid)} (a persistent launch's grid is "
                                         f"[clusters x blocks a cluster, 1, 1])")
        packs = []
        for i, p in enumerate(_list(d, "packs", where) if "packs" in d else []):
            if not (isinstance(p, list) and len(p) == 3 and isinstance(p[0], str)
                    and _is_int(p[1]) and p[1] >= 1 and _is_int(p[2]) and p[2] >= 1
                    and p[2] <= block[0]):
                _fail(f"{where}.packs[{i}]", f"expected [kernel, blocks >= 1, threads "
                                             f"1 to {block[0]}], got {p!r}")
            packs.append((p[0], p[1], p[2]))
        if packs and (grid[1:] != (1, 1) or sum(p[1] for p in packs) != grid[0]):
            _fail(f"{where}.packs", f"the packed kernels' blocks add up to "
                                    f"{sum(p[1] for p in packs)}, not grid {list(grid)}")
        alias = _str(d, "as", where) if "as" in d else ""
        return LaunchStep(kernel, grid, block, args, smem, align, programmatic, persistent,
                          tuple(packs), alias)
    if op == "copy":
        src = _int(d, "src", where, lo=0)
        dst = _int(d, "dst", where, lo=0)
        for key, b in (("src", src), ("dst", dst)):
            if b >= n_buf:
                _fail(f"{where}.{key}", f"buffer index {b} out of range: the plan has {n_buf} buffers")
        if buffers[dst].kind in ("input", "const", "counter", "status"):
            kind = buffers[dst].kind
            _fail(f"{where}.dst", f"a copy must not write into {'an' if kind[0] in 'aeiou' else 'a'} "
                                  f"{kind} buffer")
        if buffers[dst].nbytes < buffers[src].nbytes:
            _fail(f"{where}.dst", f"buffer {dst} ({buffers[dst].nbytes} bytes) is smaller than "
                                  f"source buffer {src} ({buffers[src].nbytes} bytes)")
        return CopyStep(src, dst)
    _fail(f"{where}.op", f"unknown step op {op!r} (expected 'launch' or 'copy')")


# --------------------------------------------------------------------------- argument checking

def dtype_label(dt) -> str:
    """How an argument's dtype is spelled in messages: the library's own name (float16)."""
    if isinstance(dt, DType):
        return dt.name
    name = getattr(dt, "name", None)
    if isinstance(name, str):
        return name
    return str(dt).replace("torch.", "")


def describe_array(a) -> Tuple[Tuple[int, ...], Any]:
    """Default ``describe``: (shape, dtype) of anything with .shape and .dtype
    (numpy, torch, cupy, jax arrays). The dtype is returned as the library's object."""
    shape = getattr(a, "shape", None)
    dt = getattr(a, "dtype", None)
    if shape is None or dt is None:
        raise CallError(f"expected an array with .shape and .dtype, got {type(a).__name__}")
    return tuple(int(s) for s in shape), dt


def _as_dtype(dt) -> Optional[DType]:
    if isinstance(dt, DType):
        return dt
    try:
        return dtypes.get(dt)
    except (KeyError, TypeError, ValueError):
        return None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# --------------------------------------------------------------------------- the plan

class HoldsPlan:
    """The signature of an object that runs a LaunchPlan held as ``plan``."""

    @property
    def inputs(self):
        return self.plan.inputs

    @property
    def outputs(self):
        return self.plan.outputs


@dataclass
class LaunchPlan:
    name: str
    target: str
    inputs: Tuple[TensorSpec, ...]
    outputs: Tuple[TensorSpec, ...]
    buffers: Tuple[BufferSpec, ...]
    steps: Tuple[Step, ...]
    chip: Optional[str] = None
    ptx: Optional[str] = None
    extra: dict = field(default_factory=dict)   # unknown top-level keys, kept verbatim
    guards: Tuple[str, ...] = ()    # the message of each status word
    format: str = FORMAT
    version: int = VERSION

    # ---- (de)serialisation

    @classmethod
    def from_json(cls, data: Union[str, bytes, dict]) -> "LaunchPlan":
        """Parses and validates a plan (a JSON string or an already-decoded dict).
        Raises ArtifactError naming the first missing or invalid field."""
        if isinstance(data, (str, bytes)):
            try:
                data = json.loads(data)
            except ValueError as e:
                raise ArtifactError(f"invalid plan: not valid JSON: {e}") from None
        if not isinstance(data, dict):
            _fail("plan", f"expected a JSON object, got {type(data).__name__}")
        fmt = _req(data, "format", "")
        if fmt != FORMAT:
            _fail("format", f"expected {FORMAT!r}, got {fmt!r}")
        version = _req(data, "version", "")
        if not _is_int(version) or version != VERSION:
            _fail("version", f"this kfuse reads plan version {VERSION}, got {version!r}")
        name = _str(data, "name", "")
        target = _req(data, "target", "")
        if target not in TARGETS:
            _fail("target", f"expected one of {', '.join(TARGETS)}, got {target!r}")
        chip = ptx = None
        if target == "cuda" or "chip" in data:
            chip = _str(data, "chip", "")
        if target == "cuda" or "ptx" in data:
            ptx = _str(data, "ptx", "")
            if os.path.isabs(ptx) or ".." in ptx.replace("\\", "/").split("/"):
                _fail("ptx", f"must be a file name inside the plan directory, got {ptx!r}")
        inputs = tuple(_tensor_spec(d, f"inputs[{i}]") for i, d in enumerate(_list(data, "inputs", "")))
        outputs = tuple(_tensor_spec(d, f"outputs[{i}]") for i, d in enumerate(_list(data, "outputs", "")))
        for kind, specs in (("inputs", inputs), ("outputs", outputs)):
            seen = set()
            for i, s in enumerate(specs):
                if s.name in seen:
                    _fail(f"{kind}[{i}].name", f"duplicate name {s.name!r}")
                seen.add(s.name)
        buffers = tuple(_buffer_spec(d, f"buffers[{i}]", len(inputs), len(outputs))
                        for i, d in enumerate(_list(data, "buffers", "")))
        for kind, specs in (("input", inputs), ("output", outputs)):
            bound = {}
            for bi, b in enumerate(buffers):
                if b.kind != kind:
                    continue
                if b.index in bound:
                    _fail(f"buffers[{bi}].index", f"{kind} {b.index} is already buffer {bound[b.index]}")
                bound[b.index] = bi
                s = specs[b.index]
                if b.shape != s.shape:
                    _fail(f"buffers[{bi}].shape", f"{list(b.shape)} differs from {kind} "
                                                  f"{s.name!r} shape {list(s.shape)}")
                if b.dtype != s.dtype:
                    _fail(f"buffers[{bi}].dtype", f"{b.dtype.name} differs from {kind} "
                                                  f"{s.name!r} dtype {s.dtype.name}")
            for i, s in enumerate(specs):
                if i not in bound:
                    _fail("buffers", f"no buffer for {kind} {i} ({s.name!r})")
        steps = tuple(_step(d, f"steps[{i}]", buffers) for i, d in enumerate(_list(data, "steps", "")))
        for i, st in enumerate(steps):
            if getattr(st, "programmatic", False) and (i == 0 or steps[i - 1].op != "launch"):
                _fail(f"steps[{i}].programmatic", "a programmatic launch must directly "
                                                  "follow another launch")
        guards = data.get("guards", [])
        if not isinstance(guards, list) or not all(isinstance(g, str) and g for g in guards):
            _fail("guards", f"expected a list of non-empty strings, got {guards!r}")
        status = [i for i, b in enumerate(buffers) if b.kind == "status"]
        if len(status) > 1:
            _fail(f"buffers[{status[1]}]", "a plan has at most one status buffer")
        if status and buffers[status[0]].shape != (2 * len(guards),):
            _fail(f"buffers[{status[0]}].shape",
                  f"a status buffer holds two words per guard ({2 * len(guards)}), got "
                  f"{list(buffers[status[0]].shape)}")
        if target == "cuda" and guards and not status:
            _fail("guards", "a CUDA plan with guards needs a status buffer")
        extra = {k: v for k, v in data.items() if k not in _KNOWN_KEYS}
        return cls(name=name, target=target, inputs=inputs, outputs=outputs, buffers=buffers,
                   steps=steps, chip=chip, ptx=ptx, extra=extra, guards=tuple(guards))

    def to_dict(self) -> dict:
        d = {"format": self.format, "version": self.version, "name": self.name,
             "target": self.target}
        if self.chip is not None:
            d["chip"] = self.chip
        if self.ptx is not None:
            d["ptx"] = self.ptx
        d["inputs"] = [s.to_json() for s in self.inputs]
        d["outputs"] = [s.to_json() for s in self.outputs]
        d["buffers"] = [b.to_json() for b in self.buffers]
        d["steps"] = [s.to_json() for s in self.steps]
        if self.guards:
            d["guards"] = list(self.guards)
        for k, v in self.extra.items():
            d.setdefault(k, v)
        return d

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "LaunchPlan":
        """Reads ``<path>/plan.json`` (``path`` may also name the plan.json file itself)
        and checks that the files it names exist."""
        path = os.fspath(path)
        plan_dir, plan_file = (os.path.dirname(path) or ".", path) if os.path.isfile(path) \
            else (path, os.path.join(path, PLAN_FILE))
        if not os.path.isdir(plan_dir):
            raise ArtifactError(f"{path}: no such program directory")
        if not os.path.isfile(plan_file):
            raise ArtifactError(f"{plan_dir}: missing {PLAN_FILE} (not a compiled kfuse program?)")
        try:
            with open(plan_file, "rb") as f:
                text = f.read()
        except OSError as e:
            raise ArtifactError(f"{plan_file}: cannot read: {e}") from None
        try:
            plan = cls.from_json(text)
        except ArtifactError as e:
            raise ArtifactError(f"{plan_file}: {e}") from None
        if plan.ptx is not None and not os.path.isfile(os.path.join(plan_dir, plan.ptx)):
            raise ArtifactError(f"{plan_file}: ptx: file {plan.ptx!r} is missing from {plan_dir}")
        for b in plan.buffers:
            if b.kind == "const" and not os.path.isfile(os.path.join(plan_dir, b.file)):
                raise ArtifactError(f"{plan_file}: constant file {b.file!r} is missing from "
                                    f"{plan_dir}")
        return plan

    def save(self, path: Union[str, os.PathLike]) -> str:
        """Writes ``<path>/plan.json`` (creating the directory); returns the file path."""
        path = os.fspath(path)
        os.makedirs(path, exist_ok=True)
        plan_file = os.path.join(path, PLAN_FILE)
        tmp = plan_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(self.to_json())
            f.write("\n")
        os.replace(tmp, plan_file)
        return plan_file

    def validate(self) -> "LaunchPlan":
        """Checks a plan built in Python (not read from JSON) by the same rules as
        from_json; raises ArtifactError naming the first invalid field. Returns self."""
        LaunchPlan.from_json(self.to_dict())
        return self

    # ---- helpers

    @property
    def kernels(self) -> Tuple[str, ...]:
        """Kernel names in first-use order."""
        seen = {}
        for s in self.steps:
            if isinstance(s, LaunchStep):
                seen.setdefault(s.kernel, None)
        return tuple(seen)

    def signature(self) -> str:
        ins = ", ".join(f"{s.name}: {s.dtype.name}{list(s.shape)}" for s in self.inputs)
        outs = ", ".join(f"{s.name}: {s.dtype.name}{list(s.shape)}" for s in self.outputs)
        return f"{self.name}({ins}) -> ({outs})"

    def constant_arrays(self, constants=None, path: Optional[str] = None) -> list:
        """(buffer index, contiguous numpy array) of every constant buffer: from
        `constants` (by file name) or the .npy files in `path`."""
        import numpy as np
        out = []
        for i, b in enumerate(self.buffers):
            if b.kind != "const":
                continue
            if constants is not None and b.file in constants:
                data = constants[b.file]
            elif path is not None:
                try:
                    data = np.load(os.path.join(path, b.file), allow_pickle=False)
                except (OSError, ValueError) as e:
                    raise ArtifactError(f"{path}: cannot read constant {b.file!r}: {e}") from None
            else:
                raise ArtifactError(f"{self.name!r}: no data for constant buffer {b.file!r}")
            data = np.ascontiguousarray(data)
            if data.nbytes != b.nbytes:
                raise ArtifactError(f"{self.name!r}: constant {b.file!r} holds {data.nbytes} "
                                    f"bytes, the plan says {b.nbytes}")
            out.append((i, data))
        return out

    def buffer_label(self, index: int) -> str:
        """'input 'x'', 'output 'y'' or 'temp buffer 2', for messages."""
        b = self.buffers[index]
        if b.kind == "input":
            return f"input {self.inputs[b.index].name!r}"
        if b.kind == "output":
            return f"output {self.outputs[b.index].name!r}"
        return f"{b.kind} buffer {index}"

    def guard_error(self, words, when: str = "") -> Optional[GuardError]:
        """The GuardError for the status words a call left (a sequence of ints, two
        per guard: whether it failed, and an index that did, 0 where none was
        recorded), or None when none is set. `when` qualifies the call in the
        message."""
        failed, indices = [], []
        for k, g in enumerate(self.guards):
            if words[2 * k]:
                failed.append(g)
                index = int(words[2 * k + 1])
                indices.append(index if index else None)
        if not failed:
            return None
        lines = "".join(f"\n  - {g}" + (f": index {i}" if i is not None else "")
                        for g, i in zip(failed, indices))
        return GuardError(f"{self.name!r}{when} read a tensor at an index outside it, so "
                          f"its outputs are not meaningful (the reads took an element "
                          f"inside instead):{lines}", failed, indices)

    # ---- argument checking, shared by every target

    def check_arg(self, spec: TensorSpec, arg, describe: Callable = describe_array,
                  role: str = "input") -> None:
        """Raises CallError unless ``arg`` has exactly ``spec``'s shape and dtype."""
        shape, dt = describe(arg)
        # (checked on every call: the common case, a tuple of ints and the very
        # DType, first)
        if shape != spec.shape:
            shape = tuple(int(s) for s in shape)
            if shape != spec.shape:
                raise CallError(f"{role} {spec.name!r} has shape {shape} but the program "
                                f"{self.name!r} was compiled for {spec.shape}")
        if dt is not spec.dtype and _as_dtype(dt) != spec.dtype:
            raise CallError(f"{role} {spec.name!r} has dtype {dtype_label(dt)} but the program "
                            f"{self.name!r} was compiled for {spec.dtype.name}")

    def check_call(self, args: Sequence, describe: Callable = describe_array) -> None:
        """Checks count, shapes and dtypes of the inputs of a call.

        ``describe(arg) -> (shape tuple, dtype)`` where dtype is a kfuse DType or anything
        ``kfuse.dtypes.get`` understands (numpy/torch dtype); it may itself raise CallError."""
        self._check_count(args, self.inputs, "input", "got")
        for spec, arg in zip(self.inputs, args):
            self.check_arg(spec, arg, describe, "input")

    def check_outputs(self, outs: Sequence, describe: Callable = describe_array) -> None:
        """Like check_call, for caller-provided outputs (``out=``)."""
        self._check_count(outs, self.outputs, "output", "out= got")
        for spec, arg in zip(self.outputs, outs):
            self.check_arg(spec, arg, describe, "output")

    def check_disjoint_outputs(self, in_spans: Sequence, out_spans: Sequence) -> None:
        """Raises CallError when an output given with ``out=`` shares memory with an
        input or another output: kernels read inputs while they write outputs, so an
        aliased output would give wrong results silently. A span is ``(space, start)``
        (space: anything naming one address space, e.g. a device ordinal; start: the
        first byte) or None for an argument that is staged through a copy."""
        def ranges(specs, spans, role):
            return [(role, spec.name, span[0], span[1], span[1] + spec.nbytes)
                    for spec, span in zip(specs, spans) if span is not None]
        ins = ranges(self.inputs, in_spans, "input")
        outs = ranges(self.outputs, out_spans, "output")
        for i, (_, name, space, lo, hi) in enumerate(outs):
            for role, other, space2, lo2, hi2 in ins + outs[:i]:
                if space == space2 and lo < hi2 and lo2 < hi:
                    raise CallError(f"output {name!r} (out=) shares memory with {role} "
                                    f"{other!r}; the kernels read their inputs while "
                                    f"writing outputs, so pass a separate array")

    def _check_count(self, args, specs, word, got):
        if len(args) != len(specs):
            names = ", ".join(s.name for s in specs)
            raise CallError(f"{self.name} takes {_plural(len(specs), word)} ({names}) "
                            f"but {got} {len(args)}")
