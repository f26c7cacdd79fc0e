"""Reads a program's entry function: its name, inputs and outputs.

kfuse compiles modules with exactly one public func.func whose arguments and
results are tensors of static shape; names come from `kfuse.name` argument and
result attributes when present (the builder writes them)."""

from __future__ import annotations

from typing import List, Tuple

from mlir import ir

from . import dtypes
from .errors import CompileError
from .runtime.plan import TensorSpec


def entry_function(module: ir.Module):
    funcs = [op for op in module.body.operations if op.operation.name == "func.func"
             and "sym_visibility" not in op.operation.attributes
             and len(op.regions[0].blocks) > 0]
    if len(funcs) != 1:
        names = [ir.StringAttr(f.operation.attributes["sym_name"]).value for f in funcs]
        raise CompileError(f"kfuse: the module must have exactly one public function with a "
                           f"body, found {len(funcs)} {names}")
    return funcs[0]


def _spec(type_: ir.Type, name: str, what: str) -> TensorSpec:
    if not isinstance(type_, ir.RankedTensorType):
        raise CompileError(f"kfuse: {what} '{name}' has type {type_}; only ranked tensors "
                           f"are supported")
    shape = tuple(type_.shape)
    if any(d < 0 for d in shape):
        raise CompileError(f"kfuse: {what} '{name}' has type {type_}; dynamic shapes are "
                           f"not supported (give every dimension a static size)")
    try:
        dt = dtypes.get(str(type_.element_type))
    except KeyError:
        raise CompileError(f"kfuse: {what} '{name}' has element type {type_.element_type}; "
                           f"supported: {', '.join(dtypes.ALL)}") from None
    return TensorSpec(name, shape, dt)


def _names(func, attr: str, count: int, default: str) -> List[str]:
    names = [f"{default}{i}" for i in range(count)]
    if attr in func.operation.attributes:
        for i, d in enumerate(ir.ArrayAttr(func.operation.attributes[attr])):
            d = ir.DictAttr(d)
            if "kfuse.name" in d:
                names[i] = ir.StringAttr(d["kfuse.name"]).value
    return names


def signature(module: ir.Module) -> Tuple[str, List[TensorSpec], List[TensorSpec]]:
    func = entry_function(module)
    ftype = ir.FunctionType(ir.TypeAttr(func.operation.attributes["function_type"]).value)
    name = ir.StringAttr(func.operation.attributes["sym_name"]).value
    in_names = _names(func, "arg_attrs", len(ftype.inputs), "arg")
    out_names = _names(func, "res_attrs", len(ftype.results), "out")
    inputs = [_spec(t, n, "input") for t, n in zip(ftype.inputs, in_names)]
    outputs = [_spec(t, n, "output") for t, n in zip(ftype.results, out_names)]
    if not outputs:
        raise CompileError(f"kfuse: function '{name}' returns nothing")
    return name, inputs, outputs
