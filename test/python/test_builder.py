"""Tests of kfuse.builder: the emitted MLIR (shape, maps, bodies, parse + verify), the
BuilderError cases, and the numpy reference interpreter."""

import math
import re

import numpy as np
import pytest

from kfuse import builder as kb
from kfuse import dtypes
from kfuse.errors import BuilderError

FLOATS = ["f32", "f16", "bf16", "f64"]
INTS = ["i32", "i64"]
UNARY_FLOAT = ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "gelu", "silu", "erf"]
UNARY_NUMERIC = ["neg", "abs", "relu"]
BINARY_NUMERIC = ["add", "sub", "mul", "maximum", "minimum"]
BINARY_FLOAT = ["div", "pow"]
COMPARE = ["gt", "ge", "lt", "le", "eq", "ne"]


@pytest.fixture(scope="module")
def verify():
    """Parses and verifies MLIR text with the MLIR Python bindings (skips without them)."""
    ir = pytest.importorskip("mlir.ir")

    def check(text):
        with ir.Context():
            module = ir.Module.parse(text)
            assert module.operation.verify()
        return text
    return check


def one_op(op, dtype, shapes=((4, 8),), extra=()):
    p = kb.Program("t")
    ins = [p.input(f"x{k}", s, dtype) for k, s in enumerate(shapes)]
    p.output(getattr(kb, op)(*ins, *extra), name="y")
    return p


def generics(text):
    return text.count("linalg.generic")


def body(text, k=0):
    """The body lines of the k-th linalg.generic."""
    blocks = re.findall(r"\^bb0\(.*?\):\n(.*?)\n\s*\} ->", text, re.S)
    return [line.strip() for line in blocks[k].splitlines()]


def ml_dtypes_or_skip():
    pytest.importorskip("ml_dtypes")


# ------------------------------------------------------------------ parse and verify

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", UNARY_FLOAT + UNARY_NUMERIC)
def test_unary_float_parses(verify, op, dtype):
    text = verify(one_op(op, dtype).to_mlir())
    assert generics(text) == 1


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", UNARY_NUMERIC)
def test_unary_int_parses(verify, op, dtype):
    assert generics(verify(one_op(op, dtype).to_mlir())) == 1


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("op", BINARY_NUMERIC)
def test_binary_parses(verify, op, dtype):
    text = verify(one_op(op, dtype, shapes=((4, 1), (8,))).to_mlir())
    assert generics(text) == 1


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BINARY_FLOAT)
def test_binary_float_parses(verify, op, dtype):
    assert generics(verify(one_op(op, dtype, shapes=((8,), (8,))).to_mlir())) == 1


@pytest.mark.parametrize("dtype", FLOATS + INTS + ["i1"])
@pytest.mark.parametrize("op", COMPARE)
def test_compare_parses(verify, op, dtype):
    text = verify(one_op(op, dtype, shapes=((8,), (8,))).to_mlir())
    assert "tensor<8xi1> {kfuse.name = \"y\"}" in text


@pytest.mark.parametrize("dtype", FLOATS + INTS + ["i1"])
def test_where_parses(verify, dtype):
    p = kb.Program("w")
    c = p.input("c", (4, 1), "i1")
    a = p.input("a", (8,), dtype)
    scalar = True if dtype == "i1" else 3
    p.output(kb.where(c, a, scalar))
    p.output(kb.where(c, scalar, a))
    text = verify(p.to_mlir())
    assert generics(text) == 2 and "arith.select" in text


@pytest.mark.parametrize("src", list(dtypes.ALL))
@pytest.mark.parametrize("dst", list(dtypes.ALL))
def test_cast_parses(verify, src, dst):
    p = kb.Program("c")
    x = p.input("x", (3,), src)
    p.output(kb.cast(x, dst))
    text = verify(p.to_mlir())
    assert generics(text) == (0 if src == dst else 1)


@pytest.mark.parametrize("value", [1.0, -0.0, 0.1, 1e-5, 1e300, 3.4e38, 7e-46, float("nan"),
                                   float("inf"), -float("inf"), 1 << 40, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_scalar_constants_parse(verify, value, dtype):
    p = kb.Program("s")
    x = p.input("x", (2,), dtype)
    p.output(x + value)
    p.output(kb.where(x > 0.0, x, value))
    verify(p.to_mlir())


def test_int_constant_extremes_parse(verify):
    p = kb.Program("s")
    x = p.input("x", (2,), "i64")
    y = p.input("y", (2,), "i32")
    p.output(x + (-(1 << 63)))
    p.output(y * ((1 << 31) - 1))
    text = verify(p.to_mlir())
    assert "arith.constant -9223372036854775808 : i64" in text
    assert "arith.constant 2147483647 : i32" in text


def test_big_program_parses(verify):
    p = kb.Program("softplus")
    x = p.input("x", (1 << 26,), "f32")
    b = p.input("bias", (4096, 1), "f16")
    y = kb.log(kb.exp(x) + 1.0)
    z = kb.cast(y, "f16") * b - kb.abs(-b) / 2 ** kb.tanh(b)
    p.output(y, name="y")
    p.output(kb.where((z >= 0.0) != (b < 1.0), kb.rsqrt(z), kb.sqrt(b)))
    text = verify(p.to_mlir())
    assert generics(text) == 17


# ----------------------------------------------------------------- the MLIR's shape

def test_function_signature_and_names():
    p = kb.Program("softplus")
    x = p.input("x", (1 << 26,), "f32")
    b = p.input("bias", (4096,), "f16")
    s = p.input("s", (), "bf16")
    p.output(kb.log(kb.exp(x) + 1.0), name="y")
    p.output(b + 1.0)
    p.output(s)
    text = p.to_mlir()
    assert ("func.func @softplus(%arg0: tensor<67108864xf32> {kfuse.name = \"x\"}, "
            "%arg1: tensor<4096xf16> {kfuse.name = \"bias\"}, "
            "%arg2: tensor<bf16> {kfuse.name = \"s\"}) -> ("
            "tensor<67108864xf32> {kfuse.name = \"y\"}, "
            "tensor<4096xf16> {kfuse.name = \"out1\"}, "
            "tensor<bf16> {kfuse.name = \"out2\"})") in text
    assert re.search(r"return %t\d+, %t\d+, %arg2 : tensor<67108864xf32>, "
                     r"tensor<4096xf16>, tensor<bf16>", text)
    assert p.inputs == [("x", (1 << 26,), dtypes.F32), ("bias", (4096,), dtypes.F16),
                        ("s", (), dtypes.BF16)]
    assert p.outputs == [("y", (1 << 26,), dtypes.F32), ("out1", (4096,), dtypes.F16),
                         ("out2", (), dtypes.BF16)]


def test_generic_structure():
    p = kb.Program("g")
    x = p.input("x", (8, 1), "f32")
    y = p.input("y", (8, 16), "f32")
    p.output(x + y)
    text = p.to_mlir()
    assert re.search(
        r"%(e\d+) = tensor.empty\(\) : tensor<8x16xf32>\n"
        r"\s*%t\d+ = linalg.generic \{indexing_maps = \[affine_map<\(d0, d1\) -> \(d0, 0\)>, "
        r"affine_map<\(d0, d1\) -> \(d0, d1\)>, affine_map<\(d0, d1\) -> \(d0, d1\)>\], "
        r"iterator_types = \[\"parallel\", \"parallel\"\]\} "
        r"ins\(%arg0, %arg1 : tensor<8x1xf32>, tensor<8x16xf32>\) "
        r"outs\(%\1 : tensor<8x16xf32>\)", text)
    assert body(text) == ["%v0 = arith.addf %in0, %in1 : f32", "linalg.yield %v0 : f32"]
    for named in ("linalg.add", "linalg.map", "linalg.elemwise", "linalg.broadcast",
                  "tensor.expand_shape", "tensor.collapse_shape"):
        assert named not in text


@pytest.mark.parametrize("shapes, out, maps", [
    (((8, 1), (8, 16)), (8, 16),
     ["(d0, d1) -> (d0, 0)", "(d0, d1) -> (d0, d1)"]),
    (((1, 16), (4, 1)), (4, 16),
     ["(d0, d1) -> (0, d1)", "(d0, d1) -> (d0, 0)"]),
    (((16,), (4, 8, 16)), (4, 8, 16),
     ["(d0, d1, d2) -> (d2)", "(d0, d1, d2) -> (d0, d1, d2)"]),
    (((), (4, 8)), (4, 8),
     ["(d0, d1) -> ()", "(d0, d1) -> (d0, d1)"]),
    (((1,), ()), (1,),
     ["(d0) -> (d0)", "(d0) -> ()"]),
    (((1, 1), (1, 5)), (1, 5),
     ["(d0, d1) -> (d0, 0)", "(d0, d1) -> (d0, d1)"]),
    (((8, 1, 3), (1, 4, 1)), (8, 4, 3),
     ["(d0, d1, d2) -> (d0, 0, d2)", "(d0, d1, d2) -> (0, d1, 0)"]),
])
def test_broadcast_indexing_maps(shapes, out, maps):
    p = kb.Program("b")
    x = p.input("x", shapes[0], "f32")
    y = p.input("y", shapes[1], "f32")
    z = x * y
    assert z.shape == out
    p.output(z)
    text = p.to_mlir()
    dims = ", ".join(f"d{j}" for j in range(len(out)))
    expected = ", ".join(f"affine_map<{m}>" for m in maps + [f"({dims}) -> ({dims})"])
    assert f"indexing_maps = [{expected}]" in text
    iterators = ", ".join(['"parallel"'] * len(out))
    assert f"iterator_types = [{iterators}]" in text


def test_zero_d_program():
    p = kb.Program("z")
    x = p.input("x", (), "f32")
    p.output(kb.exp(x))
    text = p.to_mlir()
    assert ("indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], "
            "iterator_types = []") in text
    assert "tensor.empty() : tensor<f32>" in text


def test_one_generic_per_op_and_only_live_ops():
    p = kb.Program("g")
    x = p.input("x", (8,), "f32")
    shared = kb.exp(x)
    kb.tanh(shared)  # dead: not emitted
    y = shared * shared + shared
    assert kb.cast(y, "f32") is y
    p.output(y)
    p.output(kb.silu(shared))
    text = p.to_mlir()
    assert generics(text) == 4  # exp, mul, add, silu
    assert "math.tanh" not in text
    assert text.count("tensor.empty()") == 4
    # a tensor used twice by one op is one operand of its generic
    assert body(text, 1) == ["%v0 = arith.mulf %in0, %in0 : f32", "linalg.yield %v0 : f32"]


def test_scalars_are_constants_in_the_body():
    p = kb.Program("s")
    x = p.input("x", (8,), "f32")
    p.output(1.0 - x)
    p.output(x ** 2)
    text = p.to_mlir()
    assert body(text, 0) == ["%v0 = arith.constant 1.0 : f32",
                             "%v1 = arith.subf %v0, %in0 : f32", "linalg.yield %v1 : f32"]
    assert body(text, 1) == ["%v0 = arith.constant 2.0 : f32",
                             "%v1 = math.powf %in0, %v0 : f32", "linalg.yield %v1 : f32"]
    assert text.count("ins(") == 2 and "tensor<f32>" not in text


def test_nonfinite_constants_are_hex():
    p = kb.Program("s")
    x = p.input("x", (8,), "f32")
    h = p.input("h", (8,), "f16")
    b = p.input("b", (8,), "bf16")
    d = p.input("d", (8,), "f64")
    p.output(x + float("nan"))
    p.output(kb.where(h > 0.0, h, float("inf")))
    p.output(kb.where(b > 0.0, b, -float("inf")))
    p.output(d * float("nan"))
    text = p.to_mlir()
    assert "arith.constant 0x7FC00000 : f32" in text
    assert "arith.constant 0x7C00 : f16" in text
    assert "arith.constant 0xFF80 : bf16" in text
    assert "arith.constant 0x7FF8000000000000 : f64" in text


def test_scalar_takes_the_tensor_dtype_rounding():
    p = kb.Program("s")
    h = p.input("h", (8,), "f16")
    b = p.input("b", (8,), "bf16")
    p.output(h + 0.1)
    p.output(b + 0.1)
    text = p.to_mlir()
    assert f"arith.constant {float(np.float16(0.1))!r} : f32" in body(text, 0)[1]
    assert "arith.constant 0.10009765625 : f32" in body(text, 1)[1]


@pytest.mark.parametrize("dtype, ext", [("f16", True), ("bf16", True), ("f32", False),
                                        ("f64", False)])
def test_narrow_floats_compute_in_f32(dtype, ext):
    text = one_op("exp", dtype).to_mlir()
    if ext:
        assert body(text) == [f"%v0 = arith.extf %in0 : {dtype} to f32",
                              "%v1 = math.exp %v0 : f32",
                              f"%v2 = arith.truncf %v1 : f32 to {dtype}",
                              f"linalg.yield %v2 : {dtype}"]
    else:
        assert body(text) == [f"%v0 = math.exp %in0 : {dtype}", f"linalg.yield %v0 : {dtype}"]


@pytest.mark.parametrize("op, lines", [
    ("relu", ["%v0 = arith.constant 0.0 : f32", "%v1 = arith.maximumf %in0, %v0 : f32"]),
    ("sigmoid", ["%v0 = arith.constant 1.0 : f32", "%v1 = arith.negf %in0 : f32",
                 "%v2 = math.exp %v1 : f32", "%v3 = arith.addf %v0, %v2 : f32",
                 "%v4 = arith.divf %v0, %v3 : f32"]),
    ("gelu", ["%v0 = arith.constant 0.7071067690849304 : f32",
              "%v1 = arith.mulf %in0, %v0 : f32", "%v2 = math.erf %v1 : f32",
              "%v3 = arith.constant 0.5 : f32", "%v4 = arith.mulf %v3, %in0 : f32",
              "%v5 = arith.constant 1.0 : f32", "%v6 = arith.addf %v5, %v2 : f32",
              "%v7 = arith.mulf %v4, %v6 : f32"]),
    ("abs", ["%v0 = math.absf %in0 : f32"]),
    ("rsqrt", ["%v0 = math.rsqrt %in0 : f32"]),
    ("neg", ["%v0 = arith.negf %in0 : f32"]),
])
def test_float_bodies(op, lines):
    assert body(one_op(op, "f32").to_mlir())[:-1] == lines


@pytest.mark.parametrize("op, line", [
    ("add", "arith.addi %in0, %in1 : i32"), ("sub", "arith.subi %in0, %in1 : i32"),
    ("mul", "arith.muli %in0, %in1 : i32"), ("maximum", "arith.maxsi %in0, %in1 : i32"),
    ("minimum", "arith.minsi %in0, %in1 : i32"), ("gt", "arith.cmpi sgt, %in0, %in1 : i32"),
    ("le", "arith.cmpi sle, %in0, %in1 : i32"), ("ne", "arith.cmpi ne, %in0, %in1 : i32"),
])
def test_int_bodies(op, line):
    assert body(one_op(op, "i32", shapes=((8,), (8,))).to_mlir())[0] == "%v0 = " + line


def test_int_unary_bodies():
    assert body(one_op("neg", "i64").to_mlir())[:2] == [
        "%v0 = arith.constant 0 : i64", "%v1 = arith.subi %v0, %in0 : i64"]
    assert body(one_op("abs", "i32").to_mlir())[0] == "%v0 = math.absi %in0 : i32"


@pytest.mark.parametrize("op, pred", list(zip(COMPARE, ["ogt", "oge", "olt", "ole", "oeq",
                                                         "une"])))
def test_float_compare_predicates(op, pred):
    lines = body(one_op(op, "f16", shapes=((8,), (8,))).to_mlir())
    assert lines[2] == f"%v2 = arith.cmpf {pred}, %v0, %v1 : f32"
    assert lines[3] == "linalg.yield %v2 : i1"


def test_bool_compare_is_unsigned():
    assert "arith.cmpi ult, %in0, %in1 : i1" in one_op("lt", "i1", ((4,), (4,))).to_mlir()


def test_operator_overloads():
    p = kb.Program("o")
    x = p.input("x", (4,), "f32")
    cases = {x + 1: "add", 1 + x: "add", x - 1: "sub", 1.0 - x: "sub", x * 2: "mul",
             2 * x: "mul", x / 2: "div", 2 / x: "div", -x: "neg", abs(x): "abs",
             x ** 2: "pow", 2 ** x: "pow", x < 1: "lt", x <= 1: "le", x > 1: "gt",
             x >= 1: "ge", x == 1: "eq", x != 1: "ne", 1 < x: "gt",
             np.float32(2) * x: "mul"}
    for t, op in cases.items():
        assert isinstance(t, kb.Tensor) and t._op == op and t.program is p
    assert (x < 1).dtype is dtypes.I1 and (x + 1).dtype is dtypes.F32
    assert len({x, x}) == 1
    with pytest.raises(BuilderError, match="truth value"):
        bool(x > 0)


@pytest.mark.parametrize("src, dst, ops", [
    ("f32", "f16", ["arith.truncf %in0 : f32 to f16"]),
    ("f16", "f64", ["arith.extf %in0 : f16 to f64"]),
    ("f16", "bf16", ["arith.extf %in0 : f16 to f32", "arith.truncf %v0 : f32 to bf16"]),
    ("f32", "i32", ["arith.fptosi %in0 : f32 to i32"]),
    ("bf16", "i64", ["arith.extf %in0 : bf16 to f32", "arith.fptosi %v0 : f32 to i64"]),
    ("i32", "f16", ["arith.sitofp %in0 : i32 to f16"]),
    ("i1", "f32", ["arith.uitofp %in0 : i1 to f32"]),
    ("i1", "i64", ["arith.extui %in0 : i1 to i64"]),
    ("f32", "i1", ["arith.constant 0.0 : f32", "arith.cmpf une, %in0, %v0 : f32"]),
    ("i64", "i1", ["arith.constant 0 : i64", "arith.cmpi ne, %in0, %v0 : i64"]),
    ("i32", "i64", ["arith.extsi %in0 : i32 to i64"]),
    ("i64", "i32", ["arith.trunci %in0 : i64 to i32"]),
])
def test_cast_bodies(src, dst, ops):
    p = kb.Program("c")
    p.output(kb.cast(p.input("x", (3,), src), dst))
    lines = body(p.to_mlir())
    assert [line.split(" = ", 1)[1] for line in lines[:-1]] == ops


def test_cast_accepts_dtype_spellings():
    p = kb.Program("c")
    x = p.input("x", (3,), np.float16)
    assert x.dtype is dtypes.F16
    assert kb.cast(x, "float32").dtype is dtypes.F32
    assert kb.cast(x, dtypes.BF16).dtype is dtypes.BF16


# ------------------------------------------------------------------------ errors

def test_error_broadcast():
    p = kb.Program("e")
    x = p.input("x", (8, 3), "f32")
    y = p.input("y", (4,), "f32")
    with pytest.raises(BuilderError, match=r"add: shapes \(8, 3\) and \(4,\) do not broadcast"):
        x + y
    c = p.input("c", (5,), "i1")
    with pytest.raises(BuilderError, match=r"where: shapes \(5,\) and \(8, 3\)"):
        kb.where(c, x, 0.0)


def test_error_dtype_mismatch():
    p = kb.Program("e")
    x = p.input("x", (8,), "f32")
    h = p.input("h", (8,), "f16")
    with pytest.raises(BuilderError, match=r"mul: operand dtypes differ \(f32 tensor of shape "
                                           r"\(8,\) and f16 tensor of shape \(8,\)\).*cast"):
        x * h
    with pytest.raises(BuilderError, match=r"maximum: operand dtypes differ"):
        kb.maximum(h, x)
    with pytest.raises(BuilderError, match=r"where: a and b dtypes differ.*cast"):
        kb.where(x > 0.0, x, h)


def test_error_scalar_dtype():
    p = kb.Program("e")
    i = p.input("i", (8,), "i32")
    m = p.input("m", (8,), "i1")
    with pytest.raises(BuilderError, match=r"add: python scalar 1.5 cannot take the dtype of "
                                           r"i32 tensor of shape \(8,\)"):
        i + 1.5
    with pytest.raises(BuilderError, match=r"sub: .*out of range for i32"):
        i - (1 << 31)
    with pytest.raises(BuilderError, match=r"eq: .*i1 tensor only combines with True or False"):
        m == 1
    with pytest.raises(BuilderError, match=r"add: operand '1' is neither"):
        i + "1"
    with pytest.raises(BuilderError, match=r"mul: needs at least one kfuse Tensor"):
        kb.mul(2.0, 3.0)
    with pytest.raises(BuilderError, match=r"where: a and b are both python scalars"):
        kb.where(m, 1.0, 0.0)


@pytest.mark.parametrize("op", UNARY_FLOAT + BINARY_FLOAT)
@pytest.mark.parametrize("dtype", INTS + ["i1"])
def test_error_float_only(op, dtype):
    p = kb.Program("e")
    x = p.input("x", (8,), dtype)
    args = (x, x) if op in BINARY_FLOAT else (x,)
    with pytest.raises(BuilderError, match=rf"{op}: needs float operands, got {dtype} tensor "
                                           r"of shape \(8,\).*cast"):
        getattr(kb, op)(*args)


@pytest.mark.parametrize("op", UNARY_NUMERIC + BINARY_NUMERIC)
def test_error_numeric_on_bool(op):
    p = kb.Program("e")
    m = p.input("m", (8,), "i1")
    args = (m, m) if op in BINARY_NUMERIC else (m,)
    with pytest.raises(BuilderError, match=rf"{op}: does not take i1"):
        getattr(kb, op)(*args)


def test_error_where_cond():
    p = kb.Program("e")
    x = p.input("x", (8,), "f32")
    with pytest.raises(BuilderError, match=r"where: cond must be an i1 tensor.*got f32 tensor"):
        kb.where(x, x, 0.0)
    with pytest.raises(BuilderError, match=r"where: cond must be an i1 tensor.*python scalar"):
        kb.where(True, x, 0.0)


def test_error_mixed_programs():
    p, q = kb.Program("p"), kb.Program("q")
    x = p.input("x", (8,), "f32")
    y = q.input("y", (8,), "f32")
    with pytest.raises(BuilderError, match=r"add: operands come from different programs "
                                           r"\('p' and 'q'\)"):
        x + y
    with pytest.raises(BuilderError, match=r"where: operands come from different programs"):
        kb.where(x > 0.0, y, 0.0)
    with pytest.raises(BuilderError, match=r"output: the f32 tensor of shape \(8,\) belongs "
                                           r"to program 'q', not 'p'"):
        p.output(y)
    with pytest.raises(BuilderError, match=r"output: expected a kfuse Tensor"):
        p.output(1.0)


@pytest.mark.parametrize("shape, what", [
    ((0,), "dim 0"), ((4, -1), "dim -1"), ((2.0,), "dim 2.0"), ((True,), "dim True"),
    (8, "must be a tuple"), (("8",), "dim '8'"),
])
def test_error_bad_shape(shape, what):
    with pytest.raises(BuilderError, match=rf"input 'x': .*{re.escape(what)}"):
        kb.Program("e").input("x", shape, "f32")


def test_error_bad_dtype_and_names():
    p = kb.Program("e")
    with pytest.raises(BuilderError, match=r"unknown dtype 'f8'; use one of f32, f16"):
        p.input("x", (8,), "f8")
    with pytest.raises(BuilderError, match=r"cast: unknown dtype 'u8'"):
        kb.cast(p.input("ok", (8,), "f32"), "u8")
    with pytest.raises(BuilderError, match=r"input name '1x' is not a valid name"):
        p.input("1x", (8,), "f32")
    with pytest.raises(BuilderError, match=r"input name 'a-b' is not a valid name"):
        p.input("a-b", (8,), "f32")
    with pytest.raises(BuilderError, match=r"program name 'my prog' is not a valid name"):
        kb.Program("my prog")
    with pytest.raises(BuilderError, match=r"input: name 'ok' is already used"):
        p.input("ok", (4,), "f16")
    x = p.input("x", (8,), "f32")
    with pytest.raises(BuilderError, match=r"output name 'y.z' is not a valid name"):
        p.output(x, name="y.z")
    assert p.output(x) == "out0"
    with pytest.raises(BuilderError, match=r"output: name 'out0' is already used"):
        p.output(x, name="out0")
    with pytest.raises(BuilderError, match=r"output: name 'x' is already used"):
        p.output(x, name="x")


def test_error_no_outputs():
    p = kb.Program("empty")
    p.input("x", (8,), "f32")
    with pytest.raises(BuilderError, match=r"program 'empty' has no outputs.*Program.output"):
        p.to_mlir()


# ----------------------------------------------------------- reference interpreter

def test_reference_softplus_f32():
    p = kb.Program("softplus")
    x = p.input("x", (64,), "f32")
    p.output(kb.log(kb.exp(x) + 1.0), name="y")
    a = np.linspace(-5, 5, 64, dtype=np.float32)
    (y,) = p.reference(a)
    assert y.dtype == np.float32 and y.shape == (64,)
    np.testing.assert_array_equal(y, np.log(np.exp(a) + np.float32(1)))


def test_reference_f16_rounds_per_op():
    p = kb.Program("h")
    x = p.input("x", (8, 1), "f16")
    b = p.input("b", (16,), "f16")
    p.output(kb.sigmoid(x * b + 0.1))
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((8, 1)).astype(np.float16)
    ba = rng.standard_normal(16).astype(np.float16)
    (y,) = p.reference(xa, ba)
    f = np.float32
    t = ((xa.astype(f) * ba.astype(f)).astype(np.float16).astype(f)
         + f(np.float16(0.1))).astype(np.float16).astype(f)
    expected = (f(1) / (f(1) + np.exp(-t))).astype(np.float16)
    assert y.dtype == np.float16 and y.shape == (8, 16)
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(t.astype(np.float16), xa * ba + np.float16(0.1))


def test_reference_gelu_silu_erf():
    p = kb.Program("g")
    x = p.input("x", (101,), "f32")
    d = p.input("d", (101,), "f64")
    p.output(kb.gelu(x))
    p.output(kb.silu(x))
    p.output(kb.erf(d))
    a = np.linspace(-4, 4, 101, dtype=np.float32)
    g, s, e = p.reference(a, a.astype(np.float64))
    f = np.float32
    erf32 = np.array([math.erf(v) for v in (a * f(0.7071067811865476)).astype(np.float64)],
                     dtype=np.float32)
    np.testing.assert_array_equal(g, f(0.5) * a * (f(1) + erf32))
    np.testing.assert_array_equal(s, a * (f(1) / (f(1) + np.exp(-a))))
    np.testing.assert_array_equal(e, [math.erf(v) for v in a.astype(np.float64)])
    exact = 0.5 * a.astype(np.float64) * (1 + np.array([math.erf(v / math.sqrt(2)) for v in a]))
    np.testing.assert_allclose(g, exact, rtol=1e-6, atol=1e-7)


def test_reference_ints_compare_where_cast():
    p = kb.Program("m")
    i = p.input("i", (6,), "i32")
    x = p.input("x", (2, 1), "f32")
    big = i * 1000000000  # wraps like arith.muli
    p.output(big)
    p.output(kb.where(i > 2, kb.cast(i, "f32") + x, -x))
    p.output(kb.cast(x, "i1") != (i == 0))
    p.output(kb.relu(-i), name="r")
    p.output(abs(kb.cast(i - 3, "i64")))
    ia = np.arange(6, dtype=np.int32)
    xa = np.array([[0.0], [np.nan]], dtype=np.float32)
    o0, o1, o2, o3, o4 = p.reference(ia, xa)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(o0, ia * np.int32(1000000000))
    np.testing.assert_array_equal(o1, np.where(ia > 2, ia.astype(np.float32) + xa, -xa))
    np.testing.assert_array_equal(o2, xa.astype(bool) != (ia == 0))
    np.testing.assert_array_equal(o3, np.maximum(-ia, 0))
    assert o4.dtype == np.int64
    np.testing.assert_array_equal(o4, np.abs(ia.astype(np.int64) - 3))
    assert o1.shape == (2, 6) and o2.dtype == np.bool_ and o2[1, 1:].all()  # nan casts to True


def test_reference_zero_d_and_checks_inputs():
    p = kb.Program("z")
    x = p.input("x", (), "f64")
    p.output(kb.tanh(x) ** 2.0)
    (y,) = p.reference(np.array(0.5))
    assert isinstance(y, np.ndarray) and y.shape == () and y == np.tanh(0.5) ** 2
    with pytest.raises(BuilderError, match=r"needs a float64 array of shape \(\), got float32"):
        p.reference(np.array(0.5, dtype=np.float32))
    with pytest.raises(BuilderError, match=r"has 1 inputs, got 2 arrays"):
        p.reference(np.array(0.5), np.array(0.5))


def test_reference_bf16():
    ml_dtypes_or_skip()
    bf = dtypes.to_numpy(dtypes.BF16)
    p = kb.Program("b")
    x = p.input("x", (33,), "bf16")
    p.output(kb.exp(x) * 3.3)
    p.output(kb.cast(x, "f16"))
    a = np.linspace(-3, 3, 33).astype(bf)
    y, h = p.reference(a)
    f = np.float32
    three3 = f(np.float64(3.3).astype(bf))
    expected = (np.exp(a.astype(f)).astype(bf).astype(f) * three3).astype(bf)
    assert y.dtype == bf
    np.testing.assert_array_equal(y.astype(f), expected.astype(f))
    np.testing.assert_array_equal(h, a.astype(f).astype(np.float16))


def test_reference_bf16_needs_ml_dtypes(monkeypatch):
    monkeypatch.setattr(dtypes, "_bf16_numpy", lambda: None)
    p = kb.Program("b")
    p.output(kb.exp(p.input("x", (4,), "bf16")))
    with pytest.raises(BuilderError, match="ml_dtypes"):
        p.reference(np.zeros(4, np.float32))


def test_bf16_scalar_rounding_matches_ml_dtypes():
    ml_dtypes_or_skip()
    bf = dtypes.to_numpy(dtypes.BF16)
    rng = np.random.default_rng(1)
    values = rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 38, 2000)
    for v in list(values) + [3.3895313892515355e38, 3.4e38, 1e-39, -0.0, 2.0 ** -133]:
        expected = float(np.float32(v).astype(bf))  # exact float32 inputs: single rounding
        assert kb._round_bf16(float(np.float32(v))) == expected


# ------------------------------------------------------------------------ reductions

REDUCE_OPS = ["sum", "max", "min", "mean"]
REDUCE_AXES = [-1, 0, (0, 1), None]
NP_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean}


def reduction_program(op, dtype, shape=(4, 8), axis=-1, keepdims=False):
    p = kb.Program("r")
    x = p.input("x", shape, dtype)
    y = getattr(kb, op)(x, axis=axis, keepdims=keepdims)
    p.output(y, name="y")
    return p, x, y


def np_reduce(op, dtype, a, axis, keepdims):
    """The value a reduction should give, by numpy: f16, bf16 and f32 accumulate in f32;
    integer sums accumulate and return int64, as numpy's own."""
    acc = {"f64": np.float64, "i32": np.int32, "i64": np.int64}.get(dtype, np.float32)
    if op == "sum" and dtype in INTS:
        return np.asarray(np.sum(a, axis=axis, keepdims=keepdims))
    extra = {"dtype": acc} if op in ("sum", "mean") else {}
    r = NP_REDUCE[op](a.astype(acc), axis=axis, keepdims=keepdims, **extra)
    return np.asarray(r).astype(a.dtype)


def random_array(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype in ("i32", "i64"):
        return rng.integers(-1000, 1000, shape).astype(dtypes.to_numpy(dtypes.get(dtype)))
    return rng.standard_normal(shape).astype(np.float32).astype(
        dtypes.to_numpy(dtypes.get(dtype)))


def reduced_shape(shape, axis, keepdims):
    axes = range(len(shape)) if axis is None else (
        axis if isinstance(axis, tuple) else (axis,))
    axes = {a % len(shape) for a in axes}
    if keepdims:
        return tuple(1 if k in axes else d for k, d in enumerate(shape))
    return tuple(d for k, d in enumerate(shape) if k not in axes)


def test_reductions_are_exported_without_shadowing_the_builtins_inside():
    assert kb.sum is kb.reduce_sum and kb.max is kb.amax and kb.min is kb.amin
    assert {"sum", "max", "min", "mean"} <= set(kb.__all__)
    assert kb.max is not max and kb.sum is not sum
    # the builder's own code still uses the builtins (broadcast rank, bf16 rounding)
    p = kb.Program("b")
    x = p.input("x", (4, 1), "f32")
    assert (x + p.input("y", (3,), "f32")).shape == (4, 3)
    assert kb._round_bf16(1.0) == 1.0


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", REDUCE_AXES)
@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reduction_parses(verify, op, axis, keepdims, dtype):
    p, x, y = reduction_program(op, dtype, axis=axis, keepdims=keepdims)
    assert y.shape == reduced_shape((4, 8), axis, keepdims) and y.dtype is x.dtype
    assert p.outputs == [("y", y.shape, y.dtype)]
    text = verify(p.to_mlir())
    assert text.count("linalg.fill") == 1
    assert text.count('"reduction"') == (2 if axis in (None, (0, 1)) else 1)
    finish = dtype != "f32" or op == "mean"   # truncation and/or division by the count
    expand = keepdims                         # the output written at its numpy shape
    assert generics(text) == 1 + finish + expand
    assert f"tensor<{'x'.join(map(str, y.shape))}{'x' if y.shape else ''}{dtype}> " \
           f"{{kfuse.name = \"y\"}}" in text
    for reshape in ("tensor.expand_shape", "tensor.collapse_shape", "tensor.reshape"):
        assert reshape not in text


@pytest.mark.parametrize("dtype", INTS + ["f64"])
@pytest.mark.parametrize("axis", REDUCE_AXES)
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_reduction_int_f64_parses(verify, op, axis, dtype):
    for keepdims in (False, True):
        p, _, _ = reduction_program(op, dtype, axis=axis, keepdims=keepdims)
        text = verify(p.to_mlir())
        assert generics(text) == 1 + keepdims and text.count("linalg.fill") == 1


def test_reduction_axis0_structure():
    p, _, _ = reduction_program("sum", "f32", shape=(16, 32), axis=0)
    text = p.to_mlir()
    assert re.search(
        r"%(c\d+) = arith.constant 0.0 : f32\n"
        r"\s*%(e\d+) = tensor.empty\(\) : tensor<32xf32>\n"
        r"\s*%(i\d+) = linalg.fill ins\(%\1 : f32\) outs\(%\2 : tensor<32xf32>\) "
        r"-> tensor<32xf32>\n"
        r"\s*%t\d+ = linalg.generic \{indexing_maps = \[affine_map<\(d0, d1\) -> \(d1, d0\)>, "
        r"affine_map<\(d0, d1\) -> \(d0\)>\], "
        r"iterator_types = \[\"parallel\", \"reduction\"\]\} "
        r"ins\(%arg0 : tensor<16x32xf32>\) outs\(%\3 : tensor<32xf32>\)", text)
    assert body(text) == ["%v0 = arith.addf %in0, %out : f32", "linalg.yield %v0 : f32"]
    assert "^bb0(%in0: f32, %out: f32):" in text
    assert generics(text) == 1


def test_reduction_last_axis_and_3d_maps():
    text = reduction_program("max", "f32", shape=(16, 32), axis=-1)[0].to_mlir()
    assert ("indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],"
            " iterator_types = [\"parallel\", \"reduction\"]") in text
    text = reduction_program("min", "f32", shape=(2, 3, 4), axis=1)[0].to_mlir()
    assert ("indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, "
            "affine_map<(d0, d1, d2) -> (d0, d1)>], "
            "iterator_types = [\"parallel\", \"parallel\", \"reduction\"]") in text
    assert "tensor.empty() : tensor<2x4xf32>" in text
    text = reduction_program("sum", "f32", shape=(2, 3, 4), axis=(0, 2))[0].to_mlir()
    assert ("indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, "
            "affine_map<(d0, d1, d2) -> (d0)>], "
            "iterator_types = [\"parallel\", \"reduction\", \"reduction\"]") in text


def test_full_reduction_is_zero_d():
    p, _, y = reduction_program("sum", "f32", axis=None)
    assert y.shape == ()
    text = p.to_mlir()
    assert ("indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], "
            "iterator_types = [\"reduction\", \"reduction\"]") in text
    assert "linalg.fill ins(%c2 : f32) outs(%e2 : tensor<f32>) -> tensor<f32>" in text
    assert "-> (tensor<f32> {kfuse.name = \"y\"})" in text


@pytest.mark.parametrize("op, dtype, identity, line", [
    ("sum", "f32", "0.0 : f32", "arith.addf %in0, %out : f32"),
    ("max", "f32", "0xFF800000 : f32", "arith.maximumf %in0, %out : f32"),
    ("min", "f32", "0x7F800000 : f32", "arith.minimumf %in0, %out : f32"),
    ("mean", "f32", "0.0 : f32", "arith.addf %in0, %out : f32"),
    ("max", "f64", "0xFFF0000000000000 : f64", "arith.maximumf %in0, %out : f64"),
    ("sum", "i64", "0 : i64", "arith.addi %in0, %out : i64"),
    ("max", "i32", "-2147483648 : i32", "arith.maxsi %in0, %out : i32"),
    ("min", "i32", "2147483647 : i32", "arith.minsi %in0, %out : i32"),
    ("max", "i64", "-9223372036854775808 : i64", "arith.maxsi %in0, %out : i64"),
    ("min", "i64", "9223372036854775807 : i64", "arith.minsi %in0, %out : i64"),
])
def test_reduction_identity_and_body(op, dtype, identity, line):
    text = reduction_program(op, dtype)[0].to_mlir()
    assert f"arith.constant {identity}\n" in text
    assert body(text)[0] == "%v0 = " + line


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("op, combine", [("sum", "addf"), ("max", "maximumf"),
                                         ("min", "minimumf"), ("mean", "addf")])
def test_narrow_float_reductions_accumulate_in_f32(op, combine, dtype):
    p, _, _ = reduction_program(op, dtype, axis=0)
    text = p.to_mlir()
    ident = {"addf": "0.0", "maximumf": "0xFF800000", "minimumf": "0x7F800000"}[combine]
    assert f"arith.constant {ident} : f32\n" in text
    assert "linalg.fill ins(%c2 : f32) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>" in text
    assert f"^bb0(%in0: {dtype}, %out: f32):" in text
    assert body(text, 0) == [f"%v0 = arith.extf %in0 : {dtype} to f32",
                             f"%v1 = arith.{combine} %v0, %out : f32",
                             "linalg.yield %v1 : f32"]
    if op == "mean":
        assert body(text, 1) == ["%v0 = arith.constant 4.0 : f32",
                                 "%v1 = arith.divf %in0, %v0 : f32",
                                 f"%v2 = arith.truncf %v1 : f32 to {dtype}",
                                 f"linalg.yield %v2 : {dtype}"]
    else:
        assert body(text, 1) == [f"%v0 = arith.truncf %in0 : f32 to {dtype}",
                                 f"linalg.yield %v0 : {dtype}"]
    assert generics(text) == 2


def test_mean_f32_divides_by_the_count():
    p, _, _ = reduction_program("mean", "f32", shape=(2, 3, 5), axis=(0, 2))
    text = p.to_mlir()
    assert generics(text) == 2
    assert body(text, 1) == ["%v0 = arith.constant 10.0 : f32",
                             "%v1 = arith.divf %in0, %v0 : f32", "linalg.yield %v1 : f32"]


def test_keepdims_value_omits_the_reduced_dims_from_its_mlir_type():
    p = kb.Program("k")
    x = p.input("x", (16, 32), "f32")
    s = x.sum(axis=-1, keepdims=True)
    c = x.max(axis=0, keepdims=True)
    assert s.shape == (16, 1) and c.shape == (1, 32)
    p.output(x - s + c, name="y")
    text = p.to_mlir()
    # the reductions are those of keepdims=False ...
    assert "linalg.fill ins(%c2 : f32) outs(%e2 : tensor<16xf32>) -> tensor<16xf32>" in text
    assert "linalg.fill ins(%c3 : f32) outs(%e3 : tensor<32xf32>) -> tensor<32xf32>" in text
    # ... and their consumers read them with broadcast (projected permutation) maps
    assert ("indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, "
            "affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]} "
            "ins(%arg0, %t2 : tensor<16x32xf32>, tensor<16xf32>)") in text
    assert ("indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, "
            "affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]} "
            "ins(%t4, %t3 : tensor<16x32xf32>, tensor<32xf32>)") in text
    assert "tensor<16x1xf32>" not in text and "tensor<1x32xf32>" not in text
    assert generics(text) == 4


def test_keepdims_output_is_written_at_its_numpy_shape(verify):
    p = kb.Program("k")
    x = p.input("x", (16, 32), "f32")
    s = x.sum(axis=-1, keepdims=True)
    p.output(s, name="s")
    text = verify(p.to_mlir())
    assert "-> (tensor<16x1xf32> {kfuse.name = \"s\"})" in text
    assert ("%t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, "
            "affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]} "
            "ins(%t2 : tensor<16xf32>) outs(%e3 : tensor<16x1xf32>)") in text
    assert body(text, 1) == ["linalg.yield %in0 : f32"]
    assert p.outputs == [("s", (16, 1), dtypes.F32)]
    a = random_array("f32", (16, 32))
    (r,) = p.reference(a)
    assert r.shape == (16, 1)
    np.testing.assert_allclose(r, a.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-5)


def test_elementwise_of_keepdims_values_stays_squeezed(verify):
    p = kb.Program("k")
    x = p.input("x", (16, 32), "f16")
    s = x.sum(axis=-1, keepdims=True)
    r = 1.0 / s
    assert r.shape == (16, 1)
    p.output(x * r, name="y")
    p.output(r, name="r")
    text = verify(p.to_mlir())
    # the f16 truncation and the reciprocal run over the 16 rows, not over 16x1
    assert "ins(%t2 : tensor<16xf32>) outs(%e3 : tensor<16xf16>)" in text
    assert ("iterator_types = [\"parallel\"]} ins(%t3 : tensor<16xf16>) "
            "outs(%e4 : tensor<16xf16>)") in text
    assert "ins(%arg0, %t4 : tensor<16x32xf16>, tensor<16xf16>)" in text
    assert "ins(%t4 : tensor<16xf16>) outs(%e6 : tensor<16x1xf16>)" in text
    a = random_array("f16", (16, 32))
    y, rr = p.reference(a)
    s_ref = a.astype(np.float32).sum(axis=-1, keepdims=True).astype(np.float16)
    np.testing.assert_array_equal(rr, (np.float32(1) / s_ref.astype(np.float32))
                                  .astype(np.float16))
    np.testing.assert_array_equal(y, a * rr)


@pytest.mark.parametrize("axis, keepdims", [(0, False), (1, False), (None, False),
                                            (0, True), (1, True), (None, True)])
def test_reduction_of_a_keepdims_value(verify, axis, keepdims):
    p = kb.Program("k")
    x = p.input("x", (6, 8), "f32")
    m = x.max(axis=-1, keepdims=True)           # (6, 1), its MLIR value is 6 elements
    y = m.sum(axis=axis, keepdims=keepdims)
    assert y.shape == reduced_shape((6, 1), axis, keepdims)
    p.output(y, name="y")
    p.output(x + y if keepdims else y * 2.0, name="z")
    text = verify(p.to_mlir())
    if axis == 1:  # only the size-1 dim the MLIR value lacks: a view of m, no op at all
        assert y._op == "view" and text.count("linalg.fill") == 1
        assert generics(text) == 1 + keepdims + 1  # max, (y written at (6, 1)), z
        if not keepdims:
            assert re.search(r"return %t2, %t\d+ : tensor<6xf32>, tensor<6xf32>", text)
    else:
        assert text.count("linalg.fill") == 2
    a = random_array("f32", (6, 8))
    yr, zr = p.reference(a)
    expected = a.max(axis=-1, keepdims=True).sum(axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(yr, expected, rtol=1e-6)
    assert yr.shape == expected.shape
    np.testing.assert_allclose(zr, a + expected if keepdims else expected * 2, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "f64", "i32", "i64"])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", REDUCE_AXES + [1, -2, (1, 0), (-1,)])
@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reduction_reference_matches_numpy(op, axis, keepdims, dtype):
    if dtype == "bf16":
        ml_dtypes_or_skip()
    if op == "mean" and dtype in INTS:
        return
    p, _, y = reduction_program(op, dtype, shape=(24, 40), axis=axis, keepdims=keepdims)
    a = random_array(dtype, (24, 40), seed=3)
    (r,) = p.reference(a)
    expected = np_reduce(op, dtype, a, axis, keepdims)
    assert r.dtype == expected.dtype and r.shape == expected.shape == y.shape
    assert isinstance(r, np.ndarray)
    if op in ("max", "min") or dtype in INTS:
        np.testing.assert_array_equal(r, expected)
        return
    np.testing.assert_array_equal(r, expected)
    # and near the exact value: float64 numpy, within the dtype's tolerance (the absolute
    # term covers cancellation: the accumulated rounding is relative to the sum of |a|)
    exact = NP_REDUCE[op](a.astype(np.float64), axis=axis, keepdims=keepdims)
    size = NP_REDUCE[op](np.abs(a.astype(np.float64)), axis=axis, keepdims=keepdims)
    tol = {"f32": 1e-6, "f64": 1e-14, "f16": 1e-3, "bf16": 8e-3}[dtype]
    assert np.all(np.abs(r.astype(np.float64) - exact) <= tol * size)


def test_reduction_reference_rounds_narrow_floats_once():
    p = kb.Program("h")
    x = p.input("x", (4096,), "f16")
    p.output(x.sum(), name="s")
    p.output(x.mean(), name="m")
    a = np.full(4096, 0.1, dtype=np.float16)
    s, m = p.reference(a)
    exact = np.float32(np.float16(0.1)) * 4096
    assert s == np.float16(exact) and m == np.float16(exact / np.float32(4096))
    assert s.dtype == np.float16 and m.dtype == np.float16 and m == a[0]


def test_reduction_reference_ints_and_nan():
    p = kb.Program("i")
    i = p.input("i", (3, 4), "i32")
    f = p.input("f", (2, 3), "f32")
    p.output(i.sum(axis=1), name="s")
    p.output(i.sum(axis=1, dtype="i32"), name="s32")
    p.output(f.max(axis=-1), name="mx")
    p.output(f.min(axis=0), name="mn")
    ia = np.full((3, 4), 1 << 30, dtype=np.int32)
    fa = np.array([[1.0, np.nan, 3.0], [-1.0, -2.0, -np.inf]], dtype=np.float32)
    s, s32, mx, mn = p.reference(ia, fa)
    assert s.dtype == np.int64 and (s == 1 << 32).all()  # int64, as numpy's sum
    assert s32.dtype == np.int32 and (s32 == 0).all()  # asked for i32: wraps like arith.addi
    np.testing.assert_array_equal(mx, [np.nan, -1.0])
    np.testing.assert_array_equal(mn, [-1.0, np.nan, -np.inf])


def test_reduction_methods_match_functions():
    p = kb.Program("m")
    x = p.input("x", (4, 8), "f32")
    for name, fn in (("sum", kb.sum), ("max", kb.max), ("min", kb.min), ("mean", kb.mean)):
        a, b = getattr(x, name)(axis=0, keepdims=True), fn(x, 0, True)
        assert a.shape == b.shape == (1, 8) and a._op == b._op
    assert x.sum()._op == "reduce_sum" and x.max(1)._op == "reduce_max"
    assert x.min((0, 1))._op == "reduce_min" and x.mean(-1)._op == "div"


def test_reducing_no_dims_is_the_identity():
    p = kb.Program("n")
    x = p.input("x", (4, 8), "f16")
    s = p.input("s", (), "f32")
    assert kb.sum(x, axis=()) is x and x.mean(axis=(), keepdims=True) is x
    assert s.max() is s and kb.sum(s, keepdims=True) is s


def test_reduction_materialize_directive(verify):
    p = kb.Program("m")
    x = p.input("x", (4, 8), "f32")
    p.output(kb.exp(kb.materialize(x.sum(axis=-1, keepdims=True))) * x)
    text = verify(p.to_mlir())
    assert 'iterator_types = ["parallel", "reduction"], fusion.materialize}' in text
    # a view has no op of its own: the directive goes to the op it shows
    q = kb.Program("v")
    x = q.input("x", (4, 8), "f32")
    v = kb.materialize(x.max(axis=1, keepdims=True).sum(axis=1))
    assert v._op == "view" and v.shape == (4,)
    q.output(v + 1.0)
    assert text.count("fusion.materialize") == 1
    assert 'iterator_types = ["parallel", "reduction"], fusion.materialize}' in q.to_mlir()


def test_reductions_are_one_generic_each_and_only_live():
    p = kb.Program("g")
    x = p.input("x", (8, 16), "f32")
    x.max(axis=0)  # dead: not emitted
    p.output(x.sum(axis=1) + x.min(axis=1))
    text = p.to_mlir()
    assert generics(text) == 3 and text.count("linalg.fill") == 2
    assert "maximumf" not in text and text.count("tensor.empty()") == 3


# --------------------------------------------------------------- reduction errors

def test_error_reduction_axis_out_of_range():
    p = kb.Program("e")
    x = p.input("x", (4, 8), "f32")
    with pytest.raises(BuilderError, match=r"sum: axis 2 is out of range for the f32 tensor of "
                                           r"shape \(4, 8\) \(valid axes are -2\.\.1\)"):
        x.sum(axis=2)
    with pytest.raises(BuilderError, match=r"max: axis -3 is out of range for the f32 tensor"):
        kb.max(x, axis=-3)
    with pytest.raises(BuilderError, match=r"min: axis \(0, 5\) is out of range .*\(4, 8\)"):
        kb.min(x, axis=(0, 5))
    s = p.input("s", (), "f32")
    with pytest.raises(BuilderError, match=r"mean: axis 0 is out of range for the f32 tensor "
                                           r"of shape \(\) \(a 0-d tensor has no axes: use "
                                           r"axis=None\)"):
        s.mean(axis=0)


def test_error_reduction_duplicate_axes():
    p = kb.Program("e")
    x = p.input("x", (4, 8), "f32")
    with pytest.raises(BuilderError, match=r"sum: axis \(0, 0\) names dim 0 twice \(reducing "
                                           r"the f32 tensor of shape \(4, 8\)\)"):
        x.sum(axis=(0, 0))
    with pytest.raises(BuilderError, match=r"mean: axis \(1, -1\) names dim 1 twice"):
        kb.mean(x, axis=(1, -1))


@pytest.mark.parametrize("axis", [1.0, "0", True, (0, None), [0.5]])
def test_error_reduction_axis_type(axis):
    p = kb.Program("e")
    x = p.input("x", (4, 8), "f32")
    with pytest.raises(BuilderError, match=rf"max: axis {re.escape(repr(axis))} is not None, "
                                           r"an int or a tuple of ints \(reducing the f32 "
                                           r"tensor of shape \(4, 8\)\)"):
        x.max(axis=axis)


@pytest.mark.parametrize("op", [op for op in REDUCE_OPS if op != "sum"])
def test_error_reduction_of_bool(op):
    p = kb.Program("e")
    m = p.input("m", (4, 8), "i1")
    with pytest.raises(BuilderError, match=rf"{op}: does not take i1 \(bool\) tensors, got i1 "
                                           r"tensor of shape \(4, 8\) \(axis=-1\).*cast"):
        getattr(m, op)(axis=-1)


@pytest.mark.parametrize("dtype, convert", [("i8", "arith.extsi %in0 : i8 to i64"),
                                            ("i32", "arith.extsi %in0 : i32 to i64"),
                                            ("i1", "arith.extui %in0 : i1 to i64")])
def test_integer_and_boolean_sums_are_int64(dtype, convert):
    # numpy's and torch's rule: a sum of narrower integers (or a count of true
    # values) accumulates and returns int64, so 300 values of 100 in i8 sum to
    # 30000, not to 30000 wrapped into i8
    p, _, y = reduction_program("sum", dtype, shape=(4, 300))
    assert y.dtype.name == "i64"
    text = p.to_mlir()
    assert body(text, 0) == [f"%v0 = {convert}", "%v1 = arith.addi %v0, %out : i64",
                             "linalg.yield %v1 : i64"]
    a = (np.full((4, 300), 100, np.int8) if dtype == "i8" else
         random_array(dtype, (4, 300), seed=5) if dtype == "i32" else
         np.random.default_rng(5).random((4, 300)) < 0.5)
    (r,) = p.reference(a)
    want = a.sum(axis=-1)
    assert r.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(r, want)


def test_sum_dtype_argument():
    # dtype= as numpy's: the accumulator and result dtype, each element converted
    p = kb.Program("d")
    x = p.input("x", (4, 300), "i8")
    h = p.input("h", (4, 300), "f16")
    narrow = x.sum(axis=1, dtype="i8")
    wide = kb.sum(h, axis=1, dtype="f32")
    floats = x.sum(axis=1, dtype="f64")
    assert (narrow.dtype.name, wide.dtype.name, floats.dtype.name) == ("i8", "f32", "f64")
    p.output(narrow, name="n")
    p.output(wide, name="w")
    p.output(floats, name="f")
    a = np.full((4, 300), 100, np.int8)
    b = np.random.default_rng(6).standard_normal((4, 300)).astype(np.float16)
    n, w, f = p.reference(a, b)
    np.testing.assert_array_equal(n, a.sum(axis=1, dtype=np.int8))  # wraps, as asked
    np.testing.assert_array_equal(f, np.full(4, 30000.0))
    np.testing.assert_allclose(w, b.astype(np.float32).sum(axis=1), rtol=1e-5, atol=1e-5)
    assert w.dtype == np.float32
    with pytest.raises(BuilderError, match=r"sum: unknown dtype 'u16'"):
        x.sum(dtype="u16")


@pytest.mark.parametrize("dtype", INTS + ["i8"])
def test_error_mean_of_ints(dtype):
    p = kb.Program("e")
    x = p.input("x", (4, 8), dtype)
    with pytest.raises(BuilderError, match=rf"mean: needs a float tensor, got {dtype} tensor "
                                           r"of shape \(4, 8\) \(axis=None\).*cast"):
        kb.mean(x)


def test_error_reduction_operands():
    p = kb.Program("e")
    x = p.input("x", (4, 8), "f32")
    with pytest.raises(BuilderError, match=r"sum: expected a kfuse Tensor, got 3.0"):
        kb.sum(3.0)
    with pytest.raises(BuilderError, match=r"max: expected a kfuse Tensor, got \[1, 2\]"):
        kb.max([1, 2])
    with pytest.raises(BuilderError, match=r"min: keepdims must be True or False, got 1"):
        x.min(axis=0, keepdims=1)


# ------------------------------------------------------- example: softmax from reductions

@pytest.mark.parametrize("shape", [(8, 128), (2, 3, 50)])
def test_softmax_from_reductions(verify, shape):
    p = kb.Program("softmax")
    x = p.input("x", shape, "f32")
    m = x.max(axis=-1, keepdims=True)
    e = kb.exp(x - m)
    y = e / e.sum(axis=-1, keepdims=True)
    p.output(y, name="y")
    text = verify(p.to_mlir())
    assert generics(text) == 5 and text.count("linalg.fill") == 2  # max, sub, exp, sum, div
    lead = ", ".join(f"d{k}" for k in range(len(shape) - 1))
    loops = ", ".join(f"d{k}" for k in range(len(shape)))
    row = f"affine_map<({loops}) -> ({lead})>"
    iterators = ", ".join(['"parallel"'] * (len(shape) - 1) + ['"reduction"'])
    assert text.count(f"{row}], iterator_types = [{iterators}]") == 2
    assert text.count(f"affine_map<({loops}) -> ({loops})>, {row}, ") == 2  # x - m, e / s
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(shape) * 4).astype(np.float32)
    (r,) = p.reference(a)
    a64 = a.astype(np.float64)
    z = np.exp(a64 - a64.max(axis=-1, keepdims=True))
    expected = z / z.sum(axis=-1, keepdims=True)
    assert r.dtype == np.float32 and r.shape == shape
    np.testing.assert_allclose(r, expected, rtol=0, atol=1e-6)
    np.testing.assert_allclose(r.sum(axis=-1), 1.0, atol=1e-5)


# ------------------------------------------------------------------- argmax / argmin

@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reduction_parses(verify, op, dtype):
    for axis, keepdims in [(1, False), (0, True)]:
        p, x, y = reduction_program(op, dtype, axis=axis, keepdims=keepdims)
        assert y.dtype is dtypes.I64 and y.shape == reduced_shape((4, 8), axis, keepdims)
        text = verify(p.to_mlir())
        # one generic with two accumulators (the extremum and its column),
        # plus the write at the numpy shape for keepdims
        assert generics(text) == 1 + keepdims and text.count("linalg.fill") == 2
        assert re.search(r"%t\d+:2 = linalg.generic", text)
        lines = body(text)
        if dtype in ("f32", "f64", "f16", "bf16"):
            pred = "ugt" if op == "argmax" else "ult"
            assert any(f"arith.cmpf {pred}" in line for line in lines)
            assert any("arith.cmpf ord" in line for line in lines)  # NaN stays
        else:
            pred = "sgt" if op == "argmax" else "slt"
            assert any(f"arith.cmpi {pred}" in line for line in lines)
        assert "%col = linalg.index 1 : index" in lines


def test_arg_reduction_reference_is_numpys():
    p = kb.Program("a")
    x = p.input("x", (3, 5), "f32")
    p.output(kb.argmax(x, axis=1), "i")
    p.output(x.argmin(axis=0, keepdims=True), "j")
    a = np.array([[1, 3, 3, 0, 2], [np.nan, 1, np.nan, 5, 5], [-1, -1, -1, -1, -1]],
                 np.float32)
    i, j = p.reference(a)
    assert i.tolist() == [1, 0, 0] and i.dtype == np.int64
    assert j.tolist() == [[1, 2, 1, 2, 2]] and j.shape == (1, 5)  # NaN first


@pytest.mark.parametrize("make, match", [
    (lambda p, x: kb.argmax(x), "axis=None over the f32 tensor of shape \\(4, 8\\)"),
    (lambda p, x: kb.argmax(x, axis=(0, 1)), "must be one int"),
    (lambda p, x: kb.argmin(x, axis=2), "out of range"),
    (lambda p, x: kb.argmax(x > 0.0, axis=1), "i1"),
    (lambda p, x: kb.argmax(x.max(axis=1, keepdims=True), axis=1), "size-1 dim kept"),
    (lambda p, x: kb.argmax(x.sum(), axis=None), "no axis"),
    (lambda p, x: kb.argmax(x, axis=1, keepdims=None), "keepdims"),
    (lambda p, x: kb.argmax(np.zeros(3)), "expected a kfuse Tensor"),
])
def test_arg_reduction_errors(make, match):
    p = kb.Program("e")
    x = p.input("x", (4, 8), "f32")
    with pytest.raises(BuilderError, match=match):
        make(p, x)
