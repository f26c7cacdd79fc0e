"""Seeded random builder programs (f32/f16/bf16/f64, rank 1-3, elementwise
chains with broadcasting, where, pads, reductions over any axis, several
outputs, outputs repeated or equal to inputs): the fused CPU program matches
Program.reference, and the CUDA target compiles it (row kernels also with
every row streamed, row_chunks=0, and the PTX assembles)."""

import os
import sys

import numpy as np
import pytest

pytest.importorskip("mlir")
import kfuse  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from random_programs import TOLERANCE, random_inputs, random_program  # noqa: E402
from sass_loops import find_ptxas, run_ptxas  # noqa: E402


@pytest.mark.parametrize("arg_reductions,seed",
                         [(False, s) for s in range(80)] + [(True, s) for s in range(40)])
def test_random_program(arg_reductions, seed):
    prog = random_program(seed, arg_reductions)
    args = random_inputs(prog, seed)
    f = kfuse.compile(prog, target="cpu")
    got = f(*args)
    got = got if isinstance(got, tuple) else (got,)
    tol = TOLERANCE[prog.inputs[0][2].name]
    for (name, shape, _), g, w in zip(prog.outputs, got, prog.reference(*args)):
        assert g.shape == w.shape and g.dtype == w.dtype, name
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                   rtol=tol, atol=tol, err_msg=name)
    cuda = kfuse.compile(prog, target="cuda")
    assert cuda.ptx.count(".entry") == len(cuda.plan.kernels)
    if any(g.kind == "reduction" for g in cuda.report.groups):
        # every row streamed: reductions folded in passes (online max + sum)
        streamed = kfuse.compile(prog, target="cuda", row_chunks=0)
        assert streamed.ptx.count(".entry") == len(streamed.plan.kernels)
        _assembles(streamed.ptx)


def _assembles(ptx):
    if not os.path.exists(find_ptxas()):
        pytest.skip("ptxas not installed (the CPU numerics and CUDA IR checks ran)")
    r = run_ptxas(ptx)
    assert r.returncode == 0, r.stderr[:2000]


def test_repeated_and_passthrough_outputs():
    # found by the random programs: a computed tensor returned twice crashed
    # bufferization; a program whose outputs are only inputs has no kernels
    from kfuse import builder as kb
    p = kb.Program("repeat")
    x = p.input("x", (4, 8), "f32")
    y = kb.exp(x)
    p.output(y, name="a")
    p.output(x, name="b")
    p.output(y, name="c")
    xs = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    a, b, c = kfuse.compile(p, target="cpu")(xs)
    np.testing.assert_allclose(a, np.exp(xs), rtol=1e-6)
    np.testing.assert_array_equal(b, xs)
    np.testing.assert_allclose(c, np.exp(xs), rtol=1e-6)
    assert a is not c
    cuda = kfuse.compile(p, target="cuda")
    assert [s.op for s in cuda.plan.steps] == ["launch", "copy", "copy"]
    q = kb.Program("passthrough")
    z = q.input("z", (14,), "f32")
    q.output(kb.pad(z, (0, 0)), name="same")
    only_copies = kfuse.compile(q, target="cuda")
    assert only_copies.ptx == "" and not only_copies.plan.kernels
    assert [s.op for s in only_copies.plan.steps] == ["copy"]


@pytest.mark.parametrize("seed", range(40))
def test_random_mlir_program(seed):
    from random_programs import random_mlir_program
    text, shape, refs = random_mlir_program(seed)
    rng = np.random.default_rng(seed + 3)
    a0, a1 = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    f = kfuse.compile(text, target="cpu")
    got = f(a0, a1)
    got = got if isinstance(got, tuple) else (got,)
    for g, ref in zip(got, refs):
        want = ref({"a0": a0, "a1": a1})
        assert g.shape == want.shape
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4)
    cuda = kfuse.compile(text, target="cuda")
    assert cuda.ptx.count(".entry") == len(cuda.plan.kernels)


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_random_program_under_every_planning_option(seed):
    # no fusion, never/always recompute and strict numerics compute the same
    # values (booleans written between kernels travel as bytes)
    prog = random_program(seed)
    args = random_inputs(prog, seed)
    tol = TOLERANCE[prog.inputs[0][2].name]

    def run(**opts):
        got = kfuse.compile(prog, target="cpu", **opts)(*args)
        return [np.asarray(g, np.float64) for g in (got if isinstance(got, tuple) else (got,))]

    base = run()
    for opts in (dict(fuse=False), dict(recompute="never"), dict(recompute="always"),
                 dict(numerics="strict")):
        for g, b in zip(run(**opts), base):
            np.testing.assert_allclose(g, b, rtol=tol, atol=tol, err_msg=str(opts))


def test_unfused_where_writes_its_mask_as_bytes():
    from kfuse import builder as kb
    p = kb.Program("mask")
    x = p.input("x", (64, 32), "f32")
    p.output(kb.where(x > 0.0, x, x * 0.1), name="y")
    f = kfuse.compile(p, target="cpu", fuse=False)
    assert [g.ops for g in f.report.groups] == [["arith.cmpf", "arith.extui"], ["arith.mulf"],
                                                ["arith.trunci", "arith.select"]]
    xs = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    np.testing.assert_allclose(f(xs), np.where(xs > 0, xs, xs * np.float32(0.1)), rtol=1e-6)
    cuda = kfuse.compile(p, target="cuda", fuse=False)
    assert len(cuda.plan.steps) == 3
    assert [b.dtype.name for b in cuda.plan.buffers if b.kind == "temp"].count("i8") == 1


@pytest.mark.parametrize("seed", range(0, 36, 2))
def test_random_view_program(seed):
    # slices of an argument kept as views of it (bench/random_programs.py:
    # random_view_program; seeds 0-400 passed on both targets when written):
    # the CPU build and the emulated CUDA build against numpy
    import warnings
    from random_programs import random_view_program
    text, shape, dt, ref, kind = random_view_program(seed)
    x = np.random.default_rng(seed).standard_normal(shape).astype(
        np.float16 if dt == "f16" else np.float32)
    want = ref(x)
    tol = 2e-3 if dt == "f16" else 1e-5
    atol = tol * max(1.0, float(np.abs(want).max())) * (10 if kind == "colsum" else 1)
    cuda = kfuse.compile(text, target="cuda", chip="sm_90")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = cuda.emulate(x)
    np.testing.assert_allclose(got, want, rtol=tol, atol=atol)
    np.testing.assert_allclose(kfuse.compile(text, target="cpu")(x), want, rtol=tol, atol=atol)


@pytest.mark.parametrize("seed", range(0, 48, 2))
def test_random_pooling_program(seed):
    # a reduction of x * m over one axis beside a reduction of m alone read
    # broadcast (bench/random_programs.py: random_pooling_program, f32 and
    # f16; seeds 0-300 passed on both targets when written): the count is
    # recomputed for every output row, one kernel, unless it reads a second
    # tensor or is returned; the CPU build and the emulated CUDA build
    # against numpy
    from random_programs import random_pooling_program
    prog, ins, ref, lifts, tol = random_pooling_program(seed)
    want = ref(*ins)
    cpu = kfuse.compile(prog, target="cpu")
    cuda = kfuse.compile(prog, target="cuda", chip="sm_90")
    for got in (cpu(*ins), cuda.emulate(*ins)):
        got = got if isinstance(got, tuple) else (got,)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=tol,
                                       atol=tol * (1 + np.abs(w).max()))
    lifted = any("fusion-lift-broadcast-reductions" in d
                 for g in cuda.report.groups for d in g.decisions)
    assert lifted == lifts
    if lifts:
        assert cuda.report.after.kernels == 1


@pytest.mark.parametrize("seed", range(0, 12, 4))
def test_random_pooling_program_under_every_planning_option(seed):
    # no fusion, never/always recompute and strict numerics compute the same
    # values on both targets; recompute=never lifts no reduction
    from random_programs import random_pooling_program
    prog, ins, ref, lifts, tol = random_pooling_program(seed)
    want = ref(*ins)
    for opts in (dict(fuse=False), dict(recompute="never"), dict(recompute="always"),
                 dict(numerics="strict")):
        cpu = kfuse.compile(prog, target="cpu", **opts)
        cuda = kfuse.compile(prog, target="cuda", chip="sm_90", **opts)
        for got in (cpu(*ins), cuda.emulate(*ins)):
            got = got if isinstance(got, tuple) else (got,)
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=tol,
                                           atol=tol * (1 + np.abs(w).max()), err_msg=str(opts))
        lifted = any("fusion-lift-broadcast-reductions" in d
                     for g in cuda.report.groups for d in g.decisions)
        assert lifted == (lifts and opts in (dict(recompute="always"),
                                             dict(numerics="strict"))), opts


def test_vector_width_follows_the_generic_not_a_passed_through_result():
    # Seed 92 (with arg reductions): an elementwise group whose one generic
    # pads x1 [8, 1] f16 to [10, 3] and which also yields x0 reshaped to [8]
    # as it is. The strategy's vectors came from the last result's shape
    # ([8]: 8 halves) and code generation refused the generic's innermost
    # extent 3; they follow the generic's loops now.
    prog = random_program(92, True)
    args = random_inputs(prog, 92)
    tol = TOLERANCE[prog.inputs[0][2].name]
    f = kfuse.compile(prog, target="cuda", chip="sm_90")
    for (name, _, _), g, w in zip(prog.outputs, f.emulate(*args), prog.reference(*args)):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                   rtol=tol, atol=tol, err_msg=name)
