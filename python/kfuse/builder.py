"""The builder API: write a tensor program (elementwise ops and reductions) in Python,
get linalg MLIR text.

    from kfuse import builder as kb
    p = kb.Program("softplus")
    x = p.input("x", (1 << 26,), "f32")
    p.output(kb.log(kb.exp(x) + 1.0), name="y")
    text = p.to_mlir()

Every builder op becomes exactly one ``linalg.generic`` over the op's broadcast output
shape (all loops parallel, ``outs`` a fresh ``tensor.empty``); broadcasting is written
in the input indexing maps, python scalars are ``arith.constant`` ops inside the body,
and bodies use only the arith and math dialects. Fusing the generics is the compiler's
job, not the builder's. f16 and bf16 ops compute in f32 (extf, compute, truncf), so each
op is rounded once, like numpy's float16 loops; ``Program.reference`` evaluates a
program with numpy under exactly those rules, from the same op definitions.

Reductions (``sum``, ``max``, ``min``, ``mean``; also Tensor methods) take numpy's
``axis`` and ``keepdims``. Each is one ``linalg.generic`` whose loops run over the kept
dims first and the reduced dims last (``"parallel"...``, ``"reduction"...``), with
``outs`` a ``linalg.fill`` of the identity (0, -inf, +inf; INT_MIN, INT_MAX) of the
accumulator type: f32 for f16 and bf16 inputs, whose f32 result a following elementwise
generic truncates (mean: divides by the count and truncates, in one generic).
keepdims=True gives the numpy shape (1s in the reduced positions), but the MLIR value
keeps only the other dims: a Tensor's MLIR type omits its *absent* dims (``_absent``,
all of size 1), the indexing maps that read it skip them, elementwise ops whose every
operand lacks a size-1 dim lack it too, and ``Program.output`` of such a tensor adds one
elementwise generic that writes it at its full numpy shape. No reshapes are emitted; a
reduction over only such absent dims is a "view" (no op: the operand's MLIR value).

``argmax`` / ``argmin`` (numpy's: the first extremum along one axis, the first NaN
where there is one; int64) are one ``linalg.generic`` with two accumulators, the
running extremum and its column, as torch-mlir writes ``torch.argmax``;
fusion-normalize splits it into one-result reductions.

``pad`` (constant padding, numpy's ``pad_width``) is a ``tensor.pad``; fusion-normalize
turns it into an elementwise generic that gathers from its operand.
"""

import builtins
import math
import numbers
import re
import struct

import numpy as np

from . import dtypes
from .dtypes import BF16, F16, F32, F64, I1, I64
from .errors import BuilderError

__all__ = [
    "Program", "Tensor",
    "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh",
    "sigmoid", "relu", "gelu", "silu", "erf", "maximum", "minimum", "pow", "where",
    "cast", "materialize", "pad", "gt", "ge", "lt", "le", "eq", "ne",
    "sum", "max", "min", "mean", "argmax", "argmin",
]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Which operand dtypes each op accepts (cast and where are checked on their own).
_FLOAT_ONLY = frozenset(
    ("div", "pow", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "gelu", "silu", "erf"))
_NUMERIC = frozenset(("add", "sub", "mul", "maximum", "minimum", "neg", "abs", "relu"))
_COMPARE = frozenset(("gt", "ge", "lt", "le", "eq", "ne"))
_BINARY_PRIMS = ("add", "sub", "mul", "div", "maximum", "minimum", "pow")
_UNARY_PRIMS = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "erf")


# ----------------------------------------------------------------------------- helpers

def _fmt_shape(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _describe(v):
    if isinstance(v, Tensor):
        return f"{v.dtype.name} tensor of shape {_fmt_shape(v.shape)}"
    return f"python scalar {v!r}"


def _check_identifier(what, name):
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise BuilderError(f"{what} {name!r} is not a valid name: use letters, digits and "
                           "underscores, not starting with a digit ([A-Za-z_][A-Za-z0-9_]*)")
    return name


def _get_dtype(spec, where):
    try:
        return dtypes.get(spec)
    except (KeyError, TypeError, ValueError):
        raise BuilderError(f"{where}: unknown dtype {spec!r}; use one of "
                           f"{', '.join(dtypes.ALL)}") from None


def _numpy_dtype(dt):
    try:
        return dtypes.to_numpy(dt)
    except KeyError:
        raise BuilderError("Program.reference: bf16 arrays need the ml_dtypes package "
                           "(pip install ml_dtypes)") from None


def _compute_dtype(dt):
    """f16 and bf16 ops compute in f32; every other dtype computes natively."""
    return F32 if dt in (F16, BF16) else dt


def _round_bf16(v):
    """Rounds a python float to the nearest bfloat16 (ties to even), as a python float."""
    if not math.isfinite(v) or v == 0:
        return v
    exponent = math.frexp(v)[1]
    quantum = builtins.max(exponent - 8, -133)  # 8 significant bits; subnormals: 2**-133
    r = math.copysign(math.ldexp(round(math.ldexp(v, -quantum)), quantum), v)
    return r if math.fabs(r) < 2.0 ** 128 else math.copysign(math.inf, v)


def _round_float(v, dt):
    """Rounds a python float to dtype ``dt``: what numpy does to a weak python scalar."""
    with np.errstate(over="ignore"):
        if dt is F32:
            return float(np.float32(v))
        if dt is F16:
            return float(np.float16(v))
    return _round_bf16(v) if dt is BF16 else v


def _float_literal(v, dt):
    """An MLIR float literal that parses to exactly ``v``, a value representable in dt."""
    if math.isfinite(v):
        text = repr(v)  # shortest round-trip digits: parses back to this very double
        if "." not in text:  # '1e-05' is no MLIR float literal; '1.0e-05' is
            mantissa, _, exponent = text.partition("e")
            text = mantissa + ".0" + ("e" + exponent if exponent else "")
        return text
    if dt is BF16:  # nan and inf: hex bit patterns, the only way MLIR spells them
        return "0x" + struct.pack(">f", v)[:2].hex().upper()
    return "0x" + struct.pack({F16: ">e", F32: ">f", F64: ">d"}[dt], v).hex().upper()


def _coerce_scalar(op, value, dt, other):
    """Converts a python scalar operand of ``op`` to a python value of dtype ``dt``."""
    if isinstance(value, (bool, np.bool_)):
        value = bool(value)
    elif isinstance(value, numbers.Integral):
        value = int(value)
    elif isinstance(value, numbers.Real):
        value = float(value)
    else:
        raise BuilderError(f"{op}: operand {value!r} is neither a kfuse Tensor nor a python "
                           "int, float or bool scalar")
    hint = f"{op}: python scalar {value!r} cannot take the dtype of {_describe(other)}"
    if dt is I1:
        if not isinstance(value, bool):
            raise BuilderError(f"{hint}; an i1 tensor only combines with True or False")
        return value
    if dt.is_float:
        try:
            return _round_float(float(value), dt)
        except OverflowError:
            raise BuilderError(f"{hint}: it overflows a float") from None
    if isinstance(value, float):
        raise BuilderError(f"{hint}; use an int scalar, or kb.cast the tensor to a float "
                           "dtype first")
    limit = 1 << (dt.bits - 1)
    if not -limit <= value < limit:
        raise BuilderError(f"{hint}: it is out of range for {dt.name}")
    return int(value)


def _broadcast(op, operands):
    """The numpy broadcast shape of the tensor operands, or a BuilderError naming them."""
    shapes = [t.shape for t in operands if isinstance(t, Tensor)]
    rank = builtins.max(len(s) for s in shapes)
    out = []
    for k in range(rank):
        sizes = {s[k - rank + len(s)] for s in shapes if k - rank + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise BuilderError(
                f"{op}: shapes {' and '.join(_fmt_shape(s) for s in shapes)} do not broadcast "
                "(numpy rules: right-aligned dims must be equal or 1); change one operand's "
                "shape so they match")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _indexing_map(in_shape, out_shape, in_absent=(), out_absent=()):
    """Right-aligned map of an input onto the output dims; 0 where a size-1 dim stretches.

    Absent dims (size 1, left out of a tensor's MLIR type) have no loop when the output
    lacks them, and no map result when the input lacks them."""
    rank = len(out_shape)
    loops = {j: f"d{i}" for i, j in enumerate(j for j in range(rank) if j not in out_absent)}
    exprs = []
    for k, size in enumerate(in_shape):
        if k in in_absent:
            continue
        j = rank - len(in_shape) + k
        exprs.append("0" if size == 1 and out_shape[j] != 1 else loops[j])
    return f"affine_map<({', '.join(loops.values())}) -> ({', '.join(exprs)})>"


def _absent_dims(shape, tensors):
    """An elementwise result's absent dims: the size-1 dims that every operand lacks."""
    rank = len(shape)
    return tuple(j for j in range(rank) if shape[j] == 1 and all(
        j < rank - len(t.shape) or j - rank + len(t.shape) in t._absent for t in tensors))


def _tensor_type(shape, dt):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dt.mlir + ">"


def _mlir_shape(t):
    """The shape of ``t``'s MLIR value: its numpy shape without its absent dims."""
    return tuple(d for k, d in enumerate(t.shape) if k not in t._absent)


def _mlir_type(t):
    return _tensor_type(_mlir_shape(t), t.dtype)


# ------------------------------------------------------------------ tensors and program

class Tensor:
    """A value of a Program: a static shape and a dtype, the result of an input or an op."""

    __slots__ = ("program", "shape", "dtype", "_op", "_args", "_id", "_absent", "_attrs")
    __array_ufunc__ = None  # numpy scalars and arrays defer to the reflected operators
    __hash__ = object.__hash__

    def __init__(self, program, shape, dtype, op, args=(), absent=(), attrs=None):
        self.program, self.shape, self.dtype = program, shape, dtype
        self._op, self._args = op, tuple(args)
        self._absent = tuple(absent)  # size-1 dims left out of the MLIR value's type
        self._attrs = attrs           # reductions: (reduced axes, keepdims)
        self._id = program._new_id()

    def __repr__(self):
        return f"Tensor({self._op}, shape={self.shape}, dtype={self.dtype.name})"

    def __bool__(self):
        raise BuilderError("a kfuse Tensor has no truth value: use kb.where for a choice")

    def __add__(self, o): return add(self, o)
    def __radd__(self, o): return add(o, self)
    def __sub__(self, o): return sub(self, o)
    def __rsub__(self, o): return sub(o, self)
    def __mul__(self, o): return mul(self, o)
    def __rmul__(self, o): return mul(o, self)
    def __truediv__(self, o): return div(self, o)
    def __rtruediv__(self, o): return div(o, self)
    def __pow__(self, o): return pow(self, o)
    def __rpow__(self, o): return pow(o, self)
    def __neg__(self): return neg(self)
    def __abs__(self): return abs(self)
    def __lt__(self, o): return lt(self, o)
    def __le__(self, o): return le(self, o)
    def __gt__(self, o): return gt(self, o)
    def __ge__(self, o): return ge(self, o)
    def __eq__(self, o): return eq(self, o)  # elementwise, like numpy
    def __ne__(self, o): return ne(self, o)

    def sum(self, axis=None, keepdims=False, dtype=None):
        return reduce_sum(self, axis, keepdims, dtype)
    def max(self, axis=None, keepdims=False): return amax(self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return amin(self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return mean(self, axis, keepdims)
    def argmax(self, axis=None, keepdims=False): return argmax(self, axis, keepdims)
    def argmin(self, axis=None, keepdims=False): return argmin(self, axis, keepdims)


class Program:
    """A tensor program: named inputs, ops on Tensors, named outputs."""

    def __init__(self, name):
        self.name = _check_identifier("program name", name)
        self._inputs = []   # (name, Tensor)
        self._outputs = []  # (name, Tensor)
        self._count = 0
        self._materialize = set()  # ids of op tensors marked with materialize()

    def _new_id(self):
        self._count += 1
        return self._count

    def _names(self):
        return {n for n, _ in self._inputs} | {n for n, _ in self._outputs}

    @property
    def inputs(self):
        return [(n, t.shape, t.dtype) for n, t in self._inputs]

    @property
    def outputs(self):
        return [(n, t.shape, t.dtype) for n, t in self._outputs]

    def input(self, name, shape, dtype):
        """Adds an argument: ``shape`` a tuple of positive ints (``()`` for 0-d)."""
        _check_identifier("input name", name)
        if name in self._names():
            raise BuilderError(f"input: name {name!r} is already used in program "
                               f"{self.name!r}; give each input and output its own name")
        if not isinstance(shape, (tuple, list)):
            raise BuilderError(f"input {name!r}: shape must be a tuple of positive ints, got "
                               f"{shape!r} (write (n,) for a 1-d shape)")
        for d in shape:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d <= 0:
                raise BuilderError(f"input {name!r}: shape {tuple(shape)!r} has dim {d!r}; "
                                   "every dim must be a positive int (dynamic dims are "
                                   "not supported)")
        t = Tensor(self, tuple(int(d) for d in shape), _get_dtype(dtype, f"input {name!r}"),
                   "input")
        self._inputs.append((name, t))
        return t

    def output(self, tensor, name=None):
        """Marks ``tensor`` as a result; the default name is out<k>. Returns the name."""
        if not isinstance(tensor, Tensor):
            raise BuilderError(f"output: expected a kfuse Tensor, got {tensor!r}")
        if tensor.program is not self:
            raise BuilderError(f"output: the {_describe(tensor)} belongs to program "
                               f"{tensor.program.name!r}, not {self.name!r}; build it from "
                               "this program's inputs")
        name = f"out{len(self._outputs)}" if name is None else name
        _check_identifier("output name", name)
        if name in self._names():
            raise BuilderError(f"output: name {name!r} is already used in program "
                               f"{self.name!r}; give each input and output its own name")
        if tensor._absent:  # write it at its numpy shape: one elementwise generic
            tensor = Tensor(self, tensor.shape, tensor.dtype, "expand", [tensor])
        self._outputs.append((name, tensor))
        return name

    def _schedule(self):
        """The op tensors the outputs depend on, in creation (hence dependency) order."""
        if not self._outputs:
            raise BuilderError(f"program {self.name!r} has no outputs: call "
                               "Program.output(tensor) at least once")
        seen, stack = {}, [t for _, t in self._outputs]
        while stack:
            t = stack.pop()
            if t._op != "input" and t._id not in seen:
                seen[t._id] = t
                stack.extend(a for a in t._args if isinstance(a, Tensor))
        return [seen[k] for k in sorted(seen)]

    def to_mlir(self):
        """The program as an MLIR module (text): one func.func, one linalg.generic per op."""
        ops = self._schedule()
        values = {t._id: f"%arg{k}" for k, (_, t) in enumerate(self._inputs)}
        args = ", ".join(f"%arg{k}: {_tensor_type(t.shape, t.dtype)} {{kfuse.name = \"{n}\"}}"
                         for k, (n, t) in enumerate(self._inputs))
        results = ", ".join(f"{_tensor_type(t.shape, t.dtype)} {{kfuse.name = \"{n}\"}}"
                            for n, t in self._outputs)
        lines = ["module {", f"  func.func @{self.name}({args}) -> ({results}) {{"]
        for t in ops:
            if t._op == "view":  # the same MLIR value as its operand: no op
                values[t._id] = values[t._args[0]._id]
                continue
            values[t._id] = f"%t{t._id}"
            emit = (_reduction if t._op in _REDUCTIONS else
                    _arg_reduction if t._op in _ARG_REDUCTIONS else
                    _pad if t._op == "pad" else _generic)
            lines += emit(t, values)
        outs = [t for _, t in self._outputs]
        lines += [f"    return {', '.join(values[t._id] for t in outs)} : "
                  f"{', '.join(_tensor_type(t.shape, t.dtype) for t in outs)}", "  }", "}"]
        return "\n".join(lines) + "\n"

    def reference(self, *arrays):
        """Evaluates the program with numpy, with the same per-op rounding as the MLIR.

        Takes one array per input, in input order, of exactly its shape and dtype;
        returns one numpy array per output."""
        if len(arrays) != len(self._inputs):
            raise BuilderError(f"Program.reference: program {self.name!r} has "
                               f"{len(self._inputs)} inputs, got {len(arrays)} arrays")
        env = {}
        for (name, t), a in zip(self._inputs, arrays):
            a = np.asarray(a)
            want = _numpy_dtype(t.dtype)
            if a.shape != t.shape or a.dtype != want:
                raise BuilderError(f"Program.reference: input {name!r} needs a {want} array "
                                   f"of shape {_fmt_shape(t.shape)}, got {a.dtype} "
                                   f"{_fmt_shape(a.shape)}")
            env[t._id] = a
        with np.errstate(all="ignore"):
            for t in self._schedule():
                if t._op == "view":
                    env[t._id] = env[t._args[0]._id].reshape(t.shape)
                elif t._op in _REDUCTIONS or t._op in _ARG_REDUCTIONS:
                    env[t._id] = _np_reduce(t, env[t._args[0]._id])
                elif t._op == "pad":
                    widths, value = t._attrs
                    env[t._id] = np.pad(env[t._args[0]._id], widths,
                                        constant_values=value).astype(_numpy_dtype(t.dtype))
                else:
                    env[t._id] = _compute(t, _NumpyBody(), lambda x: env[x._id])
        # an output that is an input is copied: the caller's array is not handed back
        return [env[t._id].copy() if t._op == "input" else env[t._id]
                for _, t in self._outputs]


def _generic(t, values):
    """The lines of the one linalg.generic that computes op tensor ``t``."""
    ins = list({a._id: a for a in t._args if isinstance(a, Tensor)}.values())
    body = _MlirBody()
    block_args = {a._id: body.arg(f"%in{k}", a.dtype) for k, a in enumerate(ins)}
    result = _compute(t, body, lambda a: block_args[a._id])
    out_type = _mlir_type(t)
    maps = [_indexing_map(a.shape, t.shape, a._absent, t._absent) for a in ins]
    maps.append(_indexing_map(t.shape, t.shape, t._absent, t._absent))
    iterators = ", ".join(['"parallel"'] * len(_mlir_shape(t)))
    bb_args = [f"%in{k}: {a.dtype.mlir}" for k, a in enumerate(ins)]
    directive = ", fusion.materialize" if t._id in t.program._materialize else ""
    return [
        f"    %e{t._id} = tensor.empty() : {out_type}",
        f"    %t{t._id} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
        f"iterator_types = [{iterators}]{directive}}} "
        f"ins({', '.join(values[a._id] for a in ins)} : "
        f"{', '.join(_mlir_type(a) for a in ins)}) "
        f"outs(%e{t._id} : {out_type}) {{",
        f"    ^bb0({', '.join(bb_args + [f'%out: {t.dtype.mlir}'])}):",
        *("      " + line for line in body.lines),
        f"      linalg.yield {result} : {t.dtype.mlir}",
        f"    }} -> {out_type}",
    ]


# argmax / argmin: (extremum op, update predicate "x ugt m", identity of the extremum)
_ARG_REDUCTIONS = {"argmax": ("maximum", "ugt", "sgt", -math.inf),
                   "argmin": ("minimum", "ult", "slt", math.inf)}


def _arg_reduction(t, values):
    """The lines of an argmax/argmin: one linalg.generic carrying the running extremum
    (in the compute dtype) and its column (i64), as torch-mlir writes torch.argmax,
    with numpy's rule for NaN: the index moves when ``x ugt m`` (greater, or either is
    NaN) while m is not NaN yet, so the first NaN's column wins and stays."""
    x = t._args[0]
    in_map, out_map, iterators = _reduction_loops(t)
    ct = _compute_dtype(x.dtype)
    extremum, fpred, ipred, start = _ARG_REDUCTIONS[t._op]
    if ct.is_float:
        identity = _float_literal(start, ct)
    else:
        limit = 1 << (ct.bits - 1)
        identity = str(-limit if start < 0 else limit - 1)
    body = _MlirBody()
    v = body.convert(body.arg("%in0", x.dtype), ct)
    m = body.arg("%m", ct)
    n = t._id
    if ct.is_float:
        moves = body._emit(f"arith.cmpf {fpred}, {v}, {m} : {ct.mlir}", I1)
        ordered = body._emit(f"arith.cmpf ord, {m}, {m} : {ct.mlir}", I1)
        moves = body._emit(f"arith.andi {moves}, {ordered} : i1", I1)
    else:
        moves = body._emit(f"arith.cmpi {ipred}, {v}, {m} : {ct.mlir}", I1)
    best = body.binary(extremum, v, m)
    body.lines += [f"%col = linalg.index {len(_mlir_shape(t))} : index",
                   "%coli = arith.index_cast %col : index to i64",
                   f"%idx = arith.select {moves}, %coli, %i : i64"]
    m_type = _tensor_type(_mlir_shape(t), ct)
    out_type = _mlir_type(t)
    directive = ", fusion.materialize" if t._id in t.program._materialize else ""
    values[t._id] = f"%t{n}#1"
    return [
        f"    %cm{n} = arith.constant {identity} : {ct.mlir}",
        f"    %ci{n} = arith.constant 0 : i64",
        f"    %em{n} = tensor.empty() : {m_type}",
        f"    %m{n} = linalg.fill ins(%cm{n} : {ct.mlir}) outs(%em{n} : {m_type}) -> {m_type}",
        f"    %ei{n} = tensor.empty() : {out_type}",
        f"    %i{n} = linalg.fill ins(%ci{n} : i64) outs(%ei{n} : {out_type}) -> {out_type}",
        f"    %t{n}:2 = linalg.generic {{indexing_maps = [{in_map}, {out_map}, {out_map}], "
        f"iterator_types = [{iterators}]{directive}}} "
        f"ins({values[x._id]} : {_mlir_type(x)}) outs(%m{n}, %i{n} : {m_type}, {out_type}) {{",
        f"    ^bb0(%in0: {x.dtype.mlir}, %m: {ct.mlir}, %i: i64):",
        *("      " + line for line in body.lines),
        f"      linalg.yield {best}, %idx : {ct.mlir}, i64",
        f"    }} -> ({m_type}, {out_type})",
    ]


def _pad(t, values):
    """The lines of a tensor.pad (fusion-normalize makes it a gather generic)."""
    x, (widths, value) = t._args[0], t._attrs
    present = [k for k in range(len(x.shape)) if k not in x._absent]
    low = ", ".join(str(widths[k][0]) for k in present)
    high = ", ".join(str(widths[k][1]) for k in present)
    dt, n = t.dtype, t._id
    literal = _float_literal(value, dt) if dt.is_float else str(value)
    idx = ", ".join(f"%i{n}_{k}: index" for k in range(len(present)))
    return [
        f"    %c{n} = arith.constant {literal} : {dt.mlir}",
        f"    %t{n} = tensor.pad {values[x._id]} low[{low}] high[{high}] {{",
        f"    ^bb0({idx}):",
        f"      tensor.yield %c{n} : {dt.mlir}",
        f"    }} : {_mlir_type(x)} to {_mlir_type(t)}",
    ]


# The reduction ops: op name -> (the binary op that accumulates, the identity).
_REDUCTIONS = {"reduce_sum": ("add", 0), "reduce_max": ("maximum", -math.inf),
               "reduce_min": ("minimum", math.inf)}


def _identity_literal(op, dt):
    """The MLIR literal of reduction ``op``'s identity in accumulator dtype ``dt``."""
    value = _REDUCTIONS[op][1]
    if dt.is_float:
        return _float_literal(float(value), dt)
    limit = 1 << (dt.bits - 1)
    return str({0: 0, -math.inf: -limit, math.inf: limit - 1}[value])


def _reduction_loops(t):
    """A reduction's loops over the dims its operand has: the kept ones first, the reduced
    ones last. Returns the operand's and the result's indexing maps and the iterators."""
    x, (axes, _) = t._args[0], t._attrs
    present = [k for k in range(len(x.shape)) if k not in x._absent]
    kept = [k for k in present if k not in axes]
    loops = kept + [k for k in present if k in axes]
    assert _mlir_shape(t) == tuple(x.shape[k] for k in kept)
    dims = ", ".join(f"d{i}" for i in range(len(loops)))
    in_map = f"affine_map<({dims}) -> ({', '.join(f'd{loops.index(k)}' for k in present)})>"
    out_map = f"affine_map<({dims}) -> ({', '.join(f'd{i}' for i in range(len(kept)))})>"
    iterators = ", ".join(['"parallel"'] * len(kept)
                          + ['"reduction"'] * (len(loops) - len(kept)))
    return in_map, out_map, iterators


def _reduction(t, values):
    """The lines of a reduction: its identity constant, the tensor.empty and linalg.fill
    of its accumulator, and the linalg.generic: kept dims' loops first, reduced last."""
    x = t._args[0]
    in_map, out_map, iterators = _reduction_loops(t)
    acc, out_type, in_type = t.dtype, _mlir_type(t), _mlir_type(x)
    body = _MlirBody()
    value = body.convert(body.arg("%in0", x.dtype), acc)
    result = body.binary(_REDUCTIONS[t._op][0], value, body.arg("%out", acc))
    directive = ", fusion.materialize" if t._id in t.program._materialize else ""
    n = t._id
    return [
        f"    %c{n} = arith.constant {_identity_literal(t._op, acc)} : {acc.mlir}",
        f"    %e{n} = tensor.empty() : {out_type}",
        f"    %i{n} = linalg.fill ins(%c{n} : {acc.mlir}) outs(%e{n} : {out_type}) "
        f"-> {out_type}",
        f"    %t{n} = linalg.generic {{indexing_maps = [{in_map}, {out_map}], "
        f"iterator_types = [{iterators}]{directive}}} "
        f"ins({values[x._id]} : {in_type}) outs(%i{n} : {out_type}) {{",
        f"    ^bb0(%in0: {x.dtype.mlir}, %out: {acc.mlir}):",
        *("      " + line for line in body.lines),
        f"      linalg.yield {result} : {acc.mlir}",
        f"    }} -> {out_type}",
    ]


# ----------------------------------------------------------- op semantics, two backends

def _sigmoid(be, x):
    one = be.const(1.0, x)
    return be.binary("div", one, be.binary("add", one, be.unary("exp", be.unary("neg", x))))


def _gelu(be, x):
    erf_term = be.unary("erf", be.binary("mul", x, be.const(0.7071067811865476, x)))
    half_x = be.binary("mul", be.const(0.5, x), x)
    return be.binary("mul", half_x, be.binary("add", be.const(1.0, x), erf_term))


_COMPOSITE = {
    "relu": lambda be, x: be.binary("maximum", x, be.const(0, x)),
    "sigmoid": _sigmoid,
    "silu": lambda be, x: be.binary("mul", x, _sigmoid(be, x)),
    "gelu": _gelu,
}


def _compute(t, be, load):
    """Builds op tensor ``t``'s element value on backend ``be``, in ``t.dtype``.

    ``load(tensor)`` gives a tensor operand's element value in the operand's dtype."""
    op, args = t._op, t._args
    if op == "expand":  # the same values, at the full numpy shape
        return load(args[0])
    if op == "cast":
        return be.convert(load(args[0]), t.dtype)
    if op == "where":
        return be.select(*(load(a) if isinstance(a, Tensor) else be.scalar(a, t.dtype)
                           for a in args))
    ct = _compute_dtype(next(a.dtype for a in args if isinstance(a, Tensor)))
    vals = [be.convert(load(a), ct) if isinstance(a, Tensor) else be.scalar(a, ct)
            for a in args]
    if op in _BINARY_PRIMS:
        result = be.binary(op, *vals)
    elif op in _UNARY_PRIMS:
        result = be.unary(op, *vals)
    elif op in _COMPARE:
        result = be.compare(op, *vals)
    else:
        result = _COMPOSITE[op](be, *vals)
    return be.convert(result, t.dtype)


_FLOAT_BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
                 "div": "arith.divf", "maximum": "arith.maximumf",
                 "minimum": "arith.minimumf", "pow": "math.powf"}
_INT_BINARY = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli",
               "maximum": "arith.maxsi", "minimum": "arith.minsi"}
_FLOAT_UNARY = {"neg": "arith.negf", "abs": "math.absf", "exp": "math.exp", "log": "math.log",
                "sqrt": "math.sqrt", "rsqrt": "math.rsqrt", "tanh": "math.tanh",
                "erf": "math.erf"}
_PREDICATES = {  # float (ordered; une for !=), signed int, i1 (false < true)
    "gt": ("ogt", "sgt", "ugt"), "ge": ("oge", "sge", "uge"), "lt": ("olt", "slt", "ult"),
    "le": ("ole", "sle", "ule"), "eq": ("oeq", "eq", "eq"), "ne": ("une", "ne", "ne"),
}


class _MlirBody:
    """Backend that writes a linalg.generic body: values are SSA names."""

    def __init__(self):
        self.lines, self._types = [], {}

    def arg(self, name, dt):
        self._types[name] = dt
        return name

    def _emit(self, rhs, dt):
        name = f"%v{len(self.lines)}"
        self.lines.append(f"{name} = {rhs}")
        self._types[name] = dt
        return name

    def scalar(self, value, dt):
        if dt is I1:
            return self._emit(f"arith.constant {'true' if value else 'false'}", dt)
        if dt.is_float:
            literal = _float_literal(_round_float(float(value), dt), dt)
        else:
            literal = str(int(value))
        return self._emit(f"arith.constant {literal} : {dt.mlir}", dt)

    def const(self, value, like):
        return self.scalar(value, self._types[like])

    def binary(self, kind, a, b):
        dt = self._types[a]
        op = (_FLOAT_BINARY if dt.is_float else _INT_BINARY)[kind]
        return self._emit(f"{op} {a}, {b} : {dt.mlir}", dt)

    def unary(self, kind, a):
        dt = self._types[a]
        if dt.is_float:
            return self._emit(f"{_FLOAT_UNARY[kind]} {a} : {dt.mlir}", dt)
        if kind == "abs":
            return self._emit(f"math.absi {a} : {dt.mlir}", dt)
        return self.binary("sub", self.scalar(0, dt), a)  # neg: arith has no negi

    def compare(self, kind, a, b):
        dt = self._types[a]
        if dt.is_float:
            return self._emit(f"arith.cmpf {_PREDICATES[kind][0]}, {a}, {b} : {dt.mlir}", I1)
        pred = _PREDICATES[kind][2 if dt is I1 else 1]
        return self._emit(f"arith.cmpi {pred}, {a}, {b} : {dt.mlir}", I1)

    def select(self, c, a, b):
        dt = self._types[a]
        return self._emit(f"arith.select {c}, {a}, {b} : {dt.mlir}", dt)

    def convert(self, v, dst):
        src = self._types[v]
        if src is dst:
            return v
        if src.is_float and dst.is_float:
            if src.bits == dst.bits:  # f16 <-> bf16 goes through f32
                v, src = self.convert(v, F32), F32
            op = "arith.extf" if dst.bits > src.bits else "arith.truncf"
            return self._emit(f"{op} {v} : {src.mlir} to {dst.mlir}", dst)
        if src.is_float:
            v, src = self.convert(v, _compute_dtype(src)), _compute_dtype(src)
            if dst is I1:
                return self.compare("ne", v, self.scalar(0.0, src))
            return self._emit(f"arith.fptosi {v} : {src.mlir} to {dst.mlir}", dst)
        if src is I1:
            op = "arith.uitofp" if dst.is_float else "arith.extui"
        elif dst.is_float:
            op = "arith.sitofp"
        elif dst is I1:
            return self.compare("ne", v, self.scalar(0, src))
        else:
            op = "arith.extsi" if dst.bits > src.bits else "arith.trunci"
        return self._emit(f"{op} {v} : {src.mlir} to {dst.mlir}", dst)


def _np_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


_NP_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
              "maximum": np.maximum, "minimum": np.minimum, "pow": np.power}
_NP_UNARY = {"neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log,
             "sqrt": np.sqrt, "rsqrt": lambda x: np.reciprocal(np.sqrt(x)), "tanh": np.tanh,
             "erf": _np_erf}
_NP_COMPARE = {"gt": np.greater, "ge": np.greater_equal, "lt": np.less,
               "le": np.less_equal, "eq": np.equal, "ne": np.not_equal}


def _np_convert(v, dst):
    """Array ``v`` converted to dtype ``dst`` as both targets convert: floats to
    integers saturating (NaN to 0, beyond the range to its nearest bound, else
    toward zero), where numpy's cast is undefined out of range."""
    if dst.kind == "int" and dst is not I1 and (v.dtype.kind == "f" or
                                               v.dtype.name == "bfloat16"):
        info = np.iinfo(_numpy_dtype(dst))
        w = np.trunc(np.nan_to_num(v.astype(np.float64), nan=0.0,
                                   posinf=np.inf, neginf=-np.inf))
        # (float64 rounds int64's top up to 2**63: masked, not cast)
        top, bottom = w >= float(info.max), w <= float(info.min)
        out = np.where(top | bottom, 0.0, w).astype(_numpy_dtype(dst))
        out[top] = info.max
        out[bottom] = info.min
        return out
    return v.astype(_numpy_dtype(dst), copy=False)


def _np_reduce(t, a):
    """Reduction ``t`` of array ``a`` (numpy shape), accumulated in ``t.dtype``."""
    axes, keepdims = t._attrs
    if t._op in _ARG_REDUCTIONS:  # searched in the compute dtype, int64 indices
        a = a.astype(_numpy_dtype(_compute_dtype(t._args[0].dtype)), copy=False)
        fn = np.argmax if t._op == "argmax" else np.argmin
        return np.asarray(fn(a, axis=axes[0], keepdims=keepdims), dtype=np.int64)
    a = _np_convert(a, t.dtype)
    fn = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min}[t._op]
    extra = {"dtype": a.dtype} if t._op == "reduce_sum" else {}  # no int promotion
    return np.asarray(fn(a, axis=axes, keepdims=keepdims, **extra), dtype=a.dtype)


class _NumpyBody:
    """Backend that evaluates with numpy: values are whole arrays."""

    def scalar(self, value, dt):
        return np.asarray(value, dtype=_numpy_dtype(dt))

    def const(self, value, like):
        return np.asarray(value, dtype=like.dtype)

    def binary(self, kind, a, b):
        return np.asarray(_NP_BINARY[kind](a, b))

    def unary(self, kind, a):
        return np.asarray(_NP_UNARY[kind](a))

    def compare(self, kind, a, b):
        return np.asarray(_NP_COMPARE[kind](a, b))

    def select(self, c, a, b):
        return np.asarray(np.where(c, a, b))

    def convert(self, v, dst):
        return _np_convert(v, dst)


# ------------------------------------------------------------------------------- ops

def _tensors(args):
    return [a for a in args if isinstance(a, Tensor)]


def _make(op, dtype, args):
    tensors = _tensors(args)
    shape = _broadcast(op, args)
    return Tensor(tensors[0].program, shape, dtype, op, args, _absent_dims(shape, tensors))


def _same_program(op, args):
    tensors = _tensors(args)
    if not tensors:
        raise BuilderError(f"{op}: needs at least one kfuse Tensor operand, got "
                           f"{', '.join(repr(a) for a in args)}")
    for t in tensors[1:]:
        if t.program is not tensors[0].program:
            raise BuilderError(f"{op}: operands come from different programs "
                               f"({tensors[0].program.name!r} and {t.program.name!r}); "
                               "build every tensor of an op from one Program")
    return tensors


def _elementwise(op, *args):
    """add, neg, exp, gt, ...: operands of one dtype; scalars take the tensors' dtype."""
    tensors = _same_program(op, args)
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dt:
            raise BuilderError(
                f"{op}: operand dtypes differ ({' and '.join(_describe(t) for t in tensors)});"
                f" kfuse does not promote implicitly: kb.cast one operand to the other's "
                "dtype first")
    if op in _FLOAT_ONLY and not dt.is_float:
        raise BuilderError(f"{op}: needs float operands, got {_describe(tensors[0])}; "
                           f"kb.cast it to a float dtype (e.g. 'f32') first")
    if op in _NUMERIC and dt is I1:
        raise BuilderError(f"{op}: does not take i1 (bool) operands, got "
                           f"{_describe(tensors[0])}; kb.cast it to an int or float dtype "
                           "first")
    args = [a if isinstance(a, Tensor) else _coerce_scalar(op, a, dt, tensors[0])
            for a in args]
    return _make(op, I1 if op in _COMPARE else dt, args)


def add(a, b): return _elementwise("add", a, b)
def sub(a, b): return _elementwise("sub", a, b)
def mul(a, b): return _elementwise("mul", a, b)
def div(a, b): return _elementwise("div", a, b)
def maximum(a, b): return _elementwise("maximum", a, b)
def minimum(a, b): return _elementwise("minimum", a, b)
def pow(a, b): return _elementwise("pow", a, b)  # shadows the builtin, like numpy's
def gt(a, b): return _elementwise("gt", a, b)
def ge(a, b): return _elementwise("ge", a, b)
def lt(a, b): return _elementwise("lt", a, b)
def le(a, b): return _elementwise("le", a, b)
def eq(a, b): return _elementwise("eq", a, b)
def ne(a, b): return _elementwise("ne", a, b)
def neg(x): return _elementwise("neg", x)
def abs(x): return _elementwise("abs", x)  # shadows the builtin, like numpy's
def exp(x): return _elementwise("exp", x)
def log(x): return _elementwise("log", x)
def sqrt(x): return _elementwise("sqrt", x)
def rsqrt(x): return _elementwise("rsqrt", x)
def tanh(x): return _elementwise("tanh", x)
def sigmoid(x): return _elementwise("sigmoid", x)
def relu(x): return _elementwise("relu", x)
def gelu(x): return _elementwise("gelu", x)
def silu(x): return _elementwise("silu", x)
def erf(x): return _elementwise("erf", x)


def where(cond, a, b):
    """Elementwise ``a if cond else b``; cond an i1 tensor, a and b of one dtype."""
    if not isinstance(cond, Tensor) or cond.dtype is not I1:
        raise BuilderError(f"where: cond must be an i1 tensor (e.g. from a comparison), got "
                           f"{_describe(cond)}; use a comparison or kb.cast(cond, 'i1')")
    _same_program("where", (cond, a, b))
    choices = _tensors((a, b))
    if not choices:
        raise BuilderError(f"where: a and b are both python scalars ({a!r}, {b!r}), so "
                           "their dtype is unknown; make one of them a Tensor")
    dt = choices[0].dtype
    if len(choices) == 2 and b.dtype is not dt:
        raise BuilderError(f"where: a and b dtypes differ ({_describe(a)} and "
                           f"{_describe(b)}); kb.cast one to the other's dtype first")
    args = [cond] + [x if isinstance(x, Tensor) else _coerce_scalar("where", x, dt, choices[0])
                     for x in (a, b)]
    return _make("where", dt, args)


def pad(x, pad_width, value=0):
    """Constant padding, like ``numpy.pad(x, pad_width, constant_values=value)``:
    ``pad_width`` is one ``(before, after)`` pair per dim (or a single pair for every
    dim) of non-negative ints; ``value`` a python scalar of x's kind. Fuses with the
    elementwise ops that read the result (each output element reads x once, or
    not at all in the border)."""
    if not isinstance(x, Tensor):
        raise BuilderError(f"pad: expected a kfuse Tensor, got {x!r}")
    if x.dtype is I1:
        raise BuilderError(f"pad: does not take i1 (bool) tensors, got {_describe(x)}; "
                           "kb.cast it to an int or float dtype first")
    rank = len(x.shape)
    try:
        if len(pad_width) == 2 and all(isinstance(w, numbers.Integral) for w in pad_width):
            pairs = [tuple(pad_width)] * rank  # one pair for every dim
        else:
            pairs = [tuple(p) for p in pad_width]
    except TypeError:
        pairs = None
    if (pairs is None or len(pairs) != rank or any(len(p) != 2 for p in pairs) or any(
            isinstance(w, (bool, np.bool_)) or not isinstance(w, numbers.Integral) or w < 0
            for p in pairs for w in p)):
        raise BuilderError(f"pad: pad_width {pad_width!r} must be one (before, after) pair "
                           f"of non-negative ints per dim of the {_describe(x)} (or one "
                           "pair for every dim)")
    widths = tuple((int(a), int(b)) for a, b in pairs)
    for k in x._absent:
        if widths[k] != (0, 0):
            raise BuilderError(f"pad: dim {k} of the {_describe(x)} is a size-1 dim kept by "
                               "a keepdims reduction; padding it is not supported (reduce "
                               "with keepdims=False and pad the result)")
    v = _coerce_scalar("pad", value, x.dtype, x)
    if all(w == (0, 0) for w in widths):  # (a 0-d tensor too): nothing to pad
        return x
    shape = tuple(d + a + b for d, (a, b) in zip(x.shape, widths))
    return Tensor(x.program, shape, x.dtype, "pad", [x], list(x._absent), (widths, v))


def materialize(t):
    """Directive: write ``t`` to memory instead of fusing it into its consumers
    (the fusion report shows the edges this leaves unfused). Returns ``t``."""
    if not isinstance(t, Tensor):
        raise BuilderError(f"materialize: expected a Tensor, got {type(t).__name__}")
    if t._op == "input":
        raise BuilderError("materialize: an input is already in memory; mark an op result")
    source = t
    while source._op == "view":  # a view has no op of its own: mark the one it shows
        source = source._args[0]
    t.program._materialize.add(source._id)
    return t


def cast(x, dtype):
    """Converts ``x`` to ``dtype``; the same tensor when it already has that dtype."""
    if not isinstance(x, Tensor):
        raise BuilderError(f"cast: expected a kfuse Tensor, got {x!r}")
    dt = _get_dtype(dtype, "cast")
    return x if dt is x.dtype else _make("cast", dt, [x])


# ------------------------------------------------------------------------- reductions

def _reduced_axes(op, x, axis):
    """``axis`` (None, an int or a tuple of ints, numpy style) as sorted dims of ``x``."""
    rank = len(x.shape)
    if axis is None:
        return tuple(range(rank))
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    dims = []
    for a in items:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, numbers.Integral):
            raise BuilderError(f"{op}: axis {axis!r} is not None, an int or a tuple of ints "
                               f"(reducing the {_describe(x)})")
        if not -rank <= a < rank:
            valid = (f"valid axes are {-rank}..{rank - 1}" if rank else
                     "a 0-d tensor has no axes: use axis=None")
            raise BuilderError(f"{op}: axis {axis!r} is out of range for the {_describe(x)} "
                               f"({valid})")
        k = int(a) % rank
        if k in dims:
            raise BuilderError(f"{op}: axis {axis!r} names dim {k} twice (reducing the "
                               f"{_describe(x)}); list each dim once")
        dims.append(k)
    return tuple(sorted(dims))


def _reduced_shape(x, axes, keepdims):
    """The numpy shape of reducing ``x`` over ``axes``, and its absent dims."""
    if keepdims:
        return (tuple(1 if k in axes else d for k, d in enumerate(x.shape)),
                sorted(set(axes) | set(x._absent)))
    kept = [k for k in range(len(x.shape)) if k not in axes]
    return (tuple(x.shape[k] for k in kept),
            [i for i, k in enumerate(kept) if k in x._absent])


def _sum_dtype(x, dtype):
    """The dtype of ``sum(x, dtype=dtype)``, numpy's: ``dtype`` where given, else x's
    for floats and int64, and int64 for narrower ints and booleans (numpy and torch
    promote them so that a sum of many small integers does not wrap)."""
    if dtype is not None:
        return _get_dtype(dtype, "sum")
    return x.dtype if x.dtype.is_float or x.dtype is I64 else I64


def _reduce(op, x, axis, keepdims, dtype=None):
    """sum, max, min and mean: one reduction generic, then for f16/bf16 (and mean) one
    elementwise generic that truncates (and divides by the count). A sum accumulates in
    its result's dtype (_sum_dtype; f32 for f16/bf16), converting each element."""
    if not isinstance(x, Tensor):
        raise BuilderError(f"{op}: expected a kfuse Tensor, got {x!r}")
    out_dt = _sum_dtype(x, dtype) if op == "sum" else x.dtype
    if x.dtype is I1 and op != "sum":
        raise BuilderError(f"{op}: does not take i1 (bool) tensors, got {_describe(x)} "
                           f"(axis={axis!r}); kb.cast it to an int or float dtype first")
    if op == "mean" and not x.dtype.is_float:
        raise BuilderError(f"mean: needs a float tensor, got {_describe(x)} (axis={axis!r}); "
                           "kb.cast it to a float dtype (e.g. 'f32') first")
    if not isinstance(keepdims, (bool, np.bool_)):
        raise BuilderError(f"{op}: keepdims must be True or False, got {keepdims!r}")
    axes = _reduced_axes(op, x, axis)
    if not axes:  # numpy: reducing over no dims leaves the values as they are
        return x
    shape, absent = _reduced_shape(x, axes, keepdims)
    if all(k in x._absent for k in axes):
        # every reduced dim is a size-1 dim that x's MLIR value lacks: the values are x's,
        # and so is the MLIR value (a "view": no op, only the numpy shape differs)
        view = Tensor(x.program, shape, x.dtype, "view", [x], absent)
        return cast(view, out_dt)
    acc_dt = _compute_dtype(out_dt)
    kind = "reduce_sum" if op in ("sum", "mean") else "reduce_" + op
    r = Tensor(x.program, shape, acc_dt, kind, [x], absent, (axes, bool(keepdims)))
    if op == "mean":  # divide in the accumulator type, then round once to x's dtype
        return _make("div", x.dtype, [r, float(math.prod(x.shape[k] for k in axes))])
    return r if acc_dt is out_dt else _make("cast", out_dt, [r])


def reduce_sum(x, axis=None, keepdims=False, dtype=None):
    """Sum over ``axis`` (None: all dims; an int, negative from the end; a tuple), like
    numpy, in ``dtype``: by default x's dtype for floats (f16/bf16 accumulate in f32)
    and int64 for integers and booleans, as numpy and torch give (a boolean sum counts
    the true values); ``dtype="i32"`` keeps a narrower integer sum, which wraps on
    overflow. ``kb.sum``."""
    return _reduce("sum", x, axis, keepdims, dtype)


def amax(x, axis=None, keepdims=False):
    """Maximum over ``axis`` (as in ``sum``); nan propagates. ``kb.max``."""
    return _reduce("max", x, axis, keepdims)


def amin(x, axis=None, keepdims=False):
    """Minimum over ``axis`` (as in ``sum``); nan propagates. ``kb.min``."""
    return _reduce("min", x, axis, keepdims)


def _arg_reduce(op, x, axis, keepdims):
    """argmax and argmin: the int64 index along one axis."""
    if not isinstance(x, Tensor):
        raise BuilderError(f"{op}: expected a kfuse Tensor, got {x!r}")
    if x.dtype is I1:
        raise BuilderError(f"{op}: does not take i1 (bool) tensors, got {_describe(x)} "
                           f"(axis={axis!r}); kb.cast it to an int or float dtype first")
    if not isinstance(keepdims, (bool, np.bool_)):
        raise BuilderError(f"{op}: keepdims must be True or False, got {keepdims!r}")
    if len(x.shape) == 0:
        raise BuilderError(f"{op}: the {_describe(x)} has no axis to search")
    if axis is None and len(x.shape) > 1:
        raise BuilderError(f"{op}: axis=None over the {_describe(x)} asks for an index "
                           "into the flattened tensor, which kfuse's builder cannot "
                           "reshape to; give one axis")
    if isinstance(axis, (tuple, list)):
        raise BuilderError(f"{op}: axis {axis!r} must be one int (numpy's {op} searches "
                           f"along a single axis of the {_describe(x)})")
    axes = _reduced_axes(op, x, axis)
    (k,) = axes
    if k in x._absent:
        raise BuilderError(f"{op}: axis {k} of the {_describe(x)} is a size-1 dim kept by a "
                           f"keepdims reduction (its {op} is 0 everywhere); search an axis "
                           "the tensor has, or reduce with keepdims=False")
    shape, absent = _reduced_shape(x, axes, keepdims)
    return Tensor(x.program, shape, I64, op, [x], absent, (axes, bool(keepdims)))


def argmax(x, axis=None, keepdims=False):
    """Index (int64) of the maximum along ``axis`` (an int; None only for a 1-d
    tensor), like ``numpy.argmax``: the first maximum, or the first NaN where there
    is one. ``kb.argmax`` / ``x.argmax``."""
    return _arg_reduce("argmax", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index (int64) of the minimum along ``axis``, like ``numpy.argmin`` (the first
    minimum, or the first NaN). ``kb.argmin`` / ``x.argmin``."""
    return _arg_reduce("argmin", x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    """Mean over ``axis`` (as in ``sum``) of a float tensor: the sum divided by the count
    in the accumulator type (f32 for f16/bf16), rounded once to x's dtype."""
    return _reduce("mean", x, axis, keepdims)


# numpy's names. They replace the builtins for all of this module's code (globals are
# looked up at call time), so the code above calls builtins.max where it means that.
sum = reduce_sum  # noqa: A001
max = amax  # noqa: A001
min = amin  # noqa: A001
