"""The builder API: write an elementwise tensor program in Python, get linalg MLIR text.

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
"""

import math
import numbers
import re
import struct

import numpy as np

from . import dtypes
from .dtypes import BF16, F16, F32, F64, I1
from .errors import BuilderError

__all__ = [
    "Program", "Tensor",
    "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh",
    "sigmoid", "relu", "gelu", "silu", "erf", "maximum", "minimum", "pow", "where",
    "cast", "materialize", "gt", "ge", "lt", "le", "eq", "ne",
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
    quantum = max(exponent - 8, -133)  # 8 significant bits; subnormal spacing is 2**-133
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
    rank = max(len(s) for s in shapes)
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


def _indexing_map(in_shape, out_shape):
    """Right-aligned map of an input onto the output dims; 0 where a size-1 dim stretches."""
    rank = len(out_shape)
    dims = ", ".join(f"d{j}" for j in range(rank))
    exprs = []
    for k, size in enumerate(in_shape):
        j = rank - len(in_shape) + k
        exprs.append("0" if size == 1 and out_shape[j] != 1 else f"d{j}")
    return f"affine_map<({dims}) -> ({', '.join(exprs)})>"


def _tensor_type(shape, dt):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dt.mlir + ">"


# ------------------------------------------------------------------ tensors and program

class Tensor:
    """A value of a Program: a static shape and a dtype, the result of an input or an op."""

    __slots__ = ("program", "shape", "dtype", "_op", "_args", "_id")
    __array_ufunc__ = None  # numpy scalars and arrays defer to the reflected operators
    __hash__ = object.__hash__

    def __init__(self, program, shape, dtype, op, args=()):
        self.program, self.shape, self.dtype = program, shape, dtype
        self._op, self._args = op, tuple(args)
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


class Program:
    """An elementwise tensor program: named inputs, ops on Tensors, named outputs."""

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
            values[t._id] = f"%t{t._id}"
            lines += _generic(t, values)
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
    out_type = _tensor_type(t.shape, t.dtype)
    maps = [_indexing_map(a.shape, t.shape) for a in ins] + [_indexing_map(t.shape, t.shape)]
    iterators = ", ".join(['"parallel"'] * len(t.shape))
    bb_args = [f"%in{k}: {a.dtype.mlir}" for k, a in enumerate(ins)]
    directive = ", fusion.materialize" if t._id in t.program._materialize else ""
    return [
        f"    %e{t._id} = tensor.empty() : {out_type}",
        f"    %t{t._id} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
        f"iterator_types = [{iterators}]{directive}}} "
        f"ins({', '.join(values[a._id] for a in ins)} : "
        f"{', '.join(_tensor_type(a.shape, a.dtype) for a in ins)}) "
        f"outs(%e{t._id} : {out_type}) {{",
        f"    ^bb0({', '.join(bb_args + [f'%out: {t.dtype.mlir}'])}):",
        *("      " + line for line in body.lines),
        f"      linalg.yield {result} : {t.dtype.mlir}",
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
        return v.astype(_numpy_dtype(dst), copy=False)


# ------------------------------------------------------------------------------- ops

def _tensors(args):
    return [a for a in args if isinstance(a, Tensor)]


def _make(op, dtype, args):
    return Tensor(_tensors(args)[0].program, _broadcast(op, args), dtype, op, args)


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


def materialize(t):
    """Directive: write ``t`` to memory instead of fusing it into its consumers
    (the fusion report shows the edges this leaves unfused). Returns ``t``."""
    if not isinstance(t, Tensor):
        raise BuilderError(f"materialize: expected a Tensor, got {type(t).__name__}")
    if t._op == "input":
        raise BuilderError("materialize: an input is already in memory; mark an op result")
    t.program._materialize.add(t._id)
    return t


def cast(x, dtype):
    """Converts ``x`` to ``dtype``; the same tensor when it already has that dtype."""
    if not isinstance(x, Tensor):
        raise BuilderError(f"cast: expected a kfuse Tensor, got {x!r}")
    dt = _get_dtype(dtype, "cast")
    return x if dt is x.dtype else _make("cast", dt, [x])
