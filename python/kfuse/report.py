"""The fusion report: what runs together, what it costs in HBM traffic, and why.

'Before' counts every linalg op of the input program (and every tensor.pad and
tensor.extract_slice, which move data) as its own kernel that reads its tensor
operands and writes its results (the unfused baseline);
'after' counts every fusion.group as one kernel that reads its inputs once and
writes its results once, tensor constants (weights) included. Bytes are exact
for static shapes: broadcast operands, and tensors read through a gather
(pads, slices), count at their own size, which assumes caches absorb re-reads
(for a slice it is an upper bound)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import List

from mlir import ir

from . import dtypes
from .signature import entry_function


def value_bytes(v: ir.Value) -> int:
    t = v.type
    if not isinstance(t, ir.ShapedType) and not isinstance(t, ir.RankedTensorType):
        return 0
    shaped = ir.ShapedType(t)
    n = 1
    for d in shaped.shape:
        n *= d
    return n * dtypes.get(str(shaped.element_type)).itemsize


def _payload(op) -> List[str]:
    """The arithmetic of a linalg op's body, e.g. ['math.exp', 'arith.addf']."""
    names = []
    gathers = bool(_gathered(op))
    for region in op.regions:
        for blk in region.blocks:
            for inner in blk.operations:
                n = inner.operation.name
                if n in ("linalg.yield", "arith.constant", "arith.extf", "arith.truncf"):
                    continue
                # Position arithmetic of a gather (indices, bounds tests) is
                # not payload.
                if gathers and (n == "linalg.index" or inner.results and all(
                        str(r.type) in ("index", "i1") for r in inner.results)):
                    continue
                names.append(n)
    return names


def _is_kernel_op(op) -> bool:
    n = op.operation.name
    return ((n.startswith("linalg.") and n not in ("linalg.yield", "linalg.index"))
            or n in ("tensor.pad", "tensor.extract_slice"))


def _gathered(op) -> list:
    """Tensors a linalg op's body reads with tensor.extract (a gather, as a
    rewritten tensor.pad does): they are read like operands."""
    return [inner.operands[0] for region in op.regions for blk in region.blocks
            for inner in blk.operations if inner.operation.name == "tensor.extract"]


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


def _reads(op) -> int:
    total, seen = 0, set()
    inits = set()
    if op.operation.name.startswith("linalg."):
        # DPS inits of elementwise ops are never read (outs come from tensor.empty).
        for v in op.operands[len(op.operands) - len(op.results):]:
            inits.add(v)
    for v in list(op.operands) + (_gathered(op) if op.operation.name.startswith("linalg.")
                                  else []):
        if v in seen or v in inits:
            continue
        seen.add(v)
        total += value_bytes(v)
    return total


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

    def to_dict(self) -> dict:
        d = asdict(self)
        d["before"]["bytes"] = self.before.bytes
        d["after"]["bytes"] = self.after.bytes
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
        if self.after.bytes:
            lines.append(f"  traffic saved: {self.before.bytes / self.after.bytes:.2f}x")
        for g in self.groups:
            lines.append(f"  group {g.name} ({g.kind}, {g.num_ops} ops: {', '.join(g.ops)}): "
                         f"reads {mb(g.bytes_read)}, writes {mb(g.bytes_written)}")
            for d in g.decisions:
                lines.append(f"    - {d}")
        for op in self.unfused_ops:
            lines.append(f"  not fused: {op}")
        return "\n".join(lines)


def _is_fill(op) -> bool:
    """An op with no tensor inputs and no gathers (linalg.fill, or
    generalized): it only initializes accumulators, which a reduction kernel
    does in registers."""
    if not op.operation.name.startswith("linalg."):
        return False
    n_in = len(op.operands) - len(op.results)
    return not (any(isinstance(v.type, ir.ShapedType) for v in op.operands[:n_in])
                or _gathered(op))


def baseline(module: ir.Module) -> Traffic:
    t = Traffic()
    for op in entry_function(module).regions[0].blocks[0].operations:
        if _is_kernel_op(op) and not _is_fill(op):
            t.kernels += 1
            t.bytes_read += _reads(op)
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
            linalg_ops = [o for o in body.operations
                          if _is_kernel_op(o) and not _is_fill(o)]
            payload = [p for o in linalg_ops for p in _payload(o)]
            read = _reads(op) + _constant_bytes(body)
            written = sum(value_bytes(r) for r in op.results)
            decisions = ([ir.StringAttr(d).value for d in ir.ArrayAttr(attrs["decisions"])]
                         if "decisions" in attrs else [])
            groups.append(GroupReport(ir.StringAttr(attrs["sym_name"]).value,
                                      ir.StringAttr(attrs["kind"]).value, payload,
                                      len(linalg_ops), read, written, decisions))
            after.kernels += 1
            after.bytes_read += read
            after.bytes_written += written
        elif _is_kernel_op(op):
            unfused.append(n)
            after.kernels += 1
            after.bytes_read += _reads(op)
            after.bytes_written += sum(value_bytes(r) for r in op.results)
    return FusionReport(name, before, after, groups, unfused)
