"""Golden fusion plans: kernel counts and HBM bytes for a suite of programs.

A change that alters how any program fuses fails here. If the change is an
improvement, regenerate with `KFUSE_UPDATE_GOLDEN=1 pytest test/python/test_golden_plans.py`
and commit golden_plans.json with the reason in the message."""

import json
import os
import sys

import pytest

pytest.importorskip("mlir")
import kfuse  # noqa: E402
from kfuse import builder as kb  # noqa: E402

HERE = os.path.dirname(__file__)
GOLDEN = os.path.join(HERE, "golden_plans.json")
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from make_artifacts import reduction_programs  # noqa: E402
from make_artifacts import test_programs as elementwise_programs  # noqa: E402


def _extra_programs():
    progs = []
    p = kb.Program("multi_consumer")
    x = p.input("x", (256, 256), "f32")
    t = kb.exp(x)
    p.output(t + 1.0, name="a")
    p.output(t * t, name="b")
    progs.append(p)
    p = kb.Program("materialized")
    x = p.input("x", (256, 256), "f32")
    p.output(kb.log(kb.materialize(kb.exp(x)) + 1.0), name="y")
    progs.append(p)
    p = kb.Program("siblings")
    x = p.input("x", (256, 256), "f32")
    p.output(kb.tanh(x), name="a")
    p.output(kb.sigmoid(x), name="b")
    progs.append(p)
    p = kb.Program("broadcast_output")
    x = p.input("x", (64, 256), "f32")
    b = p.input("b", (256,), "f32")
    e = kb.exp(b)
    p.output(e, name="e")
    p.output(x * e, name="y")
    progs.append(p)
    return progs


def _suite():
    return elementwise_programs() + reduction_programs() + _extra_programs()


def _plan(prog):
    r = kfuse.compile(prog, target="cpu").report
    return {"kernels_before": r.before.kernels, "kernels_after": r.after.kernels,
            "bytes_before": r.before.bytes, "bytes_after": r.after.bytes,
            "groups": [f"{g.kind}:{g.num_ops}" for g in r.groups]}


def test_fusion_plans_match_golden():
    got = {p.name: _plan(p) for p in _suite()}
    if os.environ.get("KFUSE_UPDATE_GOLDEN"):
        with open(GOLDEN, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
            f.write("\n")
    with open(GOLDEN) as f:
        want = json.load(f)
    assert sorted(got) == sorted(want)
    changed = {n: (want[n], got[n]) for n in got if got[n] != want[n]}
    assert not changed, "fusion plans changed:\n" + "\n".join(
        f"  {n}: golden {w}\n  {' ' * len(n)}  now    {g}" for n, (w, g) in changed.items())
