"""The PTX-edited experiments of bench/make_artifacts.py compute what the
programs they edit compute (PTX emulator, no GPU)."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

import make_artifacts  # noqa: E402
from _programs import batch_norm  # noqa: E402

import kfuse  # noqa: E402
import kfuse.runtime as rt  # noqa: E402
from kfuse import builder as kb  # noqa: E402


def _bn_nhwc():
    return batch_norm("bn", (16, 16, 32, 64), (0, 1, 2)), (16 * 16 * 32, 64)


def _softmax_dim0():
    p = kb.Program("sm0")
    x = p.input("x", (8192, 128), "f32")
    e = kb.exp(x - kb.max(x, axis=0, keepdims=True))
    p.output(e / kb.sum(e, axis=0, keepdims=True), name="y")
    return p, (8192, 128)


def _l2_normalize():
    # (a full reduction whose partials kernel's last block finishes it: the
    # first launch, named as the group, its partials [S] and total [])
    p = kb.Program("l2n")
    x = p.input("x", (1 << 18,), "f32")
    p.output(x / kb.sqrt((x * x).sum()), name="y")
    return p, (1 << 18, 1)


@pytest.mark.parametrize("make", [_bn_nhwc, _softmax_dim0, _l2_normalize])
def test_l2_order_permutes_the_store_blocks_only(make, tmp_path):
    prog, (positions, rows) = make()
    # (8 SMs: few slices, so that the emulated store is quick; the full
    # reduction splits for a GPU's 132)
    sms = 132 if make is _l2_normalize else 8
    f = kfuse.compile(prog, target="cuda", chip="sm_90", sm_count=sms)
    src, dst = str(tmp_path / "p"), str(tmp_path / "p__l2order")
    f.save(src)
    make_artifacts._l2_order(src, dst)
    store = f.plan.steps[-1]
    # (S: the largest leading extent of the partials kernel's temporaries)
    first = next(st for st in f.plan.steps if st.op == "launch")
    s = max(f.plan.buffers[a.buffer].shape[0] for a in first.args
            if getattr(a, "buffer", None) is not None
            and f.plan.buffers[a.buffer].kind == "temp" and f.plan.buffers[a.buffer].shape)
    per = store.grid[0] // s
    assert per > 1 and store.grid[0] == s * per
    ptx = open(os.path.join(dst, "kernels.ptx")).read()
    entry = ptx[ptx.index(f".visible .entry {store.kernel}("):]
    assert f"rem.u32 \t%kfl1, %kfl0, {s};" in entry
    assert f"add.u32 \t%kfl1, %kfl1, {per - 1};" in entry
    # (the other kernels untouched)
    before = open(os.path.join(src, "kernels.ptx")).read()
    head = before.index(f".visible .entry {store.kernel}(")
    assert ptx[:head] == before[:head]
    x = np.random.default_rng(1).standard_normal(f.plan.inputs[0].shape).astype(np.float32)
    want = rt.load_emulated(src)(x)
    got = rt.load_emulated(dst)(x)
    np.testing.assert_array_equal(got, want)


def test_l2_order_refuses_programs_without_a_split(tmp_path):
    p = kb.Program("row")
    x = p.input("x", (64, 256), "f32")
    p.output(x - kb.max(x, axis=1, keepdims=True), name="y")
    kfuse.compile(p, target="cuda", chip="sm_90").save(str(tmp_path / "row"))
    with pytest.raises(SystemExit, match="no partials kernel"):
        make_artifacts._l2_order(str(tmp_path / "row"), str(tmp_path / "row__l2order"))
    assert not os.path.exists(tmp_path / "row__l2order")
