"""Turns the host function left by `fusion-codegen-cuda` into a LaunchPlan.

After code generation the entry function holds only host work: temporaries
(memref.alloc), kernel launches (gpu.launch_func), whole-buffer copies
(memref.copy), view ops and constants. Its arguments are the program's
inputs followed by its outputs (fusion-results-to-out-params). Anything else
is a compiler bug, reported as such rather than guessed at."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Set, Tuple

import numpy as np
from mlir import ir

from . import dtypes
from .errors import CompileError, UnsupportedOpError
from .report import value_bytes
from .runtime.plan import (FORMAT, VERSION, BufferArg, BufferSpec, CopyStep, LaunchPlan,
                           LaunchStep, ScalarArg, TensorSpec)
from .signature import entry_function

_VIEW_OPS = {"memref.collapse_shape", "memref.expand_shape", "memref.cast",
             "memref.reshape"}


def _memref_spec(t: ir.Type):
    m = ir.MemRefType(t)
    return tuple(m.shape), dtypes.get(str(m.element_type))


def _int_constant(value: ir.Value) -> int:
    op = value.owner
    if not isinstance(op, ir.OpView) or op.operation.name != "arith.constant":
        raise CompileError(f"kfuse: launch dimension {value} is not a constant")
    return ir.IntegerAttr(op.operation.attributes["value"]).value


# Ops through which a kernel addresses (part of) one of its arguments.
_KERNEL_VIEW_OPS = {"memref.subview", "memref.expand_shape", "memref.collapse_shape",
                    "memref.cast", "memref.reinterpret_cast", "memref.reshape",
                    "memref.view", "memref.memory_space_cast"}


@dataclass
class KernelFacts:
    """What code generation left in one gpu.func: the byte alignment its
    vector accesses assume of every buffer, and which of its arguments it
    loads from (or copies from by address) and stores to (atomics do both)."""
    alignment: int = 1
    reads: Set[int] = field(default_factory=set)
    writes: Set[int] = field(default_factory=set)


def _access(name: str) -> Tuple[bool, bool]:
    """(reads, writes) of a memory op of the kernels, by its name."""
    short = name.split(".", 1)[1] if "." in name else name
    if "atomic" in short:
        return True, True
    if short in ("load", "maskedload", "transfer_read", "gather", "expandload"):
        return True, False
    if name == "memref.extract_aligned_pointer_as_index":
        # (the kernel hands the buffer's address to the hardware: a bulk copy
        # of a row's share into shared memory, an L2 prefetch of one)
        return True, False
    if short in ("store", "maskedstore", "transfer_write", "scatter", "compressstore"):
        return False, True
    return False, False


def kernel_facts(module: ir.Module) -> Dict[str, KernelFacts]:
    """KernelFacts of every gpu.func of `module`, by kernel name."""
    result: Dict[str, KernelFacts] = {}

    def walk(op, facts, arg_of):
        for region in op.regions:
            for blk in region.blocks:
                for inner in blk.operations:
                    name = inner.operation.name
                    if name == "gpu.func":
                        k = ir.StringAttr(inner.operation.attributes["sym_name"]).value
                        kf = result.setdefault(k, KernelFacts())
                        body = inner.regions[0].blocks[0]
                        n = len(ir.FunctionType(ir.TypeAttr(
                            inner.operation.attributes["function_type"]).value).inputs)
                        walk(inner, kf, {a: {i} for i, a in
                                         enumerate(list(body.arguments)[:n])})
                        continue
                    if facts is not None:
                        if name in ("vector.load", "vector.store") \
                                and "alignment" in inner.operation.attributes:
                            a = ir.IntegerAttr(inner.operation.attributes["alignment"]).value
                            facts.alignment = max(facts.alignment, a)
                        if name in _KERNEL_VIEW_OPS and inner.operands[0] in arg_of:
                            arg_of[inner.results[0]] = arg_of[inner.operands[0]]
                        elif name == "scf.index_switch":
                            # (a packed launch's kernels of one code pick
                            # their buffers by block, each case yielding its
                            # run's: the access is to each)
                            for region in inner.regions:
                                ops = list(region.blocks[0].operations)
                                for res, v in zip(inner.results, ops[-1].operands):
                                    if v in arg_of:
                                        arg_of[res] = arg_of.get(res, set()) | arg_of[v]
                        else:
                            reads, writes = _access(name)
                            if reads or writes:
                                for v in inner.operands:
                                    for i in arg_of.get(v, ()):
                                        if reads:
                                            facts.reads.add(i)
                                        if writes:
                                            facts.writes.add(i)
                    walk(inner, facts, arg_of)

    walk(module.operation, None, {})
    return result


def build_plan(module: ir.Module, name: str, inputs: List[TensorSpec],
               outputs: List[TensorSpec], chip: str, ptx_file: str):
    """Returns (plan, {constant file: data}, traffic): `traffic` holds, for
    each launch in order, (buffer, bytes read, bytes written) of each buffer
    argument its kernel loads from or stores to: the size of the argument
    (the whole buffer, or the part of it the kernel is passed)."""
    facts = kernel_facts(module)
    func = entry_function(module)
    block = func.regions[0].blocks[0]
    args = list(block.arguments)
    if len(args) != len(inputs) + len(outputs):
        raise CompileError(f"kfuse: host function has {len(args)} arguments, expected "
                           f"{len(inputs)} inputs + {len(outputs)} outputs (internal error)")
    buffers: List[BufferSpec] = []
    buffer_of: Dict[ir.Value, int] = {}
    for i, spec in enumerate(inputs):
        buffers.append(BufferSpec("input", spec.shape, spec.dtype, i))
        buffer_of[args[i]] = i
    for i, spec in enumerate(outputs):
        buffers.append(BufferSpec("output", spec.shape, spec.dtype, i))
        buffer_of[args[len(inputs) + i]] = len(inputs) + i

    def buffer(v: ir.Value, what: str) -> int:
        if v not in buffer_of:
            raise CompileError(f"kfuse: {what} uses {v}, which is not a known buffer "
                               f"(internal error)")
        return buffer_of[v]

    guards = guard_messages(module)
    status: Set[int] = set()
    blobs: Dict[str, bytes] = {}   # (the dense_resource blobs, read once)
    steps = []
    traffic: List[List[Tuple[int, int, int]]] = []
    part_of = set()  # views of part of a buffer (memref.subview)
    constants: Dict[str, "np.ndarray"] = {}
    for op in block.operations:
        kind = op.operation.name
        if kind in ("arith.constant", "func.return", "memref.dealloc"):
            continue
        if kind == "memref.alloc":
            shape, dt = _memref_spec(op.result.type)
            buffer_of[op.result] = len(buffers)
            # (counts the kernels leave zero: kept per device and stream)
            counter = "kfuse.counter" in op.operation.attributes
            buffers.append(BufferSpec("counter" if counter else "temp", shape, dt))
        elif kind in _VIEW_OPS:
            buffer_of[op.results[0]] = buffer(op.operands[0], kind)
            if op.operands[0] in part_of:
                part_of.add(op.results[0])
        elif kind in ("memref.subview", "memref.reinterpret_cast"):
            # (part of a buffer, of static offset and strides: a kernel takes
            # the buffer's address and addresses the part through its type,
            # as the bare-pointer convention does; a whole-buffer step cannot.
            # A reinterpret_cast: an elementwise kernel's 1-D view of such a
            # part, its offset from the same address)
            buffer_of[op.results[0]] = buffer(op.operands[0], kind)
            part_of.add(op.results[0])
        elif kind == "memref.get_global" and ir.FlatSymbolRefAttr(
                op.operation.attributes["name"]).value == STATUS_GLOBAL:
            # (the words the kernels' guards set: kept zero by the runtime)
            shape, dt = _memref_spec(op.result.type)
            if shape != (2 * len(guards),) or dt.name != "i64":
                raise CompileError(f"kfuse: @{STATUS_GLOBAL} is {op.result.type}, expected "
                                   f"memref<{2 * len(guards)}xi64> (internal error)")
            buffer_of[op.result] = len(buffers)
            status.add(len(buffers))
            buffers.append(BufferSpec("status", shape, dt))
        elif kind == "memref.get_global":
            global_name = ir.FlatSymbolRefAttr(op.operation.attributes["name"]).value
            data = _global_data(module, global_name, blobs)
            file = f"const{len(constants)}.npy"
            constants[file] = data
            shape, dt = _memref_spec(op.result.type)
            buffer_of[op.result] = len(buffers)
            buffers.append(BufferSpec("const", shape, dt, None, file))
        elif kind == "memref.copy":
            if any(v in part_of for v in op.operands):
                raise CompileError("kfuse: memref.copy of part of a buffer (internal error)")
            steps.append(CopyStep(buffer(op.operands[0], kind), buffer(op.operands[1], kind)))
        elif kind == "gpu.launch_func":
            kernel = ir.SymbolRefAttr(op.operation.attributes["kernel"])
            kname = str(kernel).split("::")[-1].lstrip("@")
            grid = tuple(_int_constant(v) for v in (op.gridSizeX, op.gridSizeY, op.gridSizeZ))
            blk = tuple(_int_constant(v) for v in (op.blockSizeX, op.blockSizeY,
                                                   op.blockSizeZ))
            smem = (0 if op.dynamicSharedMemorySize is None
                    else _int_constant(op.dynamicSharedMemorySize))
            kargs = []
            kf = facts.get(kname, KernelFacts())
            moved = []
            for i, v in enumerate(op.kernelOperands):
                if isinstance(v.type, ir.MemRefType):
                    b = buffer(v, kname)
                    kargs.append(BufferArg(b))
                    # (a guard's status word is written only by a bad index)
                    if (i in kf.reads or i in kf.writes) and b not in status:
                        n = value_bytes(v)
                        moved.append((b, n if i in kf.reads else 0,
                                      n if i in kf.writes else 0))
                else:
                    owner = v.owner
                    if not (isinstance(owner, ir.OpView)
                            and owner.operation.name == "arith.constant"):
                        raise CompileError(f"kfuse: kernel {kname} takes a non-constant "
                                           f"scalar {v} (internal error)")
                    attr = owner.operation.attributes["value"]
                    if isinstance(v.type, ir.IndexType):
                        kargs.append(ScalarArg(ir.IntegerAttr(attr).value, "index"))
                    elif isinstance(v.type, ir.IntegerType):
                        kargs.append(ScalarArg(ir.IntegerAttr(attr).value,
                                               f"i{ir.IntegerType(v.type).width}"))
                    else:
                        kargs.append(ScalarArg(ir.FloatAttr(attr).value, str(v.type)))
            # (one buffer passed as several views, kernels packed into one
            # launch each passing its own: their bytes added, at most the
            # buffer's)
            merged: Dict[int, Tuple[int, int]] = {}
            for b, r, w in moved:
                r0, w0 = merged.get(b, (0, 0))
                merged[b] = (min(r0 + r, buffers[b].nbytes), min(w0 + w, buffers[b].nbytes))
            traffic.append([(b, r, w) for b, (r, w) in merged.items()])
            attrs = op.operation.attributes
            persistent = (ir.IntegerAttr(attrs["kfuse.persistent"]).value
                          if "kfuse.persistent" in attrs else 0)
            # (fusion-pack-launches: the kernels a packed launch runs, each
            # its name, blocks and threads, in block order)
            packs = tuple(
                (ir.StringAttr(ir.ArrayAttr(m)[0]).value, ir.IntegerAttr(ir.ArrayAttr(m)[1]).value,
                 ir.IntegerAttr(ir.ArrayAttr(m)[2]).value)
                for m in ir.ArrayAttr(attrs["kfuse.packed"])) if "kfuse.packed" in attrs else ()
            # (fusion-dedup-kernels: the name of a launch whose kernel runs
            # another's code)
            alias = (ir.StringAttr(attrs["kfuse.generated_as"]).value
                     if "kfuse.generated_as" in attrs else "")
            steps.append(LaunchStep(kname, grid, blk, tuple(kargs), smem, kf.alignment,
                                    "kfuse.programmatic" in attrs, persistent, packs, alias))
        else:
            raise CompileError(f"kfuse: unexpected host operation '{kind}' after code "
                               f"generation (internal error)")
    plan = LaunchPlan(name=name, target="cuda", inputs=tuple(inputs),
                      outputs=tuple(outputs), buffers=tuple(buffers), steps=tuple(steps),
                      chip=chip, ptx=ptx_file, guards=tuple(guards))
    return plan, constants, traffic


# The module's guard status words (fusion-lower-guards) and their messages.
STATUS_GLOBAL = "kfuse_status"


def guard_messages(module: ir.Module) -> List[str]:
    """The messages of the module's guards, in status-word order (none when
    fusion-lower-guards found no guard)."""
    for op in module.body.operations:
        if op.operation.name == "memref.global" and \
                ir.StringAttr(op.operation.attributes["sym_name"]).value == STATUS_GLOBAL:
            if "kfuse.guards" not in op.operation.attributes:
                raise CompileError(f"kfuse: @{STATUS_GLOBAL} has no kfuse.guards "
                                   f"(internal error)")
            return [ir.StringAttr(a).value
                    for a in ir.ArrayAttr(op.operation.attributes["kfuse.guards"])]
    return []


def _global_data(module: ir.Module, name: str, blobs: Dict[str, bytes]) -> "np.ndarray":
    """The initial value of memref.global @name as a numpy array (`blobs`: the
    module's dense_resource blobs, filled at the first constant that needs them)."""
    for op in module.body.operations:
        if op.operation.name == "memref.global" and \
                ir.StringAttr(op.operation.attributes["sym_name"]).value == name:
            shape, dt = _memref_spec(ir.TypeAttr(op.operation.attributes["type"]).value)
            attr = op.operation.attributes["initial_value"]
            try:
                np_dt = dtypes.to_numpy(dt)
            except KeyError as e:
                raise UnsupportedOpError(f"kfuse: constant @{name}: {e}") from None
            if dt.name == "i1":
                raise UnsupportedOpError(f"kfuse cannot generate code for boolean tensor "
                                         f"constant @{name} on the CUDA target yet")
            text = str(attr)
            if text.startswith("dense_resource<"):
                return _resource_data(module, text, name, shape, np_dt, blobs)
            if not isinstance(attr, ir.DenseElementsAttr):
                raise UnsupportedOpError(f"kfuse: constant @{name} has an initial value "
                                         f"kfuse cannot read ({text[:60]})")
            if attr.is_splat:
                v = attr.get_splat_value()
                v = ir.FloatAttr(v).value if dt.is_float else ir.IntegerAttr(v).value
                return np.full(shape, v, dtype=np_dt)
            return np.array(attr, dtype=np_dt).reshape(shape)
    raise CompileError(f"kfuse: memref.global @{name} not found (internal error)")


def _resource_data(module: ir.Module, attr_text: str, name: str, shape, np_dt,
                   blobs: Dict[str, bytes]):
    """Data of a `dense_resource<key>` constant: the blob in the module's
    `dialect_resources` section (4 bytes of alignment, then the elements)."""
    import re
    from .pipeline import resource_blobs
    key = re.match(r"dense_resource<([^>]+)>", attr_text).group(1).strip('"')
    if not blobs:
        # (printing the module is what reading a blob costs: once a plan)
        blobs.update(resource_blobs(module))
    blob = blobs.get(key)
    if blob is None:
        raise UnsupportedOpError(f"kfuse: the data of constant @{name} "
                                 f"(dense_resource<{key}>) is not in the module")
    count = int(np.prod(shape))
    if len(blob) != count * np.dtype(np_dt).itemsize:
        raise CompileError(f"kfuse: dense_resource<{key}> holds {len(blob)} bytes, "
                           f"constant @{name} needs {count * np.dtype(np_dt).itemsize}")
    return np.frombuffer(blob, dtype=np_dt).reshape(shape).copy()
