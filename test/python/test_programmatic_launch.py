"""Programmatic launches (pdl): on sm_90 a kernel that directly follows another
in a plan is launched before that one ends and waits for it on the GPU
(griddepcontrol.wait), the kernel before letting it launch as its blocks start
(griddepcontrol.launch_dependents). What is checked here needs no GPU: which
launches are programmatic, that nothing of a waiting kernel touches memory
before its wait, the option, and the results on the PTX emulator. The driver
calls (cuLaunchKernelEx with the attribute) are checked on nullcuda
(test_runtime_nullcuda.py); on a GPU every multi-kernel test program runs this
way (test_gpu.py)."""

import re

import numpy as np
import pytest

import kfuse
from kfuse import builder as kb
from kfuse.errors import CompileError

# statements that read or write memory, or synchronize, in a kernel's body
_MEMORY = re.compile(r"^\s*(@!?%p\d+\s+)?(ld\.(global|shared)|st\.(global|shared)|atom|red|"
                     r"bar|barrier|shfl|cp\.|mbarrier|fence|membar)", re.M)


def _entries(ptx):
    """{kernel: body} of a PTX module."""
    parts = re.split(r"\.visible \.entry (\w+)\(", ptx)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def _l2_normalize(n=1 << 20):
    # x / |x|: the sum of squares split into slices (the partials kernel's
    # last block finishing it), then a kernel storing y
    p = kb.Program("l2_normalize")
    x = p.input("x", (n,), "f32")
    p.output(x / kb.sqrt(kb.sum(x * x)), name="y")
    return p


def _variance_nhwc():
    p = kb.Program("var_nhwc")
    x = p.input("x", (32, 16, 16, 64), "f32")
    m = kb.mean(x, axis=(0, 1, 2), keepdims=True)
    p.output(kb.mean((x - m) * (x - m), axis=(0, 1, 2)), name="var")
    return p


def _two_outputs():
    # two groups, two kernels one after the other (x of 2 MiB: too large to
    # share a launch with the other, fusion-pack-launches)
    p = kb.Program("two")
    x = p.input("x", (1 << 19,), "f32")
    y = p.input("y", (64, 512), "f32")
    p.output(kb.exp(x), name="ex")
    p.output(kb.sum(y, axis=1), name="rows")
    return p


PROGRAMS = [_l2_normalize, _variance_nhwc, _two_outputs]


@pytest.mark.parametrize("make", PROGRAMS, ids=lambda m: m.__name__.strip("_"))
def test_launches_after_the_first_are_programmatic_and_wait_first(make):
    f = kfuse.compile(make(), target="cuda", chip="sm_90")
    launches = [s for s in f.plan.steps if s.op == "launch"]
    assert len(launches) >= 2
    assert [s.programmatic for s in launches] == [False] + [True] * (len(launches) - 1)
    bodies = _entries(f.ptx)
    for before, step in zip(launches, launches[1:]):
        body = bodies[step.kernel]
        wait = body.index("griddepcontrol.wait;")
        # nothing of the kernel reads, writes or synchronizes before its wait
        first = _MEMORY.search(body)
        assert first is None or first.start() > wait, (step.kernel, first.group(0))
        assert "griddepcontrol.launch_dependents;" in bodies[before.kernel]
    assert "griddepcontrol" not in bodies[launches[-1].kernel].replace(
        "griddepcontrol.wait;", "")
    assert "launched early" in str(f.report)


@pytest.mark.parametrize("opts", [dict(pdl=False), dict(chip="sm_80")])
def test_plain_launches_without_pdl_or_before_sm_90(opts):
    opts = dict(dict(chip="sm_90"), **opts)
    f = kfuse.compile(_l2_normalize(), target="cuda", **opts)
    assert not any(s.programmatic for s in f.plan.steps if s.op == "launch")
    assert "griddepcontrol" not in f.ptx
    assert "launched early" not in str(f.report)


def test_one_kernel_stays_plain():
    p = kb.Program("one")
    x = p.input("x", (4096,), "f32")
    p.output(kb.exp(x) + 1.0, name="y")
    f = kfuse.compile(p, target="cuda", chip="sm_90")
    assert [s.programmatic for s in f.plan.steps] == [False]
    assert "griddepcontrol" not in f.ptx


@pytest.mark.parametrize("make", PROGRAMS, ids=lambda m: m.__name__.strip("_"))
def test_programmatic_plans_compute_the_same_on_the_emulator(make):
    rng = np.random.default_rng(3)
    prog = make()
    early = kfuse.compile(prog, target="cuda", chip="sm_90")
    plain = kfuse.compile(prog, target="cuda", chip="sm_90", pdl=False)
    cpu = kfuse.compile(prog, target="cpu")
    ins = [rng.standard_normal(s.shape).astype(np.float32) for s in early.plan.inputs]
    got, same, want = early.emulate(*ins), plain.emulate(*ins), cpu(*ins)
    got, same, want = ((v if isinstance(v, tuple) else (v,)) for v in (got, same, want))
    for g, s, w in zip(got, same, want):
        np.testing.assert_array_equal(g, s)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_pdl_option_must_be_a_bool(bad):
    with pytest.raises(CompileError, match="option pdl must be True or False"):
        kfuse.compile(_l2_normalize(), target="cuda", chip="sm_90", pdl=bad)
