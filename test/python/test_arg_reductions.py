"""Arg-reductions (torch's argmax, argmin, max/min with indices) end to end.

fusion-split-arg-reductions rewrites the generic that carries an extremum and
its column as one-result reductions. The answer must be the sequential fold of
the original body, ties and NaNs included (a NaN stops every later index
update): checked here on the CPU target against a plain Python fold of each
body, in fast and strict numerics. On CUDA the reductions become ordinary row
kernels (block reductions with warp shuffles); their PTX must assemble."""

import numpy as np
import pytest

pytest.importorskip("mlir")
import kfuse  # noqa: E402
from _programs import program_text  # noqa: E402
from test_reductions import _assembles  # noqa: E402


def _fold(xs, m, i, update, extremum):
    """The original body, element by element: i' = update(x, m) ? k : i and
    m' = extremum(x, m) (NaN-propagating for floats)."""
    for k, x in enumerate(xs):
        hit = update(x, m)
        m = extremum(x, m)
        if hit:
            i = k
    return m, i


def _arg_rows_inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((64, 1000)).astype(np.float32),
            rng.standard_normal(64).astype(np.float32))


def _arg_rows_reference(x, thr):
    """arg_rows.mlir's five results, by folding each body in order."""
    t = np.floor(x * np.float32(2)).astype(np.float32)
    for r in range(3, 64, 8):
        t[r, (13 * r) % 1000] = np.nan
    amax = [_fold(t[r], np.float32(3) * thr[r], -1, lambda v, m: v > m, np.maximum)
            for r in range(64)]
    amin = [_fold(t[r], np.float32(np.inf), 0, lambda v, m: m >= v, np.minimum)
            for r in range(64)]
    ints = np.floor(x * np.float32(2)).astype(np.int32)
    imax = [_fold(ints[r], -2**31, 0, lambda v, m: v > m, max) for r in range(64)]
    cmax = [_fold(t[:, c], np.float32(-np.inf), 0, lambda v, m: v > m, np.maximum)
            for c in range(1000)]
    return (np.array([i for _, i in amax], np.int64),
            np.array([m for m, _ in amax], np.float32),
            np.array([i for _, i in amin], np.int32),
            np.array([i for _, i in imax], np.int64),
            np.array([i for _, i in cmax], np.int64))


@pytest.mark.parametrize("numerics", ["fast", "strict"])
def test_arg_rows_equal_the_sequential_fold(numerics):
    f = kfuse.compile(program_text("arg_rows.mlir"), target="cpu", numerics=numerics)
    x, thr = _arg_rows_inputs()
    got = f(x, thr)
    want = _arg_rows_reference(x, thr)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)  # (NaN where NaN: the maxima of NaN rows)
    # the inputs exercise what the rewrite must get right
    amax, value = got[0], got[1]
    assert np.isnan(value[3::8]).all()              # rows with a NaN
    assert (amax == -1).any() and (amax >= 0).any()  # initial value kept / beaten
    assert len(set(got[2].tolist())) > 1
    # the row reductions over x form one kernel (amax, amin, the value and
    # the integer rows: fused horizontally), the column reduction another
    assert f.report.after.kernels == 2
    assert not any("materializes" in d for g in f.report.groups for d in g.decisions)


def test_arg_rows_cuda_kernels_assemble(tmp_path):
    f = kfuse.compile(program_text("arg_rows.mlir"), target="cuda", chip="sm_90")
    # (the row kernel and the column kernel, independent and small: one
    # launch, each over blocks of its own)
    assert f.ptx.count(".entry") == len(f.plan.steps) == 1
    assert [name for name, _, _ in f.plan.steps[0].packs] == ["arg_rows_g0", "arg_rows_g1"]
    assert "shfl.sync.bfly" in f.ptx
    _assembles(f.ptx, tmp_path)


def _argmax_text(rows, cols):
    return f"""
#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
func.func @argmax(%x: tensor<{rows}x{cols}xf32>) -> (tensor<{rows}xi64>, tensor<{rows}xf32>) {{
  %c0 = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<{rows}xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<{rows}xf32>) -> tensor<{rows}xf32>
  %e1 = tensor.empty() : tensor<{rows}xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<{rows}xi64>) -> tensor<{rows}xi64>
  %r:2 = linalg.generic {{indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]}} ins(%x : tensor<{rows}x{cols}xf32>) outs(%m0, %i0 : tensor<{rows}xf32>, tensor<{rows}xi64>) {{
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  }} -> (tensor<{rows}xf32>, tensor<{rows}xi64>)
  return %r#1, %r#0 : tensor<{rows}xi64>, tensor<{rows}xf32>
}}
"""


@pytest.mark.parametrize("cols", [1000, 262144])
def test_argmax_rows_cpu(cols):
    # torch.max(x, -1) as torch-mlir writes it; numpy's argmax is the first
    # maximum too (no NaN here); ties from rounding to quarters
    f = kfuse.compile(_argmax_text(8, cols), target="cpu")
    assert f.report.after.kernels == 1
    x = np.round(np.random.default_rng(1).standard_normal((8, cols)) * 4).astype(np.float32)
    x[2] = -np.inf  # no element beats the initial value: index 0
    index, value = f(x)
    np.testing.assert_array_equal(index, np.argmax(x, axis=1))
    np.testing.assert_array_equal(value, x.max(axis=1))


@pytest.mark.parametrize("rows,cols,cluster,kernels,exchange", [
    (8, 1000, 0, 1, "barrier"),       # register mode
    (160, 262144, 0, 1, "barrier"),   # streaming mode (rows too long for registers)
    (160, 262144, 8, 1, "barrier"),   # rows spread over clusters of blocks
    (160, 262144, 8, 1, "async"),     # ... their totals sent with st.async
    (8, 262144, 8, 2, "barrier"),     # few rows: two waves of partials (the NaN column,
                                      # then the keys before it), each finished by its
                                      # kernel's last block of each row
])
def test_argmax_rows_cuda_assemble(rows, cols, cluster, kernels, exchange, tmp_path):
    f = kfuse.compile(_argmax_text(rows, cols), target="cuda", chip="sm_90",
                      row_cluster=cluster, row_exchange=exchange, row_smem=0)
    assert f.ptx.count(".entry") == len(f.plan.steps) == kernels
    if cluster and kernels == 1:
        assert "mapa.shared::cluster" in f.ptx
    if exchange == "async":
        # two exchanges (the NaN column and the maximum; the keys before it),
        # each to 8 blocks
        assert f.ptx.count("complete_tx::bytes.b32") == 2 * 8
    _assembles(f.ptx, tmp_path)


def test_unmatched_two_accumulator_reduction_runs_in_order_on_cuda():
    # maxnumf skips NaNs instead of propagating them: not an arg-reduction
    # this rewrite proves exact, so it stays one generic with two
    # accumulators; the CPU target folds it in order, and so does CUDA's
    # ordered kernel (a thread per row), NaNs included
    text = _argmax_text(8, 1000).replace("arith.maximumf", "arith.maxnumf")
    f = kfuse.compile(text, target="cpu")
    x = np.random.default_rng(2).standard_normal((8, 1000)).astype(np.float32)
    x[3, 10] = x[5, 0] = np.nan
    index, value = f(x)
    np.testing.assert_array_equal(index, np.nanargmax(x, axis=1))
    np.testing.assert_array_equal(value, np.nanmax(x, axis=1))
    cuda = kfuse.compile(text, target="cuda", chip="sm_90")
    assert [s.kernel for s in cuda.plan.steps if s.op == "launch"][-1].endswith("_ordered0")
    got = cuda.emulate(x)
    np.testing.assert_array_equal(got[0], index)
    np.testing.assert_array_equal(got[1], value)


# ----------------------------------------------------- the builder's argmax / argmin

def _builder_program(dtype, axis, keepdims):
    from kfuse import builder as kb
    p = kb.Program("arg")
    x = p.input("x", (12, 40), dtype)
    p.output(kb.argmax(x, axis=axis, keepdims=keepdims), name="amax")
    p.output(x.argmin(axis=axis, keepdims=keepdims), name="amin")
    if dtype in ("f32", "f16"):  # an elementwise producer fused into the search
        p.output(kb.argmax(kb.exp(x) * 2.0, axis=axis), name="aexp")
    return p


def _builder_input(dtype):
    rng = np.random.default_rng(3)
    x = np.round(rng.standard_normal((12, 40)) * 2)  # ties
    if dtype.startswith("i"):
        return x.astype(np.dtype(dtype.replace("i", "int")))
    x[4, 7] = x[4, 30] = x[9, 0] = x[0, 39] = np.nan  # first NaN wins
    x[6, :] = -np.inf
    x[7, :] = np.inf
    if dtype == "bf16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return x.astype(ml_dtypes.bfloat16)
    return x.astype({"f32": np.float32, "f16": np.float16, "f64": np.float64}[dtype])


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "f64", "i32", "i64"])
@pytest.mark.parametrize("axis,keepdims", [(1, False), (0, True), (-1, True)])
def test_builder_arg_reductions_match_numpy(dtype, axis, keepdims):
    p = _builder_program(dtype, axis, keepdims)
    x = _builder_input(dtype)
    f = kfuse.compile(p, target="cpu")
    got = f(x)
    want = p.reference(x)
    for g, w, fn in zip(got, want, [np.argmax, np.argmin, None]):
        assert g.dtype == np.int64 and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
        if fn is not None:  # the reference is numpy's own
            np.testing.assert_array_equal(
                w, fn(x.astype(np.float64) if dtype == "bf16" else x, axis=axis,
                      keepdims=keepdims))


def test_wide_elements_search_in_two_reductions_and_say_so():
    # f64 (and i64) elements leave no room for a column beside them in a
    # 64-bit key: the extremum, then its first column; the report says why
    f = kfuse.compile(_builder_program("f64", 1, False), target="cpu")
    notes = [d for g in f.report.groups for d in g.decisions
             if "fusion-split-arg-reductions" in d]
    assert len(notes) == 2  # argmax, argmin
    assert all("then the first column holding it" in d and "floats of 64 bits" in d
               for d in notes)


def test_builder_arg_reductions_cuda_assemble(tmp_path):
    f = kfuse.compile(_builder_program("f32", 1, False), target="cuda", chip="sm_90")
    assert f.report.after.kernels == 1  # the three searches over the rows of x
    _assembles(f.ptx, tmp_path)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_search_over_a_unit_axis_of_a_search_compiles_for_cuda(dtype):
    """The outer search runs over a unit axis, so its index is 0 everywhere and
    the inner search dies in folding: the row-wise group is left with nothing
    to reduce. It must still compile (as an elementwise kernel writing zeros),
    for the CUDA target as for the CPU."""
    from kfuse import builder as kb
    p = kb.Program("unit")
    x = p.input("x", (1, 16, 8, 64), dtype)
    p.output(x.argmin(axis=3).argmin(axis=0), name="zero")
    p.output(x.argmin(axis=3).argmax(axis=0) + 2, name="two")
    xv = np.random.default_rng(1).standard_normal((1, 16, 8, 64))
    if dtype == "bf16":
        xv = xv.astype(pytest.importorskip("ml_dtypes").bfloat16)
    else:
        xv = xv.astype(np.float32)
    want = p.reference(xv)
    np.testing.assert_array_equal(want[0], np.zeros((16, 8), np.int64))
    cuda = kfuse.compile(p, target="cuda", chip="sm_90")
    assert len(cuda.plan.steps) == 1  # one kernel; it reads nothing
    for got, w in zip(cuda.emulate(xv), want):
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, w)
    for got, w in zip(kfuse.compile(p, target="cpu")(xv), want):
        np.testing.assert_array_equal(got, w)


# ------------------------------------ keyed searches: every form against the fold

# (extremum op, compare predicate, numpy's NaN-first form): the forms
# fusion-split-arg-reductions recognizes. Elements of up to 32 bits become one
# maximum of (order, column) keys; the fold below is the original body.
_FLOAT_FORMS = [("maximumf", "ogt", False), ("maximumf", "oge", False),
                ("minimumf", "olt", False), ("minimumf", "ole", False),
                ("maximumf", "ugt", True), ("minimumf", "ult", True)]
_INT_FORMS = [("maxsi", "sgt"), ("maxsi", "sge"), ("minsi", "slt"), ("minsi", "sle"),
              ("maxui", "ugt"), ("maxui", "uge"), ("minui", "ult"), ("minui", "ule")]
_ROWS, _COLS = 12, 37


def _search_text(elem, forms):
    """One program: a search of x[12, 37] per form, each from the initial
    value m0 (an input row) and the initial index 7."""
    fl = elem.startswith(("f", "bf"))
    outs, body = [], []
    for n, form in enumerate(forms):
        ext, pred = form[0], form[1]
        nan_first = fl and form[2]
        cmp = "cmpf" if fl else "cmpi"
        moves = [f"%gt = arith.{cmp} {pred}, %in, %m : {elem}"]
        if nan_first:
            moves += [f"%ord = arith.cmpf ord, %m, %m : {elem}",
                      "%mv = arith.andi %gt, %ord : i1"]
        sel = "%mv" if nan_first else "%gt"
        body.append(f"""
  %r{n}:2 = linalg.generic {{indexing_maps = [#full, #row, #row], iterator_types = ["parallel", "reduction"]}} ins(%x : tensor<{_ROWS}x{_COLS}x{elem}>) outs(%m0c, %i0 : tensor<{_ROWS}x{elem}>, tensor<{_ROWS}xi64>) {{
  ^bb0(%in: {elem}, %m: {elem}, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %ext = arith.{ext} %in, %m : {elem}
    {chr(10).join("    " + s for s in moves).strip()}
    %s = arith.select {sel}, %ji, %i : i64
    linalg.yield %ext, %s : {elem}, i64
  }} -> (tensor<{_ROWS}x{elem}>, tensor<{_ROWS}xi64>)""")
        outs.append(f"%r{n}#1")
    types = ", ".join([f"tensor<{_ROWS}xi64>"] * len(forms))
    return f"""
#full = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0) -> (d0)>
func.func @search(%x: tensor<{_ROWS}x{_COLS}x{elem}>, %m0: tensor<{_ROWS}x{elem}>) -> ({types}) {{
  %c7 = arith.constant 7 : i64
  %e = tensor.empty() : tensor<{_ROWS}x{elem}>
  %m0c = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}} ins(%m0 : tensor<{_ROWS}x{elem}>) outs(%e : tensor<{_ROWS}x{elem}>) {{
  ^bb0(%in: {elem}, %out: {elem}):
    linalg.yield %in : {elem}
  }} -> tensor<{_ROWS}x{elem}>
  %ei = tensor.empty() : tensor<{_ROWS}xi64>
  %i0 = linalg.fill ins(%c7 : i64) outs(%ei : tensor<{_ROWS}xi64>) -> tensor<{_ROWS}xi64>
{"".join(body)}
  return {", ".join(outs)} : {types}
}}
"""


def _compare(pred, a, b):
    """arith's compare on Python floats (NaN: ordered predicates false,
    unordered true) or on integers already in the predicate's signedness."""
    if isinstance(a, float) and (a != a or b != b):
        return pred.startswith("u")
    return {"gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[pred[1:]]


def _fold_search(row, m, form, fl):
    """The original body over one row, in order (from the initial index 7)."""
    ext, pred = form[0], form[1]
    nan_first = fl and form[2]

    def extremum(x, m):  # (maximumf / minimumf propagate NaN)
        if fl and (x != x or m != m):
            return float("nan")
        return max(x, m) if ext.startswith("max") else min(x, m)
    return _fold(row, m, 7, lambda x, m: _compare(pred, x, m) and (not nan_first or m == m),
                 extremum)[1]


def _search_inputs(elem):
    rng = np.random.default_rng(11)
    if elem.startswith(("f", "bf")):
        pool = np.array([-np.inf, -3.0, -1.5, -0.0, 0.0, 1.5, 3.0, np.inf, np.nan])
        x = rng.choice(pool, size=(_ROWS, _COLS), p=[.1, .15, .1, .15, .15, .1, .15, .05, .05])
        x[0] = -0.0
        x[0, 5::7] = 0.0        # ties of the two zeros
        x[1] = np.nan           # every column NaN
        x[2] = -np.inf          # nothing beats -inf
        x[3, 0] = np.nan        # a NaN first
        x[4] = np.inf
        x[5] = rng.choice([-1.5, 1.5], _COLS)
        m0 = np.array([-np.inf, -np.inf, -np.inf, np.nan, 0.0, 1.0,
                       -np.inf, 3.0, -3.0, np.nan, 0.0, -0.0])
        dt = {"f32": np.float32, "f16": np.float16}.get(elem)
        if dt is None:
            dt = pytest.importorskip("ml_dtypes").bfloat16
        return x.astype(dt), m0.astype(dt)
    bits = int(elem[1:])
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    pool = np.array([lo, lo + 1, -2, -1, 0, 1, 2, hi - 1, hi], np.int64)
    x = rng.choice(pool, size=(_ROWS, _COLS))
    x[0] = lo
    x[1] = hi
    x[2] = -1               # the unsigned maximum
    x[3] = 0
    m0 = np.array([lo, hi, lo, 0, -1, 1, lo, hi, 0, 0, lo, -1], np.int64)
    dt = {8: np.int8, 16: np.int16, 32: np.int32}[bits]
    return x.astype(dt), m0.astype(dt)


def _search_want(elem, forms, x, m0):
    fl = elem.startswith(("f", "bf"))
    want = []
    for form in forms:
        unsigned = not fl and form[0].endswith("ui")
        col = []
        for r in range(_ROWS):
            row, m = x[r], m0[r]
            if fl:
                row, m = [float(v) for v in row], float(m)
            elif unsigned:
                u = row.dtype.str.replace("i", "u")
                row = [int(v) for v in row.view(u)]
                m = int(np.array([m]).view(u)[0])
            else:
                row, m = [int(v) for v in row], int(m)
            col.append(_fold_search(row, m, form, fl))
        want.append(np.array(col, np.int64))
    return want


@pytest.mark.parametrize("elem", ["f32", "f16", "bf16", "i8", "i32"])
def test_keyed_searches_equal_the_sequential_fold(elem):
    # Every form over values chosen for what the keys must get right: both
    # zeros (equal: the first or last of either), NaNs (numpy's form: the
    # first wins; torch-mlir's: the search stops there), infinities, the
    # extreme integers (signed and unsigned), initial values that nothing
    # beats, that are NaN or the row's extremum, and an initial index of 7.
    # CPU (fast and strict numerics) and the CUDA kernels in the emulator.
    forms = _FLOAT_FORMS if elem.startswith(("f", "bf")) else _INT_FORMS
    text = _search_text(elem, forms)
    x, m0 = _search_inputs(elem)
    want = _search_want(elem, forms, x, m0)
    runs = [kfuse.compile(text, target="cpu", numerics=n) for n in ("fast", "strict")]
    cuda = kfuse.compile(text, target="cuda", chip="sm_90")
    # one group: each search is one maximum of keys (after its NaN column
    # in the forms that stop there), beside the others
    assert cuda.report.after.kernels == 1
    assert len(cuda.plan.steps) == 1
    for got in [f(x, m0) for f in runs] + [cuda.emulate(x, m0)]:
        for g, w, form in zip(got, want, forms):
            assert g.dtype == np.int64
            np.testing.assert_array_equal(g, w, err_msg=str(form))
    # the inputs exercise what they are meant to: kept initial indices,
    # columns 0 and last, and a NaN's column
    flat = np.concatenate(want)
    assert (flat == 7).any() and (flat == 0).any() and (flat == _COLS - 1).any()


def test_searches_over_long_rows_take_one_wave_of_keys(tmp_path):
    # Two rows of 2^17, split over slices of blocks: numpy's argmax is one
    # wave (one partials kernel whose last block for a row finishes it);
    # torch-mlir's form, which stops at the first NaN, two (the NaN column,
    # then the keys before it). Ties and NaNs where they decide; the emulator
    # against numpy and the fold.
    from kfuse import builder as kb
    n = 1 << 17
    q = kb.Program("top")
    x = q.input("x", (2, n), "f32")
    q.output(kb.argmax(x, axis=-1), name="i")
    q.output(kb.argmin(x, axis=-1), name="j")
    numpy_form = kfuse.compile(q, target="cuda", chip="sm_90")
    assert len(numpy_form.plan.steps) == 1 and numpy_form.plan.steps[0].grid[0] > 2
    torch_form = kfuse.compile(_argmax_text(2, n), target="cuda", chip="sm_90")
    assert len(torch_form.plan.steps) == 2
    xs = np.random.default_rng(8).standard_normal((2, n)).astype(np.float32)
    xs[0, 70000] = xs[0, 90000] = 9.0     # the first of two maxima, past a NaN
    xs[0, 80000] = np.nan
    xs[0, 100] = xs[0, 131000] = -9.0     # the first of two minima
    xs[1, 3] = xs[1, 99999] = 9.0
    xs[1, 40000] = -0.0
    i, j = numpy_form.emulate(xs)
    np.testing.assert_array_equal(i, np.argmax(xs, axis=1))   # [80000, 3]: NaN wins
    np.testing.assert_array_equal(j, np.argmin(xs, axis=1))
    # the report says how each search runs
    [keyed] = [d for g in numpy_form.report.groups for d in g.decisions
               if "maximum and the first column" in d]
    assert "one maximum of 64-bit keys" in keyed and f"its {n} columns" in keyed
    assert any("minimum and the first column holding it in one maximum" in d
               for g in numpy_form.report.groups for d in g.decisions)
    assert any("after its first NaN column, where the search stops" in d
               for g in torch_form.report.groups for d in g.decisions)
    index, value = torch_form.emulate(xs)
    before = xs[0, :80000]
    assert index.tolist() == [int(np.argmax(before)), 3] == [70000, 3]
    assert np.isnan(value[0]) and value[1] == 9.0
    _assembles(numpy_form.ptx, tmp_path)
    _assembles(torch_form.ptx, tmp_path)
