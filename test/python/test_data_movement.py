"""Padding and views: data movement that fusion folds into indexing.

tensor.pad (builder: kb.pad) becomes an elementwise gather in fusion-normalize
and fuses with its elementwise neighbours; reshapes move above elementwise
producers to the inputs. Numerics on the CPU target against numpy; the CUDA
target must compile the same plan to one PTX kernel per group."""

import re

import numpy as np
import pytest
from _programs import program_text

pytest.importorskip("mlir")
import kfuse  # noqa: E402
from kfuse import BuilderError  # noqa: E402
from kfuse import builder as kb  # noqa: E402
from kfuse import dtypes  # noqa: E402
from test_reductions import _SLICED_SOFTMAX  # noqa: E402  (a softmax over x[:, 1:1026])


def _run(prog, *arrays, kernels):
    f = kfuse.compile(prog, target="cpu")
    assert f.report.after.kernels == kernels, str(f.report)
    got = f(*arrays)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, prog.reference(*arrays)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                   rtol=2e-3 if g.dtype == np.float16 else 1e-6,
                                   atol=1e-6)
    cuda = kfuse.compile(prog, target="cuda")
    assert cuda.ptx.count(".entry") == kernels
    return f


@pytest.mark.parametrize("dt", ["f32", "f16", "i32", "f64"])
def test_pad_numerics_per_dtype(dt):
    p = kb.Program(f"pad_{dt}")
    x = p.input("x", (5, 7), dt)
    value = -3 if dt == "i32" else 0.25
    p.output(kb.pad(x, ((1, 2), (0, 3)), value=value) * 2, name="y")
    rng = np.random.default_rng(1)
    a = (rng.integers(-9, 9, (5, 7)) if dt == "i32"
         else rng.standard_normal((5, 7))).astype(dtypes.to_numpy(dtypes.get(dt)))
    _run(p, a, kernels=1)


def test_pad_fuses_producer_and_consumer_into_one_kernel():
    # exp runs at the gathered points (never on the padding), the broadcast
    # add and relu over the padded space: one kernel reading x and b once.
    p = kb.Program("pad_chain")
    x = p.input("x", (6, 10), "f32")
    b = p.input("b", (14,), "f32")
    p.output(kb.relu(kb.pad(kb.exp(x), ((1, 2), (3, 1)), value=-1.5) + b), name="y")
    rng = np.random.default_rng(0)
    f = _run(p, rng.standard_normal((6, 10)).astype(np.float32),
             rng.standard_normal(14).astype(np.float32), kernels=1)
    g = f.report.groups[0]
    assert "math.exp" in g.ops and "tensor.extract" in g.ops
    assert g.bytes_read == (6 * 10 + 14) * 4 and g.bytes_written == 9 * 14 * 4


def test_pad_of_a_value_used_twice_is_a_gather_of_the_materialized_value():
    p = kb.Program("pad_shared")
    x = p.input("x", (8, 8), "f32")
    e = kb.exp(x)
    p.output(e + 1.0, name="e")
    p.output(kb.pad(e, ((1, 1), (1, 1))), name="p")
    rng = np.random.default_rng(2)
    _run(p, rng.standard_normal((8, 8)).astype(np.float32), kernels=2)


def test_pad_all_zero_widths_and_one_pair_for_every_dim():
    p = kb.Program("pad_forms")
    x = p.input("x", (3, 4, 5), "f32")
    p.output(kb.pad(x, (2, 1)), name="a")
    p.output(kb.pad(x, ((0, 0), (0, 0), (0, 0))) + 1.0, name="b")
    rng = np.random.default_rng(3)
    # two output spaces (6x7x8 and 3x4x5), one kernel (multi-tensor: a
    # generic each); the empty pad folds away (one gather and select, the
    # padded output's, and the add)
    f = _run(p, rng.standard_normal((3, 4, 5)).astype(np.float32), kernels=1)
    assert f.report.groups[0].ops == ["tensor.extract", "arith.select", "arith.addf"]


@pytest.mark.parametrize("widths, match", [
    (((1, 1),), "one .before, after. pair"),
    (((1, -1), (0, 0)), "non-negative"),
    (((1, 1.5), (0, 0)), "non-negative ints"),
    ("ab", "pair"),
])
def test_pad_rejects_bad_widths(widths, match):
    p = kb.Program("bad")
    x = p.input("x", (4, 4), "f32")
    with pytest.raises(BuilderError, match=match):
        kb.pad(x, widths)


def test_pad_rejects_bool_and_mismatched_scalar():
    p = kb.Program("bad")
    x = p.input("x", (4, 4), "f32")
    i = p.input("i", (4, 4), "i32")
    with pytest.raises(BuilderError, match="i1"):
        kb.pad(x > 0.0, (1, 1))
    with pytest.raises(BuilderError, match="float"):
        kb.pad(i, (1, 1), value=0.5)


def test_pad_of_a_keepdims_dim_is_rejected():
    p = kb.Program("bad")
    x = p.input("x", (4, 6), "f32")
    s = kb.sum(x, axis=1, keepdims=True)
    with pytest.raises(BuilderError, match="keepdims"):
        kb.pad(s, ((0, 0), (1, 1)))
    kb.pad(s, ((1, 1), (0, 0)))  # padding the kept dim is fine


VIEW_CHAIN = """
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
func.func @view_chain(%x: tensor<4x8x8xf32>, %b: tensor<8xf32>) -> tensor<2x16x8xf32> {
  %e0 = tensor.empty() : tensor<4x8x8xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x8x8xf32>) outs(%e0 : tensor<4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8x8xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<4x8x8xf32> into tensor<32x8xf32>
  %v = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 16, 8] : tensor<32x8xf32> into tensor<2x16x8xf32>
  %e1 = tensor.empty() : tensor<2x16x8xf32>
  %y = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v, %b : tensor<2x16x8xf32>, tensor<8xf32>) outs(%e1 : tensor<2x16x8xf32>) {
  ^bb0(%in: f32, %bb: f32, %out: f32):
    %w = arith.addf %in, %bb : f32
    linalg.yield %w : f32
  } -> tensor<2x16x8xf32>
  return %y : tensor<2x16x8xf32>
}
"""


def test_view_between_elementwise_ops_is_one_kernel():
    f = kfuse.compile(VIEW_CHAIN, target="cpu")
    assert f.report.after.kernels == 1, str(f.report)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 8, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    np.testing.assert_allclose(f(x, b), np.exp(x).reshape(2, 16, 8) + b, rtol=1e-6, atol=1e-6)
    assert kfuse.compile(VIEW_CHAIN, target="cuda").ptx.count(".entry") == 1


def test_view_of_a_broadcasting_producer_still_splits_correctly():
    # The producer reads a broadcast operand: the reshape cannot move above
    # it, so it separates two kernels (and the answer is still right).
    text = VIEW_CHAIN.replace(
        "ins(%x : tensor<4x8x8xf32>) outs(%e0", "ins(%b : tensor<8xf32>) outs(%e0").replace(
        "#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>\n",
        "#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>\n"
        "#b3 = affine_map<(d0, d1, d2) -> (d2)>\n").replace(
        "{indexing_maps = [#map, #map], iterator_types = [\"parallel\", \"parallel\", "
        "\"parallel\"]}\n      ins(%b", "{indexing_maps = [#b3, #map], iterator_types = "
        "[\"parallel\", \"parallel\", \"parallel\"]}\n      ins(%b")
    f = kfuse.compile(text, target="cpu")
    assert f.report.after.kernels == 2, str(f.report)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 8, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    want = np.broadcast_to(np.exp(b), (4, 8, 8)).reshape(2, 16, 8) + b
    np.testing.assert_allclose(f(x, b), want, rtol=1e-6)


SLICES = """
func.func @slices(%x: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %t = linalg.transpose ins(%x : tensor<8x64xf32>) outs(%e : tensor<64x8xf32>) permutation = [1, 0]
  %s = tensor.extract_slice %t[8, 0] [32, 8] [1, 1] : tensor<64x8xf32> to tensor<32x8xf32>
  %ss = tensor.extract_slice %s[2, 0] [4, 8] [3, 1] : tensor<32x8xf32> to tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %y = linalg.exp ins(%ss : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
""".replace("func.func @slices(%x: tensor<8x64xf32>) -> tensor<4x8xf32> {",
            "func.func @slices(%x: tensor<8x64xf32>) -> tensor<4x8xf32> {\n"
            "  %e = tensor.empty() : tensor<64x8xf32>")


def test_slice_of_a_slice_of_a_transpose_is_one_gather_kernel():
    f = kfuse.compile(SLICES, target="cpu")
    assert f.report.after.kernels == 1, str(f.report)
    x = np.random.default_rng(6).standard_normal((8, 64)).astype(np.float32)
    np.testing.assert_allclose(f(x), np.exp(x.T[8:40][2:14:3]), rtol=1e-6)
    assert kfuse.compile(SLICES, target="cuda").ptx.count(".entry") == 1


# Attention scores from one fused projection: q, k and v are the three
# aligned thirds of qkv = x @ w. The thirds become views of qkv (reshaped to
# 16x3x32, read at block 0, 1 or 2), so q @ k^T reads both operands in place.
ATTENTION = program_text("attention_slices.mlir")


def test_aligned_slices_of_a_projection_are_read_in_place():
    # qkv | q @ k^T * 0.25 | scores @ v: three kernels, no copy of q, k or v
    f = kfuse.compile(ATTENTION, target="cpu")
    assert f.report.after.kernels == 3, str(f.report)
    assert [g.kind for g in f.report.groups] == ["contraction"] * 3
    assert not any("tensor.extract" in g.ops for g in f.report.groups)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 24)).astype(np.float32)
    w = rng.standard_normal((24, 96)).astype(np.float32)
    qkv = x.astype(np.float64) @ w
    q, k, v = qkv[:, :32], qkv[:, 32:64], qkv[:, 64:]
    np.testing.assert_allclose(f(x, w), (q @ k.T * 0.25) @ v, rtol=1e-4, atol=1e-3)
    assert kfuse.compile(ATTENTION, target="cuda").ptx.count(".entry") == 3
    # the report charges what the views reach: q @ k^T reads two thirds of
    # qkv (2 x 16x32 f32), scores @ v reads the scores and the v third
    qk, sv = f.report.groups[1], f.report.groups[2]
    assert qk.bytes_read == 2 * 16 * 32 * 4, str(f.report)
    assert sv.bytes_read == (16 * 16 + 16 * 32) * 4, str(f.report)


ALIGNED_INTO_ROWS = program_text("aligned_rows.mlir")


def test_aligned_slices_into_a_softmax_and_an_elementwise_op():
    # softmax over the middle third of each row (one row kernel reading the
    # third through a view) and -x[:, 1::2] (a lane of a view)
    f = kfuse.compile(ALIGNED_INTO_ROWS, target="cpu")
    assert [g.kind for g in f.report.groups] == ["reduction", "elementwise"], str(f.report)
    x = np.random.default_rng(8).standard_normal((8, 192)).astype(np.float32)
    t, n = f(x)
    s = np.exp(x[:, 64:128].astype(np.float64))
    np.testing.assert_allclose(t, s / s.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(n, -x[:, 1::2])
    # each kernel is charged the columns it reads: a third, every other one
    assert [g.bytes_read for g in f.report.groups] == [8 * 64 * 4, 8 * 96 * 4]
    # (two kernels in one launch: fusion-pack-launches)
    cuda = kfuse.compile(ALIGNED_INTO_ROWS, target="cuda")
    assert cuda.ptx.count(".entry") == 1
    assert [name for name, _, _ in cuda.plan.steps[0].packs] == ["rows_g0", "rows_g1"]


def test_report_charges_a_tensor_and_its_reshape_once():
    # torch's rotate_half reads x both as it is and through a reshape of x
    # (an expand_shape outside the group): the same bytes in memory, charged
    # once (the emulator tests check such numbers against what kernels touch)
    f = kfuse.compile(program_text("torch/torch_rotary.mlir"), target="cpu")
    (g,) = f.report.groups
    assert g.bytes_read == (2 * 8 * 16 * 32 + 2 * 16 * 32) * 4, str(f.report)


# torch.cat([a, b])[:4] * c, torch.roll(a, 3, -1) and a slice_scatter of c
# into a: the slice lies inside a, so the loop ranges decide the concat's
# select and only a is read; roll concatenates two slices cast to dynamic
# sizes; the insert reads a outside row 2.
_CAT_ROLL_SCATTER = """
func.func @cat_roll_scatter(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %cat = tensor.concat dim(0) %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %top = tensor.extract_slice %cat[0, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%top, %c : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %v = arith.mulf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %s1 = tensor.extract_slice %a[0, 5] [4, 3] [1, 1] : tensor<4x8xf32> to tensor<4x3xf32>
  %d1 = tensor.cast %s1 : tensor<4x3xf32> to tensor<4x?xf32>
  %s2 = tensor.extract_slice %a[0, 0] [4, 5] [1, 1] : tensor<4x8xf32> to tensor<4x5xf32>
  %d2 = tensor.cast %s2 : tensor<4x5xf32> to tensor<4x?xf32>
  %roll = tensor.concat dim(1) %d1, %d2 : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x8xf32>
  %row = tensor.extract_slice %c[1, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
  %ins = tensor.insert_slice %row into %a[2, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<4x8xf32>
  return %m, %roll, %ins : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
"""


def test_slice_of_a_concat_roll_and_slice_scatter_on_both_targets():
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal((4, 8)).astype(np.float32) for _ in range(3))
    scattered = a.copy()
    scattered[2] = c[1]
    want = [a * c, np.roll(a, 3, -1), scattered]
    cpu = kfuse.compile(_CAT_ROLL_SCATTER, target="cpu")
    cuda = kfuse.compile(_CAT_ROLL_SCATTER, target="cuda")
    for f in (cpu, cuda):
        # b is never read: 2 inputs of 128 B, 3 outputs of 128 B
        assert f.report.after.bytes_read == 2 * 128, str(f.report)
        assert f.report.after.bytes_written == 3 * 128
    for got in (cpu(a, b, c), cuda.emulate(a, b, c)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert all(1 not in st["load"]["by_buffer"] for st in cuda.emulator.last_stats)  # (b)


# Slices of a program's arguments stay slices for the linalg ops that read
# them (as inputs): views of the argument's buffer, addressed through their
# strides and offset by every kernel that reads them (fusion-fold-copies).
# Each program: (text, reference, CUDA kernels, bytes the kernels read of x).
_ID2 = "affine_map<(d0, d1) -> (d0, d1)>"
_VIEWS = {
    # a softmax over x[:, 1:1026]: one row kernel (as gathers: 3 kernels, a
    # copy of the slice, the max with the exps, the sum with the quotients)
    "softmax": (_SLICED_SOFTMAX, lambda x: (lambda e: e / e.sum(-1, keepdims=True))(
        np.exp(x[:, 1:1026] - x[:, 1:1026].max(-1, keepdims=True))), 1, 4 * 1025 * 4),
    # x[:, 2:] - x[:, 1:-1] (two views of one argument, off vector
    # boundaries: each lane loaded, every byte once from memory)
    "difference": ("""
func.func @difference(%x: tensor<4x1027xf32>) -> tensor<4x1025xf32> {
  %v = tensor.extract_slice %x[0, 1] [4, 1025] [1, 1] : tensor<4x1027xf32> to tensor<4x1025xf32>
  %w = tensor.extract_slice %x[0, 2] [4, 1025] [1, 1] : tensor<4x1027xf32> to tensor<4x1025xf32>
  %e = tensor.empty() : tensor<4x1025xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %w : tensor<4x1025xf32>, tensor<4x1025xf32>) outs(%e : tensor<4x1025xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %b, %a : f32
    linalg.yield %d : f32
  } -> tensor<4x1025xf32>
  return %y : tensor<4x1025xf32>
}""", lambda x: x[:, 2:1027] - x[:, 1:1026], 1, None),
    # the column sums of x[1:, 4:1028] (rows start on a vector boundary:
    # vectors), a matmul of x[:, 1:1026] (in place, no copy)
    "colsum": ("""
func.func @colsum(%x: tensor<4x1032xf32>) -> tensor<1024xf32> {
  %v = tensor.extract_slice %x[1, 4] [3, 1024] [1, 1] : tensor<4x1032xf32> to tensor<3x1024xf32>
  %z = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<1024xf32>
  %f = linalg.fill ins(%z : f32) outs(%er : tensor<1024xf32>) -> tensor<1024xf32>
  %s = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%v : tensor<3x1024xf32>) outs(%f : tensor<1024xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  return %s : tensor<1024xf32>
}""", lambda x: x[1:, 4:1028].sum(0), 1, 3 * 1024 * 4),
    "matmul": ("""
func.func @matmul(%x: tensor<4x1027xf32>, %w: tensor<1025x8xf32>) -> tensor<4x8xf32> {
  %v = tensor.extract_slice %x[0, 1] [4, 1025] [1, 1] : tensor<4x1027xf32> to tensor<4x1025xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%v, %w : tensor<4x1025xf32>, tensor<1025x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}""", lambda x, w: x[:, 1:1026].astype(np.float64) @ w, 1, None),
}


@pytest.mark.parametrize("name", sorted(_VIEWS))
def test_slices_of_arguments_are_views_on_both_targets(name):
    text, ref, kernels, x_bytes = _VIEWS[name]
    text = f"#id = {_ID2}\n{text}"
    cpu = kfuse.compile(text, target="cpu")
    cuda = kfuse.compile(text, target="cuda", chip="sm_90")
    assert cuda.report.after.kernels == kernels, str(cuda.report)
    assert not cuda.report.unfused_ops, str(cuda.report)  # (the views are no kernels)
    assert "tensor.extract %" not in cuda.stages["normalize"]  # (no gathers)
    assert "memref.subview" in cuda.stages["codegen"]
    rng = np.random.default_rng(21)
    ins = [rng.standard_normal(s.shape).astype(np.float32) for s in cuda.plan.inputs]
    want = ref(*ins)
    np.testing.assert_allclose(cpu(*ins), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cuda.emulate(*ins), want, rtol=1e-5, atol=1e-5)
    (st,) = cuda.emulator.last_stats
    # every byte of the output stored once, a float's 32-byte sectors about
    # once a request (rows of 1025: a warp's 128 bytes off a sector boundary
    # touch 5 sectors)
    assert st["store"]["bytes"] == cuda.plan.outputs[0].nbytes
    assert 32 * st["store"]["sectors"] <= 1.25 * st["store"]["bytes"], st["store"]
    if x_bytes is not None:
        assert st["load"]["by_buffer"][0] == x_bytes, st["load"]
    # the report charges the union of what the views reach, as the kernel
    # reads it (x[:, 2:] - x[:, 1:-1]: columns 1 to 1026, once)
    assert cuda.report.after.bytes_read == sum(st["read"].values()), (str(cuda.report), st)


def test_slices_of_arguments_returned_are_copied_and_reshaped_are_read_in_place():
    # returned as it is, the slice is an output of its own (a copy kernel);
    # reshaped (a reshape of a strided view is no view), its reader runs over
    # the slice's own loops and reads the view in place, writing the
    # collapsed result (was a gather: a copy of the slice's elements)
    text = """
func.func @copied(%x: tensor<4x1027xf32>) -> (tensor<4x1025xf32>, tensor<4100xf32>) {
  %v = tensor.extract_slice %x[0, 1] [4, 1025] [1, 1] : tensor<4x1027xf32> to tensor<4x1025xf32>
  %w = tensor.extract_slice %x[0, 2] [4, 1025] [1, 1] : tensor<4x1027xf32> to tensor<4x1025xf32>
  %c = tensor.collapse_shape %w [[0, 1]] : tensor<4x1025xf32> into tensor<4100xf32>
  %e = tensor.empty() : tensor<4100xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%c : tensor<4100xf32>) outs(%e : tensor<4100xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.negf %a : f32
    linalg.yield %d : f32
  } -> tensor<4100xf32>
  return %v, %y : tensor<4x1025xf32>, tensor<4100xf32>
}"""
    x = np.random.default_rng(22).standard_normal((4, 1027)).astype(np.float32)
    want = [x[:, 1:1026], -x[:, 2:].reshape(-1)]
    cpu = kfuse.compile(text, target="cpu")
    cuda = kfuse.compile(text, target="cuda", chip="sm_90")
    # (the returned slice, at column 1, is copied; the reshaped one, at
    # column 2, is the only view)
    views = re.findall(r"memref.subview %arg0(\[[0-9, ]*\])", cuda.stages["codegen"])
    assert views == ["[0, 2]"], views
    # (the copy and the negation, independent, share one launch)
    assert cuda.report.after.kernels == 1
    for got in (cpu(x), cuda.emulate(x)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    # the launch reads the floats its two generics need of x, columns 1 to
    # 1026 of each row (4 x 1025 each, offset by one), once
    (st,) = cuda.emulator.last_stats
    assert st["read"] == {0: 4 * 1026 * 4}, st["read"]


# Views under the other row-kernel shapes: a sum of squares over x[1:-1] of
# a million floats (split into slices, the last block to count finishing:
# expand_shapes of the view), column sums of x[2:, 1:] (slices of rows,
# partials then a finish), the maxima of rows of 300001 (a ragged split
# over the view), an f16 x - max(x) over rows of x[:, 1:2050], and two views
# of one argument read together (each row's squared steps). (Splits once
# refused views: the million floats went to one block.)
_VIEW_IDS = ("#id = affine_map<(d0, d1) -> (d0, d1)>\n#row = affine_map<(d0, d1) -> (d0)>\n"
             "#col = affine_map<(d0, d1) -> (d1)>\n#v1 = affine_map<(d0) -> (d0)>\n"
             "#s1 = affine_map<(d0) -> ()>\n")
_SPLIT_VIEWS = {}
_SPLIT_VIEWS["bignorm"] = ("""
func.func @f(%x: tensor<1000003xf32>) -> tensor<f32> {
  %v = tensor.extract_slice %x[1] [1000001] [1] : tensor<1000003xf32> to tensor<1000001xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#v1, #s1], iterator_types = ["reduction"]} ins(%v : tensor<1000001xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}""", lambda x: (x[1:1000002].astype(np.float64) ** 2).sum(), "f32")
_SPLIT_VIEWS["bigcols"] = ("""
func.func @f(%x: tensor<20003x17xf32>) -> tensor<16xf32> {
  %v = tensor.extract_slice %x[2, 1] [20001, 16] [1, 1] : tensor<20003x17xf32> to tensor<20001x16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%v : tensor<20001x16xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %s : tensor<16xf32>
}""", lambda x: x[2:20003, 1:17].astype(np.float64).sum(0), "f32")
_SPLIT_VIEWS["bigrows"] = ("""
func.func @f(%x: tensor<3x300007xf32>) -> tensor<3xf32> {
  %v = tensor.extract_slice %x[0, 3] [3, 300001] [1, 1] : tensor<3x300007xf32> to tensor<3x300001xf32>
  %z = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%v : tensor<3x300001xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  return %s : tensor<3xf32>
}""", lambda x: x[:, 3:300004].max(-1), "f32")
_SPLIT_VIEWS["halfsoftmax"] = ("""
func.func @f(%x: tensor<4x2051xf16>) -> tensor<4x2049xf16> {
  %v = tensor.extract_slice %x[0, 1] [4, 2049] [1, 1] : tensor<4x2051xf16> to tensor<4x2049xf16>
  %z = arith.constant 0xFC00 : f16
  %er = tensor.empty() : tensor<4xf16>
  %fm = linalg.fill ins(%z : f16) outs(%er : tensor<4xf16>) -> tensor<4xf16>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%v : tensor<4x2049xf16>) outs(%fm : tensor<4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.maximumf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<4xf16>
  %ee = tensor.empty() : tensor<4x2049xf16>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%v, %m : tensor<4x2049xf16>, tensor<4xf16>) outs(%ee : tensor<4x2049xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %d = arith.subf %a, %b : f16
    linalg.yield %d : f16
  } -> tensor<4x2049xf16>
  return %y : tensor<4x2049xf16>
}""", lambda x: x[:, 1:2050] - x[:, 1:2050].max(-1, keepdims=True), "f16")
_SPLIT_VIEWS["bool"] = ("""
func.func @f(%x: tensor<4x1027xi1>, %y: tensor<4x1025xf32>) -> tensor<4x1025xf32> {
  %v = tensor.extract_slice %x[0, 1] [4, 1025] [1, 1] : tensor<4x1027xi1> to tensor<4x1025xi1>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x1025xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%v, %y : tensor<4x1025xi1>, tensor<4x1025xf32>) outs(%e : tensor<4x1025xf32>) {
  ^bb0(%a: i1, %b: f32, %o: f32):
    %s = arith.select %a, %b, %z : f32
    linalg.yield %s : f32
  } -> tensor<4x1025xf32>
  return %r : tensor<4x1025xf32>
}""", lambda x, y: np.where(x[:, 1:1026], y, 0), "bool")
_SPLIT_VIEWS["selfmix"] = ("""
func.func @f(%x: tensor<4x1025xf32>) -> tensor<4xf32> {
  %v = tensor.extract_slice %x[0, 1] [4, 1024] [1, 1] : tensor<4x1025xf32> to tensor<4x1024xf32>
  %w = tensor.extract_slice %x[0, 0] [4, 1024] [1, 1] : tensor<4x1025xf32> to tensor<4x1024xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]} ins(%v, %w : tensor<4x1024xf32>, tensor<4x1024xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %m = arith.mulf %d, %d : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}""", lambda x: ((x[:, 1:].astype(np.float64) - x[:, :-1]) ** 2).sum(-1), "f32")


@pytest.mark.parametrize("name", sorted(_SPLIT_VIEWS))
def test_views_under_split_and_shifted_row_kernels(name):
    text, ref, dt = _SPLIT_VIEWS[name]
    text = _VIEW_IDS + text
    cpu = kfuse.compile(text, target="cpu")
    cuda = kfuse.compile(text, target="cuda", chip="sm_90")
    # (booleans stay gathers: their arguments become bytes later)
    assert ("memref.subview" in cuda.stages["codegen"]) == (dt != "bool")
    launches = [st for st in cuda.plan.steps if st.op == "launch"]
    split = {"bignorm": lambda: launches[0].grid[0] > 1,
             "bigrows": lambda: launches[0].grid[0] > 3,
             "bigcols": lambda: len(launches) == 2}
    assert split.get(name, lambda: True)(), [(st.kernel, st.grid) for st in launches]
    rng = np.random.default_rng(23)
    ins = [rng.integers(0, 2, s.shape).astype(bool) if s.dtype.name in ("i1", "bool")
           else rng.standard_normal(s.shape).astype(np.float16 if dt == "f16" else np.float32)
           for s in cuda.plan.inputs]
    want = np.asarray(ref(*ins), dtype=np.float64)
    tol = dict(rtol=1e-3, atol=1e-3) if dt == "f16" else dict(rtol=1e-5, atol=1e-4)
    for got in (cpu(*ins), cuda.emulate(*ins)):
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, **tol)


@pytest.mark.parametrize("offset", [1, 2, 4])
def test_elementwise_vectors_follow_the_alignment_of_views(offset):
    # x[:, o:o + 1024] ** 2 of x[64, 1028]: rows of the view start o floats
    # past a vector boundary (rows 1028 apart), so the kernel moves vectors
    # of gcd(o, 4) floats: a vector of 4 there would load lane by lane, each
    # lane a request of its own over 16 sectors a warp (4x the sectors of
    # the bytes, 33792 for 262144 bytes; now 10240, 9216 and 8448).
    text = f"""
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @ewv(%x: tensor<64x1028xf32>) -> tensor<64x1024xf32> {{
  %v = tensor.extract_slice %x[0, {offset}] [64, 1024] [1, 1] : tensor<64x1028xf32> to tensor<64x1024xf32>
  %e = tensor.empty() : tensor<64x1024xf32>
  %y = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%v : tensor<64x1024xf32>) outs(%e : tensor<64x1024xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %d = arith.mulf %a, %a : f32
    linalg.yield %d : f32
  }} -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}}"""
    f = kfuse.compile(text, target="cuda", chip="sm_90")
    x = np.random.default_rng(24).standard_normal((64, 1028)).astype(np.float32)
    np.testing.assert_array_equal(f.emulate(x), x[:, offset:offset + 1024] ** 2)
    (st,) = f.emulator.last_stats
    assert st["load"]["requests"] == 64 * 1024 // (32 * offset), st["load"]
    assert 32 * st["load"]["sectors"] <= 1.25 * st["load"]["bytes"], st["load"]
