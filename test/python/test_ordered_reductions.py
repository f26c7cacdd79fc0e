"""Reductions whose step is not an associative op (an alternating sum, a
Horner step): the CUDA target runs their groups as ordered kernels, a thread
per element written and the reduction loops in order, so its results are the
CPU target's, checked here in the PTX emulator against numpy loops in the
same order. Steps that are associative ops in disguise (`acc - x`, an integer
compare-and-select) become those ops and run in row kernels."""

import numpy as np
import pytest

pytest.importorskip("mlir")
import kfuse  # noqa: E402
from kfuse.errors import GuardError  # noqa: E402

ROWS = """
#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @rows(%x: tensor<64x1000xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1000xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    linalg.yield %d : f32
  } -> tensor<64xf32>
  return %s : tensor<64xf32>
}
"""

HORNER = """
#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @horner(%x: tensor<48x300xf32>, %t: tensor<48xf32>) -> (tensor<48xf32>, tensor<48x300xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<48xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<48xf32>) -> tensor<48xf32>
  %p = linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x, %t : tensor<48x300xf32>, tensor<48xf32>) outs(%z : tensor<48xf32>) {
  ^bb0(%c: f32, %tt: f32, %acc: f32):
    %m = arith.mulf %acc, %tt : f32
    %a = arith.addf %m, %c : f32
    linalg.yield %a : f32
  } -> tensor<48xf32>
  %e2 = tensor.empty() : tensor<48x300xf32>
  %y = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %p : tensor<48x300xf32>, tensor<48xf32>) outs(%e2 : tensor<48x300xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<48x300xf32>
  return %p, %y : tensor<48xf32>, tensor<48x300xf32>
}
"""

# Over the leading axis (a column reduction) and over everything (one
# thread): alternating sums too.
COLUMNS = """
func.func @columns(%x: tensor<300x70xf32>, %v: tensor<5000xf32>) -> (tensor<70xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<70xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<70xf32>) -> tensor<70xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<300x70xf32>) outs(%z : tensor<70xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    linalg.yield %d : f32
  } -> tensor<70xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%v : tensor<5000xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  return %s, %a : tensor<70xf32>, tensor<f32>
}
"""

# A row max (associative) and an alternating sum of exp(x - max) in one
# group: the max runs as a row kernel of its own, the sum in order.
MIXED = """
#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @mixed(%x: tensor<32x500xf32>) -> tensor<32xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %m = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x500xf32>) outs(%mi : tensor<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<32x500xf32>, tensor<32xf32>) outs(%z : tensor<32xf32>) {
  ^bb0(%in: f32, %mx: f32, %acc: f32):
    %d = arith.subf %in, %mx : f32
    %p = math.exp %d : f32
    %a = arith.subf %p, %acc : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  return %s : tensor<32xf32>
}
"""

# A gather inside an ordered reduction: its guard is checked in the loop.
GATHER = """
#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @gather(%ids: tensor<16x40xi64>, %table: tensor<100xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%ids : tensor<16x40xi64>) outs(%z : tensor<16xf32>) {
  ^bb0(%id: i64, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %v = tensor.extract %table[%i] : tensor<100xf32>
    %a = arith.subf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  return %s : tensor<16xf32>
}
"""


def _alternating(x, axis=-1):
    """acc' = x - acc along `axis`, in order, in float32."""
    x = np.moveaxis(x, axis, -1)
    acc = np.zeros(x.shape[:-1], np.float32)
    for j in range(x.shape[-1]):
        acc = (x[..., j] - acc).astype(np.float32)
    return acc


def _launches(f):
    return [s.kernel for s in f.plan.steps if s.op == "launch"]


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(7)


def test_alternating_rows_are_exact(rng):
    x = rng.standard_normal((64, 1000)).astype(np.float32)
    want = _alternating(x)
    cuda = kfuse.compile(ROWS, target="cuda")
    # one launch: the accumulator starts at the fill's value
    assert _launches(cuda) == ["rows_g0_ordered0"]
    np.testing.assert_array_equal(cuda.emulate(x), want)
    np.testing.assert_array_equal(kfuse.compile(ROWS, target="cpu")(x), want)


def test_horner_with_epilogue(rng):
    x = rng.standard_normal((48, 300)).astype(np.float32)
    t = rng.uniform(-1, 1, 48).astype(np.float32)
    want = np.zeros(48, np.float64)
    for j in range(300):
        want = want * t + x[:, j]
    cuda = kfuse.compile(HORNER, target="cuda")
    assert _launches(cuda) == ["horner_g0_ordered0", "horner_g0_ordered1"]
    for f in (cuda.emulate, kfuse.compile(HORNER, target="cpu")):
        p, y = f(x, t)
        np.testing.assert_allclose(p, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(y, x - p[:, None], rtol=0, atol=0)


def test_column_and_full_reductions_in_order(rng):
    x = rng.standard_normal((300, 70)).astype(np.float32)
    v = rng.standard_normal(5000).astype(np.float32)
    cuda = kfuse.compile(COLUMNS, target="cuda")
    assert all("_ordered" in k for k in _launches(cuda))
    for f in (cuda.emulate, kfuse.compile(COLUMNS, target="cpu")):
        s, a = f(x, v)
        np.testing.assert_array_equal(s, _alternating(x, axis=0))
        np.testing.assert_array_equal(a, _alternating(v))


def test_group_with_an_ordered_reduction_keeps_its_row_reductions(rng):
    x = (rng.standard_normal((32, 500)) * 3).astype(np.float32)
    cuda = kfuse.compile(MIXED, target="cuda")
    assert _launches(cuda) == ["mixed_g0_rows0", "mixed_g0_ordered1"]
    m = x.max(axis=1, keepdims=True)
    want = _alternating(np.exp(x - m).astype(np.float32))
    for f in (cuda.emulate, kfuse.compile(MIXED, target="cpu")):
        np.testing.assert_allclose(f(x), want, rtol=1e-4, atol=1e-5)


MASKED = """
func.func @masked_ordered(%x: tensor<64x300xf32>, %m: tensor<64x300xi1>) -> tensor<64xf32> {
  %true = arith.constant true
  %e0 = tensor.empty() : tensor<64xi1>
  %i0 = linalg.fill ins(%true : i1) outs(%e0 : tensor<64xi1>) -> tensor<64xi1>
  %all = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<64x300xi1>) outs(%i0 : tensor<64xi1>) {
  ^bb0(%a: i1, %acc: i1):
    %r = arith.andi %a, %acc : i1
    linalg.yield %r : i1
  } -> tensor<64xi1>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x300xf32>) outs(%i1 : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.subf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %nan = arith.constant 0x7FC00000 : f32
  %e2 = tensor.empty() : tensor<64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%all, %q : tensor<64xi1>, tensor<64xf32>) outs(%e2 : tensor<64xf32>) {
  ^bb0(%a: i1, %b: f32, %o: f32):
    %r = arith.select %a, %nan, %b : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %y : tensor<64xf32>
}
"""


def test_boolean_row_value_between_kernels(rng):
    # "every element of the row masked?" (an andi reduction) beside an
    # alternating sum (an ordered kernel): the booleans cross from the row
    # kernel to the ordered one as bytes (memref<64xi1> stopped the CUDA
    # target's lowering); rows all masked give NaN, the others the sum
    x = rng.standard_normal((64, 300)).astype(np.float32)
    m = rng.random((64, 300)) < 0.5
    m[::3] = True
    want = np.where(m.all(axis=1), np.float32(np.nan), _alternating(x))
    cuda = kfuse.compile(MASKED, target="cuda")
    assert [b.dtype.name for b in cuda.plan.buffers if b.kind == "temp"].count("i8") == 1
    assert len(_launches(cuda)) > 1
    for f in (cuda.emulate, kfuse.compile(MASKED, target="cpu")):
        np.testing.assert_array_equal(f(x, m), want)


def test_report_says_the_launch_runs_in_order():
    report = str(kfuse.compile(ROWS, target="cuda").report)
    [line] = [ln for ln in report.splitlines() if "launch rows_g0_ordered0" in ln]
    assert "in order: a thread per element it writes" in line
    assert "not an associative op" in line
    # (2 warps x 32 rows x 9 floats: the staged rows)
    assert "staged through 2304 bytes of shared memory a block" in line
    # (a launch a kernel: multi_tensor=False; by default the two share one)
    cols = str(kfuse.compile(COLUMNS, target="cuda", multi_tensor=False).report)
    [line] = [ln for ln in cols.splitlines() if "launch columns_g0_ordered0" in ln]
    assert "in order" in line and "staged" not in line
    packed = str(kfuse.compile(COLUMNS, target="cuda").report)
    [line] = [ln for ln in packed.splitlines() if "launch columns_g0_ordered0" in ln]
    assert "packing 2 independent kernels" in line
    assert "in order of g0_ordered0, g1_ordered0" in line
    # (the group's launch is its own: no other launch claims to finish it)
    assert "runs group" not in report


def test_guard_in_an_ordered_reduction(rng):
    ids = rng.integers(0, 100, (16, 40)).astype(np.int64)
    table = rng.standard_normal(100).astype(np.float32)
    cuda = kfuse.compile(GATHER, target="cuda")
    assert len(cuda.plan.guards) == 1
    want = _alternating(table[ids])
    np.testing.assert_array_equal(cuda.emulate(ids, table), want)
    bad = ids.copy()
    bad[15, 39] = 100
    with pytest.raises(GuardError, match="dimension 0 \\(size 100\\)"):
        cuda.emulate(bad, table)
    with pytest.raises(GuardError):
        kfuse.compile(GATHER, target="cpu")(bad, table)


SUB_ROWS = ROWS.replace("%d = arith.subf %in, %acc", "%d = arith.subf %acc, %in")

SELECT_MAX = """
#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @imax(%x: tensor<64x1000xi32>) -> tensor<64xi32> {
  %low = arith.constant -2147483648 : i32
  %e = tensor.empty() : tensor<64xi32>
  %z = linalg.fill ins(%low : i32) outs(%e : tensor<64xi32>) -> tensor<64xi32>
  %s = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1000xi32>) outs(%z : tensor<64xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %c = arith.cmpi slt, %acc, %in : i32
    %m = arith.select %c, %in, %acc : i32
    linalg.yield %m : i32
  } -> tensor<64xi32>
  return %s : tensor<64xi32>
}
"""


def test_associative_steps_in_disguise_run_in_row_kernels(rng):
    x = rng.standard_normal((64, 1000)).astype(np.float32)
    cuda = kfuse.compile(SUB_ROWS, target="cuda")
    assert _launches(cuda) == ["rows_g0"]
    np.testing.assert_allclose(cuda.emulate(x), -x.sum(axis=1, dtype=np.float64),
                               rtol=1e-4, atol=1e-4)
    i = rng.integers(-2**31, 2**31 - 1, (64, 1000)).astype(np.int32)
    imax = kfuse.compile(SELECT_MAX, target="cuda")
    assert _launches(imax) == ["imax_g0"]
    np.testing.assert_array_equal(imax.emulate(i), i.max(axis=1))
    np.testing.assert_array_equal(kfuse.compile(SELECT_MAX, target="cpu")(i), i.max(axis=1))


def test_gpu_test_program(rng):
    # (in the GPU test set: bench/make_artifacts.py's MLIR_TEST_PROGRAMS)
    from _programs import program_text
    text = program_text("ordered/ordered_reductions.mlir")
    x = rng.standard_normal((64, 1000)).astype(np.float32)
    t = (rng.standard_normal(64) * 2).astype(np.float32)
    v = rng.standard_normal(5000).astype(np.float32)
    horner = np.zeros(64, np.float64)
    factor = np.tanh(t.astype(np.float64))
    for j in range(1000):
        horner = horner * factor + x[:, j]
    cuda = kfuse.compile(text, target="cuda")
    # (four kernels; the three small ones, independent, share a launch: the
    # last moves up past the large one, which it does not touch)
    assert len(_launches(cuda)) == 2
    assert [n for n, _, _ in cuda.plan.steps[0].packs] == [
        "ordered_reductions_g0_ordered0", "ordered_reductions_g0_ordered1",
        "ordered_reductions_g1_ordered0"]
    for f in (cuda.emulate, kfuse.compile(text, target="cpu")):
        alt, p, y, a = f(x, t, v)
        np.testing.assert_array_equal(alt, _alternating(x))
        np.testing.assert_allclose(p, horner, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(y, x - p[:, None])
        np.testing.assert_array_equal(a, _alternating(v))


def test_rows_are_staged_through_shared_memory(rng):
    # A thread a row would load from a sector of its own in every lane at
    # each step (32 sectors a load, 4 bytes used of each 32). Staged, each
    # warp loads its rows' next 32 bytes together: every sector read once,
    # whole.
    x = rng.standard_normal((64, 1000)).astype(np.float32)
    cuda = kfuse.compile(ROWS, target="cuda")
    np.testing.assert_array_equal(cuda.emulate(x), _alternating(x))
    [stats] = cuda.emulator.last_stats
    assert stats["load"]["bytes"] == x.nbytes
    assert stats["load"]["sectors"] * 32 == x.nbytes
    # The loads of the column reduction, a thread per column, were
    # coalesced already: nothing to stage. The alternating sum over all of
    # v is one thread's walk: its warp stages 256 elements at a time (32
    # consecutive ones a load), the last 136 of the 5000 loaded directly.
    cols = kfuse.compile(COLUMNS, target="cuda", multi_tensor=False)
    ir = cols.stages["codegen"]
    column_kernel = ir[ir.index("gpu.func @columns_g0_ordered0"):]
    column_kernel = column_kernel[:column_kernel.index("gpu.return")]
    assert "workgroup" not in column_kernel
    assert "memref<1x1x257xf32, #gpu.address_space<workgroup>>" in ir
    xs = rng.standard_normal((300, 70)).astype(np.float32)
    v = rng.standard_normal(5000).astype(np.float32)
    s, a = cols.emulate(xs, v)
    np.testing.assert_array_equal(a, _alternating(v))
    whole = cols.emulator.last_stats[1]["load"]
    # (was 5000 loads of a sector each)
    assert whole["requests"] == 19 * 8 + 136
    assert whole["sectors"] == 19 * 8 * 4 + 136


# Staging's corners: inputs of 2 and 1 bytes (chunks of 32 columns, one
# sector of the f16 row being two), a row of 70 (two chunks and 6 columns
# loaded directly), two reduction loops (the outer one around the chunks),
# an input read at the same place by every thread of a row point (w, not
# staged), and 37 points (the second warp's last 27 lanes compute the 37th
# point again and store nothing).
MIXED_DTYPES = """
#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#w = affine_map<(d0, d1, d2) -> (d1, d2)>
#r = affine_map<(d0, d1, d2) -> (d0)>
func.func @mixed_dtypes(%x: tensor<37x3x70xf16>, %m: tensor<37x3x70xi8>, %w: tensor<3x70xf32>) -> tensor<37xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<37xf32>) -> tensor<37xf32>
  %s = linalg.generic {indexing_maps = [#x, #x, #w, #r], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %m, %w : tensor<37x3x70xf16>, tensor<37x3x70xi8>, tensor<3x70xf32>) outs(%z : tensor<37xf32>) {
  ^bb0(%a: f16, %b: i8, %c: f32, %acc: f32):
    %af = arith.extf %a : f16 to f32
    %bf = arith.sitofp %b : i8 to f32
    %p = arith.mulf %af, %bf : f32
    %q = arith.addf %p, %c : f32
    %d = arith.subf %q, %acc : f32
    linalg.yield %d : f32
  } -> tensor<37xf32>
  return %s : tensor<37xf32>
}
"""


def test_staging_with_mixed_dtypes_a_tail_and_two_reduction_loops(rng):
    x = rng.standard_normal((37, 3, 70)).astype(np.float16)
    m = rng.integers(-128, 128, (37, 3, 70)).astype(np.int8)
    w = rng.standard_normal((3, 70)).astype(np.float32)
    terms = (x.astype(np.float32) * m.astype(np.float32) + w).astype(np.float32)
    want = _alternating(terms.reshape(37, 210))
    cuda = kfuse.compile(MIXED_DTYPES, target="cuda")
    assert "memref<2x32x33xf16, #gpu.address_space<workgroup>>" in cuda.stages["codegen"]
    assert "memref<2x32x33xi8, #gpu.address_space<workgroup>>" in cuda.stages["codegen"]
    assert "x32x33xf32" not in cuda.stages["codegen"]  # (w: not staged)
    np.testing.assert_array_equal(cuda.emulate(x, m, w), want)
    np.testing.assert_array_equal(kfuse.compile(MIXED_DTYPES, target="cpu")(x, m, w), want)


def _many_inputs(n64):
    """An alternating sum over rows of the sum of n64 f64 inputs and an i8
    one (the i8 sets the chunk: 32 columns)."""
    names = [f"%a{k}" for k in range(n64)]
    args = ", ".join(f"{a}: tensor<40x96xf64>" for a in names)
    block = ", ".join(f"{a}_in: f64" for a in names)
    total = "%b_f"
    body = []
    for a in names:
        body.append(f"    {a}_s = arith.addf {total}, {a}_in : f64")
        total = f"{a}_s"
    return f"""
#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @many({args}, %b: tensor<40x96xi8>) -> tensor<40xf64> {{
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<40xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<40xf64>) -> tensor<40xf64>
  %s = linalg.generic {{indexing_maps = [{", ".join(["#x"] * (n64 + 1))}, #r], iterator_types = ["parallel", "reduction"]}}
      ins({", ".join(names)}, %b : {", ".join(["tensor<40x96xf64>"] * n64)}, tensor<40x96xi8>) outs(%z : tensor<40xf64>) {{
  ^bb0({block}, %b_in: i8, %acc: f64):
    %b_f = arith.sitofp %b_in : i8 to f64
{chr(10).join(body)}
    %d = arith.subf {total}, %acc : f64
    linalg.yield %d : f64
  }} -> tensor<40xf64>
  return %s : tensor<40xf64>
}}
"""


@pytest.mark.parametrize("n64, staged", [(2, "memref<2x32x33xf64"), (6, None)])
def test_staging_stays_within_static_shared_memory(rng, n64, staged, tmp_path):
    # Rows of 32 columns (the i8's chunk) of each f64 input take 8448 bytes
    # a warp: two inputs and the i8 take 17952 (two warps a block within
    # 40 KiB), six take 51744, more than one warp may have below the 48 KiB
    # of static shared memory a kernel is allowed: read directly then.
    text = _many_inputs(n64)
    cuda = kfuse.compile(text, target="cuda", chip="sm_90")
    ir = cuda.stages["codegen"]
    if staged:
        assert staged in ir and "known_block_size = array<i32: 64, 1, 1>" in ir
    else:
        assert "workgroup" not in ir
    xs = [rng.standard_normal((40, 96)) for _ in range(n64)]
    b = rng.integers(-128, 128, (40, 96)).astype(np.int8)
    terms = b.astype(np.float64)
    for x in xs:
        terms = terms + x
    want = np.zeros(40)
    for j in range(96):
        want = terms[:, j] - want
    np.testing.assert_array_equal(cuda.emulate(*xs, b), want)
    from test_reductions import _assembles
    _assembles(cuda.ptx, tmp_path)  # (ptxas refuses more static shared memory)
