"""The fusion report: what runs together, what it costs in HBM traffic, and why.

'Before' counts every linalg op of the input program (and every tensor.pad and
tensor.extract_slice, which move data) as its own kernel that reads its tensor
inputs, and the outs its body reads (an accumulator: a matmul's C), and writes
its results (the unfused baseline);
'after' counts every fusion.group as one kernel that reads its inputs once and
writes its results once, tensor constants (weights) included. Bytes are exact
for static shapes: broadcast operands count at their own size, which assumes
caches absorb re-reads. A group input read only through indexing maps (views
of it included) counts the boxes its maps reach (q @ k^T reading two aligned
thirds of qkv is charged two thirds), and slices of an argument left as
views count the union of what they reach; tensors read through a gather
(pads, other unaligned slices) count whole, an upper bound.

'Launched' (CUDA) counts what the kernels code generation made move: for each
launch, every buffer its kernel loads from or stores to (see
FusionReport.set_launch_traffic). It exceeds 'after' where a group runs as
several kernels: the partials between them, and inputs a later kernel reads
again (a long row's sum, then its scaled store)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from mlir import ir

from . import dtypes
from .signature import entry_function


_FLOAT_BYTES = ((ir.F32Type, 4), (ir.F16Type, 2), (ir.BF16Type, 2), (ir.F64Type, 8))


def _element_bytes(elem: ir.Type) -> int:
    # (by class where it can: printing the type takes most of a call)
    for cls, size in _FLOAT_BYTES:
        if isinstance(elem, cls):
            return size
    return dtypes.get(str(elem)).itemsize


def value_bytes(v: ir.Value) -> int:
    t = v.type
    if not isinstance(t, ir.ShapedType) and not isinstance(t, ir.RankedTensorType):
        return 0
    shaped = ir.ShapedType(t)
    n = 1
    for d in shaped.shape:
        n *= d
    return n * _element_bytes(shaped.element_type)


class _Op:
    """What the report reads of one op, read through the bindings once (an
    op's name, operands and body ops are each a call into MLIR, and the
    report asks several questions of each of thousands of ops)."""

    __slots__ = ("op", "name", "operands", "n_in", "inner", "gathered")

    def __init__(self, op):
        self.op = op
        self.name = op.operation.name
        self.operands = list(op.operands)
        self.n_in = len(self.operands) - len(op.results)
        # (the ops of its regions, and the tensors its body reads with
        # tensor.extract: a gather, as a rewritten tensor.pad does, read like
        # operands)
        self.inner = [inner for region in op.regions for blk in region.blocks
                      for inner in blk.operations]
        self.gathered = [inner.operands[0] for inner in self.inner
                         if inner.operation.name == "tensor.extract"]


def _payload(op: _Op) -> List[str]:
    """The arithmetic of a linalg op's body, e.g. ['math.exp', 'arith.addf']."""
    names = []
    gathers = bool(op.gathered)
    for inner in op.inner:
        n = inner.operation.name
        if n in ("linalg.yield", "arith.constant", "arith.extf", "arith.truncf"):
            continue
        # Position arithmetic of a gather (indices, bounds tests) is not
        # payload.
        if gathers and (n == "linalg.index" or inner.results and all(
                str(r.type) in ("index", "i1") for r in inner.results)):
            continue
        names.append(n)
    return names


def _is_kernel_op(op) -> bool:
    n = op.operation.name
    return ((n.startswith("linalg.") and n not in ("linalg.yield", "linalg.index"))
            or n in ("tensor.pad", "tensor.extract_slice"))


def _constant_bytes(block) -> int:
    """Tensor constants a group's body uses (weights cloned into the group):
    they live in device memory and are read like inputs. Splat constants
    become scalars and cost nothing."""
    total = 0
    for o in block.operations:
        if o.operation.name != "arith.constant" or not isinstance(
                o.result.type, ir.RankedTensorType):
            continue
        value = o.attributes["value"]
        if isinstance(value, ir.DenseElementsAttr) and value.is_splat:
            continue
        total += value_bytes(o.result)
    return total


def _reads(o: _Op) -> int:
    total, seen = 0, set()
    inits = set()
    op = o.op
    if o.name.startswith("linalg."):
        # DPS inits are read only where the body reads them: an accumulator
        # (a matmul's C, a reduction's start), not an elementwise op's outs
        # (from tensor.empty).
        n_in = o.n_in
        body = (op.regions[0].blocks[0] if len(op.regions) and len(op.regions[0].blocks)
                else None)
        args = body.arguments if body is not None else None
        for k, v in enumerate(o.operands[n_in:]):
            if args is None or len(args) <= n_in + k or \
                    not any(True for _ in args[n_in + k].uses):
                inits.add(v)
    for v in o.operands + (o.gathered if o.name.startswith("linalg.") else []):
        if v in seen or v in inits:
            continue
        seen.add(v)
        total += value_bytes(v)
    return total


def _interval(e, ranges):
    """(lo, hi) of affine expression ``e`` over loops 0 <= d_i < ranges[i], or
    None when unknown (a symbol, a product of two loop indices)."""
    if isinstance(e, ir.AffineDimExpr):
        r = ranges[e.position]
        return None if r is None else (0, r - 1)
    if isinstance(e, ir.AffineConstantExpr):
        return (e.value, e.value)
    if not isinstance(e, ir.AffineBinaryExpr):
        return None
    a, b = _interval(e.lhs, ranges), _interval(e.rhs, ranges)
    if a is None or b is None:
        return None
    if isinstance(e, ir.AffineAddExpr):
        return (a[0] + b[0], a[1] + b[1])
    if b[0] != b[1]:
        return None  # (a product or division by a loop index)
    c = b[0]
    if isinstance(e, ir.AffineMulExpr):
        return (min(a[0] * c, a[1] * c), max(a[0] * c, a[1] * c))
    if c <= 0:
        return None
    if isinstance(e, ir.AffineFloorDivExpr):
        return (a[0] // c, a[1] // c)
    if isinstance(e, ir.AffineCeilDivExpr):
        return (-(-a[0] // c), -(-a[1] // c))
    if isinstance(e, ir.AffineModExpr):
        return (a[0] % c, a[1] % c) if a[0] // c == a[1] // c else (0, c - 1)
    return None


def _loop_ranges(op, maps):
    """Static loop ranges of a linalg.generic from the operands its maps
    index with plain loop indices."""
    ranges = [None] * maps[0].n_dims
    for v, m in zip(op.operands, maps):
        if not isinstance(v.type, ir.ShapedType):
            continue
        shape = ir.ShapedType(v.type).shape
        for size, e in zip(shape, m.results):
            if isinstance(e, ir.AffineDimExpr):
                ranges[e.position] = size
    return ranges


def _elements_read(value, chain=(), generics=None) -> list:
    """What a group's body reads of ``value`` (through views): one
    (key, elements) per distinct access, or None for a whole read.
    ``generics`` caches each linalg.generic's maps and loop ranges (a
    generic reading thousands of tensors would otherwise be read again for
    each)."""
    if generics is None:
        generics = {}
    accesses = []
    for use in value.uses:
        owner = use.owner
        name = owner.operation.name
        if name in ("tensor.expand_shape", "tensor.collapse_shape"):
            sub = _elements_read(owner.results[0], chain + (str(owner.results[0].type),),
                                 generics)
            if sub is None:
                return None
            accesses += sub
            continue
        if name != "linalg.generic":
            return None  # a gather, an init, any other op: the whole tensor
        n_in = len(owner.operands) - len(owner.results)
        if use.operand_number >= n_in:
            return None
        known = generics.get(owner.operation)
        if known is None:
            maps = [ir.AffineMapAttr(a).value
                    for a in ir.ArrayAttr(owner.attributes["indexing_maps"])]
            known = generics[owner.operation] = (maps, _loop_ranges(owner, maps))
        maps, ranges = known
        m = maps[use.operand_number]
        shape = ir.ShapedType(value.type).shape
        box = []
        for size, e in zip(shape, m.results):
            span = _interval(e, ranges)
            box.append((0, size - 1) if span is None else
                       (max(0, span[0]), min(size - 1, span[1])))
        n = 1
        for lo, hi in box:
            n *= max(0, hi - lo + 1)
        accesses.append(((chain, tuple(box)), n))
    return accesses


def _is_argument_view(op) -> bool:
    """A tensor.extract_slice of a program argument left by planning (see
    fusion-fold-copies): a view of the argument's buffer, no kernel."""
    return (op.operation.name == "tensor.extract_slice"
            and isinstance(op.operands[0], ir.BlockArgument))


def _view_root(v):
    """The tensor `v` is a reshape (through expand/collapse_shape) or a view
    (a slice of an argument) of: the same bytes in memory."""
    while isinstance(v, ir.OpResult) and (
            v.owner.name in ("tensor.expand_shape", "tensor.collapse_shape")
            or _is_argument_view(v.owner)):
        v = v.owner.operands[0]
    return v


def _view_boxes(slice_op, accesses):
    """The boxes of its argument a view (an argument's slice) reaches, read
    through `accesses` (_elements_read of the view; None: whole): per box and
    dimension of the argument, (first index, last index, step)."""
    attrs = slice_op.attributes
    offsets, sizes, strides = (list(ir.DenseI64ArrayAttr(attrs[k])) for k in
                               ("static_offsets", "static_sizes", "static_strides"))
    whole = [tuple((o, o + (n - 1) * st, st) for o, n, st in zip(offsets, sizes, strides))]
    if accesses is None or len(ir.ShapedType(slice_op.results[0].type).shape) != len(sizes):
        return whole
    boxes = []
    for (chain, box), _ in accesses:
        if chain:
            return whole  # (read through a reshape of the view)
        boxes.append(tuple((o + lo * st, o + hi * st, st)
                           for (lo, hi), o, st in zip(box, offsets, strides)))
    return boxes


def _union_elements(shape, boxes) -> int:
    """Elements of a tensor of `shape` in the union of `boxes` (see
    _view_boxes)."""
    count = lambda b: _prod(max(0, (hi - lo) // st + 1) for lo, hi, st in b)  # noqa: E731
    if len(set(boxes)) == 1:
        return count(boxes[0])
    if _prod(shape) > 1 << 26:
        return min(_prod(shape), sum(count(b) for b in set(boxes)))  # (an upper bound)
    import numpy as np
    mask = np.zeros(shape, dtype=bool)
    for b in boxes:
        mask[tuple(slice(lo, hi + 1, st) for lo, hi, st in b)] = True
    return int(mask.sum())


def _prod(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


def _group_reads(op) -> int:
    """Bytes a group reads from its inputs: for an input read only through
    indexing maps (views included), the boxes its maps reach (a slice of qkv
    costs the slice); otherwise the whole tensor. Inputs that are reshapes of
    one tensor share its bytes (at most the whole tensor for all of them);
    slices of one argument (views) the union of what they reach."""
    by_root, seen, boxes, generics = {}, set(), {}, {}
    args = op.regions[0].blocks[0].arguments
    for v, arg in zip(op.operands, args):
        if v in seen:
            continue
        seen.add(v)
        full = value_bytes(v)
        accesses = _elements_read(arg, generics=generics)
        if isinstance(v, ir.OpResult) and _is_argument_view(v.owner):
            boxes.setdefault(v.owner.operands[0], []).extend(_view_boxes(v.owner, accesses))
            continue
        if accesses is None:
            n = full
        else:
            elements = sum(dict(accesses).values())  # (each distinct access once)
            itemsize = dtypes.get(str(ir.ShapedType(v.type).element_type)).itemsize
            n = min(full, elements * itemsize)
        root = _view_root(v)
        got, cap = by_root.get(root, (0, value_bytes(root)))
        by_root[root] = (min(cap, got + n), cap)
    for root, reached in boxes.items():
        t = ir.ShapedType(root.type)
        n = _union_elements(list(t.shape), reached) * dtypes.get(str(t.element_type)).itemsize
        got, cap = by_root.get(root, (0, value_bytes(root)))
        by_root[root] = (min(cap, got + n), cap)
    return sum(n for n, _ in by_root.values())


@dataclass
class GroupReport:
    name: str
    kind: str
    ops: List[str]
    num_ops: int
    bytes_read: int
    bytes_written: int
    decisions: List[str] = field(default_factory=list)


@dataclass
class Traffic:
    kernels: int = 0
    bytes_read: int = 0
    bytes_written: int = 0

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written


@dataclass
class FusionReport:
    program: str
    before: Traffic
    after: Traffic
    groups: List[GroupReport]
    unfused_ops: List[str]
    # CUDA: each launch's shape as the strategy chose it (see launch_lines)
    launches: List[str] = field(default_factory=list)
    # CUDA: each launch's (bytes read, bytes written), in launch order, and
    # their sum: what the kernels code generation made move, partials that
    # pass between the kernels of one group and inputs a group's kernels
    # read again included (see set_launch_traffic)
    launch_traffic: List[Tuple[int, int]] = field(default_factory=list)
    launched: Optional[Traffic] = None
    # gathers whose indices come from the data: each checked when the program
    # runs (plan.guards; a GuardError names the ones an index failed)
    guards: List[str] = field(default_factory=list)
    # compile(): a function giving the strategy options the caller passed
    # that change nothing (see options_without_effect); None: none passed
    options_check: Optional[Callable[[], Dict[str, object]]] = field(
        default=None, repr=False, compare=False)

    def set_launch_traffic(self, plan, traffic) -> None:
        """Records each launch's bytes. `traffic` (from build_plan) holds,
        per launch, (buffer, bytes read, bytes written) of every buffer
        argument its kernel loads from or stores to, by the argument's size.
        That counts an argument a kernel reads only some of (a slice it
        indexes into, a gather's table) whole; where a group runs as one
        launch of its own, the group's own count of its inputs and results
        (the boxes its maps reach) is used instead when smaller.
        Temporaries count as they are passed (partials, a split's terms);
        counters (a few integers) do not count. Each number is exact or an
        upper bound, never less than what the kernels move."""
        steps = [step for step in plan.steps if step.op == "launch"]
        finished = _finished_in(plan, self.groups)
        per_group: Dict[str, List[int]] = {}
        for k, step in enumerate(steps):
            for g in _groups_of_step(plan, step):
                per_group.setdefault(g, []).append(k)
        users: Dict[int, set] = {}
        for k, moved in enumerate(traffic):
            for b, _, _ in moved:
                users.setdefault(b, set()).add(k)
        groups = {g.name: g for g in self.groups}
        result = []
        for k, moved in enumerate(traffic):
            # (a temporary only this launch uses: partials its last block
            # adds up; others pass between groups, like inputs and outputs)
            own = [plan.buffers[b].kind == "temp" and users[b] == {k} for b, _, _ in moved]
            io = [plan.buffers[b].kind != "counter" and not o for (b, _, _), o in zip(moved, own)]
            r = sum(n for (_, n, _), keep in zip(moved, io) if keep)
            w = sum(n for (_, _, n), keep in zip(moved, io) if keep)
            gs = [groups.get(n) for n in _groups_of_step(plan, steps[k])]
            if gs and all(g is not None and per_group[g.name] == [k] for g in gs) \
                    and not finished.get(steps[k].name):
                r = min(r, sum(g.bytes_read for g in gs))
                w = min(w, sum(g.bytes_written for g in gs))
            r += sum(n for (_, n, _), o in zip(moved, own) if o)
            w += sum(n for (_, _, n), o in zip(moved, own) if o)
            result.append((r, w))
        self.launch_traffic = result
        self.launched = Traffic(len(result), sum(r for r, _ in result),
                                sum(w for _, w in result))

    def options_without_effect(self) -> Dict[str, object]:
        """The strategy options passed to kfuse.compile (row_persist=15, ...)
        without which the program compiles to the same code, by name: each
        one the program has no use for (no kernel of the kind it shapes, a
        value that is already what the strategy takes). Found by compiling
        the program again without each, the first time it is asked for (a
        compile an option; printing the report asks)."""
        if self.options_check is None:
            return {}
        if not hasattr(self, "_without_effect"):
            self._without_effect = self.options_check()
        return self._without_effect

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("options_check")
        d["before"]["bytes"] = self.before.bytes
        d["after"]["bytes"] = self.after.bytes
        if self.launched is not None:
            d["launched"]["bytes"] = self.launched.bytes
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def __str__(self) -> str:
        def mb(b):
            return f"{b / 1e6:.3f} MB"
        lines = [f"fusion report for '{self.program}'",
                 f"  before fusion: {self.before.kernels} kernels, {mb(self.before.bytes)} "
                 f"HBM traffic ({mb(self.before.bytes_read)} read, "
                 f"{mb(self.before.bytes_written)} written)",
                 f"  after fusion:  {self.after.kernels} kernels, {mb(self.after.bytes)} "
                 f"HBM traffic ({mb(self.after.bytes_read)} read, "
                 f"{mb(self.after.bytes_written)} written)"]
        if self.launched is not None:
            more = ("; partials between a group's kernels and inputs they read again "
                    "included" if self.launched.bytes > self.after.bytes else "")
            lines.append(f"  launched:      {self.launched.kernels} kernels, at most "
                         f"{mb(self.launched.bytes)} HBM traffic "
                         f"({mb(self.launched.bytes_read)} read, "
                         f"{mb(self.launched.bytes_written)} written{more})")
        if self.after.bytes:
            lines.append(f"  traffic saved: {self.before.bytes / self.after.bytes:.2f}x")
        for g in self.groups:
            # (num_ops counts the linalg ops fused; ops lists what their
            # bodies compute, which may be more or fewer)
            ops = "op" if g.num_ops == 1 else "ops"
            lines.append(f"  group {g.name} ({g.kind}, {g.num_ops} linalg {ops} computing "
                         f"{', '.join(g.ops) or 'copies'}): "
                         f"reads {mb(g.bytes_read)}, writes {mb(g.bytes_written)}")
            for d in g.decisions:
                lines.append(f"    - {d}")
        for op in self.unfused_ops:
            lines.append(f"  not fused: {op}")
        for g in self.guards:
            lines.append(f"  checked when run: {g}")
        for k, text in enumerate(self.launches):
            if k < len(self.launch_traffic):
                r, w = self.launch_traffic[k]
                text += f"; reads {mb(r)}, writes {mb(w)}"
            lines.append(f"  launch {text}")
        unused = self.options_without_effect()
        if unused:
            given = ", ".join(f"{k}={v!r}" for k, v in unused.items())
            lines.append(f"  options that change nothing here: {given} (the same "
                         f"kernels without {'it' if len(unused) == 1 else 'each'})")
        return "\n".join(lines)


def _finished_in(plan, groups: Sequence[GroupReport]) -> Dict[str, List[str]]:
    """Launch -> the groups its last block runs (a reduction group without a
    launch of its own, after the launch before it)."""
    # (a group's launches: its own kernel, or kernels named after it, such
    # as g0_ordered0 or g0_columns_partial, or a packed launch that runs one
    # of those; the last of them by group)
    last_of: Dict[str, str] = {}
    for st in plan.steps:
        if st.op == "launch":
            for g in _groups_of_step(plan, st):
                last_of[g] = st.name
    finished_in: Dict[str, List[str]] = {}
    last = None
    for g in groups:
        if g.name in last_of:
            last = last_of[g.name]
        elif last is not None and g.kind == "reduction":
            finished_in.setdefault(last, []).append(g.name)
    return finished_in


def _group_of(plan, kernel: str) -> str:
    """The group a kernel was generated for: its name less the program's,
    up to the next '_' (g0_columns_partial -> g0)."""
    return kernel[len(plan.name) + 1:].split("_")[0]


def _groups_of_step(plan, step) -> List[str]:
    """The groups a launch runs kernels of: its kernel's, or each packed
    kernel's (fusion-pack-launches)."""
    if getattr(step, "packs", ()):
        return [_group_of(plan, name) for name, _, _ in step.packs]
    return [_group_of(plan, step.name)]


def launch_lines(plan, ptx: str, groups: Sequence[GroupReport] = ()) -> List[str]:
    """One line per kernel launch of a CUDA plan: its kernel, grid and block,
    the thread-block cluster its PTX asks for, its dynamic shared memory
    (rows partly kept in shared memory), whether it is persistent (a grid of
    as many clusters as the device holds, row_persist), whether it is launched before
    the kernel it follows ends (programmatic launch), and whether its blocks
    count themselves so that the last to count for a row (or, a thread per
    row, for a tile of rows) finishes it (a split row's finish, in a counter
    buffer). A reduction group of `groups` without a launch of its own runs
    in the last block of the launch before it (a loss's mean after the row
    kernel of its terms): that launch's line names it."""
    from .runtime.ptx import cluster_shapes
    clusters = cluster_shapes(ptx)
    finished_in = _finished_in(plan, groups)
    lines = []
    for step in plan.steps:
        if step.op != "launch":
            continue
        blocks = step.grid[0] * step.grid[1] * step.grid[2]
        threads = step.block[0] * step.block[1] * step.block[2]
        text = (f"{step.name}: {blocks} block{'' if blocks == 1 else 's'} of {threads} "
                f"thread{'' if threads == 1 else 's'}")
        if step.alias:
            text += f" (the code of {step.kernel}, compiled once)"
        c = clusters.get(step.kernel)
        if c and c[0] * c[1] * c[2] > 1:
            text += f", clusters of {c[0] * c[1] * c[2]}"
        if step.smem:
            text += f", {step.smem} bytes of dynamic shared memory a block"
        if step.persistent:
            text += (f", persistent over at most {step.persistent} "
                     f"{step.persistent_units} (as many as "
                     f"the device holds at once, each taking every n-th row)")
        if step.packs:
            shapes = ", ".join(f"{name[len(plan.name) + 1:]} ({b} block{'' if b == 1 else 's'} "
                               f"of {t})" for name, b, t in step.packs)
            exits = (" (a narrower one's extra threads exit at once)"
                     if any(t < threads for _, _, t in step.packs) else "")
            text += (f", packing {len(step.packs)} independent kernels, each on blocks of "
                     f"its own{exits}: {shapes}")
        if step.programmatic:
            text += ", launched early (waits on the GPU for the kernel before it)"
        counters = sum(getattr(a, "buffer", None) is not None
                       and plan.buffers[a.buffer].kind == "counter" for a in step.args)
        finishes = finished_in.get(step.name, [])
        if counters > len(finishes):
            text += ", the last block to count for its rows finishes them"
        for g in finishes:
            text += f", then its last block to end runs group {g}"
        ordered = [name for name, _, _ in step.packs or ((step.name, 0, 0),)
                   if re.fullmatch(r".*_ordered\d+", name)]
        if ordered:
            which = ("" if not step.packs else " of " + ", ".join(
                name[len(plan.name) + 1:] for name in ordered))
            text += (f", in order{which}: a thread per element it writes (its group "
                     "reduces with a step that is not an associative op)")
            staged = sum(int(n) for n in re.findall(
                rf"\.shared\s[^;]*\b__wg_{re.escape(step.kernel)}_\d+\[(\d+)\]", ptx))
            if staged:
                text += (f", its reads along the reduction staged through {staged} "
                         "bytes of shared memory a block (each warp loads whole "
                         "sectors together, each thread walks its own part)")
        lines.append(text)
    return lines


def _is_fill(op: _Op) -> bool:
    """An op with no tensor inputs and no gathers (linalg.fill, or
    generalized): it only initializes accumulators, which a reduction kernel
    does in registers."""
    if not op.name.startswith("linalg."):
        return False
    return not (any(isinstance(v.type, ir.ShapedType) for v in op.operands[:op.n_in])
                or op.gathered)


def baseline(module: ir.Module) -> Traffic:
    t = Traffic()
    for op in entry_function(module).regions[0].blocks[0].operations:
        if not _is_kernel_op(op):
            continue
        o = _Op(op)
        if not _is_fill(o):
            t.kernels += 1
            t.bytes_read += _reads(o)
            t.bytes_written += sum(value_bytes(r) for r in op.results)
    return t


def planned(module: ir.Module, name: str, before: Traffic) -> FusionReport:
    after = Traffic()
    groups, unfused = [], []
    for op in entry_function(module).regions[0].blocks[0].operations:
        n = op.operation.name
        if n == "fusion.group":
            attrs = op.operation.attributes
            body = op.regions[0].blocks[0]
            # (fills cloned in to initialize accumulators are not work)
            linalg_ops = [o for o in (_Op(o) for o in body.operations
                                      if _is_kernel_op(o)) if not _is_fill(o)]
            payload = [p for o in linalg_ops for p in _payload(o)]
            read = _group_reads(op) + _constant_bytes(body)
            written = sum(value_bytes(r) for r in op.results)
            decisions = ([ir.StringAttr(d).value for d in ir.ArrayAttr(attrs["decisions"])]
                         if "decisions" in attrs else [])
            groups.append(GroupReport(ir.StringAttr(attrs["sym_name"]).value,
                                      ir.StringAttr(attrs["kind"]).value, payload,
                                      len(linalg_ops), read, written, decisions))
            after.kernels += 1
            after.bytes_read += read
            after.bytes_written += written
        elif _is_kernel_op(op) and not _is_argument_view(op):
            unfused.append(n)
            after.kernels += 1
            after.bytes_read += _reads(_Op(op))
            after.bytes_written += sum(value_bytes(r) for r in op.results)
    return FusionReport(name, before, after, groups, unfused)
