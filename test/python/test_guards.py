"""Gathers at indices from the data (token ids, labels): fusion-guard-gathers
reads them in bounds and the program reports an index outside its tensor as a
GuardError, on the CPU target and in the PTX emulator, instead of reading
memory the tensor does not own (a crash on the CPU, a wrong answer on a GPU)."""

import os

import numpy as np
import pytest

pytest.importorskip("mlir")
import kfuse  # noqa: E402
from _programs import program_text  # noqa: E402
from kfuse.errors import ArtifactError, GuardError, KfuseError  # noqa: E402
from kfuse.runtime.plan import LaunchPlan  # noqa: E402

TORCH = os.path.join(os.path.dirname(__file__), "programs", "torch")


def _exported(name):
    return (program_text(f"torch/{name}.mlir"),
            np.load(os.path.join(TORCH, f"{name}.npz")))


@pytest.fixture(scope="module")
def embeddings():
    text, data = _exported("torch_bert_embeddings")
    return (kfuse.compile(text, target="cpu"), kfuse.compile(text, target="cuda"), data)


def test_guards_are_the_data_dependent_gathers(embeddings):
    # Token, position and type ids index the three tables; the column index
    # (a loop index within 64) is not checked.
    cpu, cuda, _ = embeddings
    assert cpu.plan.guards == cuda.plan.guards
    tables = sorted(g.split(":")[0] for g in cpu.plan.guards)
    assert tables == [f"index out of range in a gather from a constant tensor<{n}x64xf32>"
                      for n in (100, 2, 40)]
    assert all("dimension 0 (size " in g for g in cpu.plan.guards)
    [status] = [b for b in cuda.plan.buffers if b.kind == "status"]
    assert status.shape == (3,) and status.dtype.name == "i32"
    # every kernel that gathers is passed the status buffer
    idx = cuda.plan.buffers.index(status)
    assert any(any(getattr(a, "buffer", None) == idx for a in st.args)
               for st in cuda.plan.steps)
    # (the status words are not the program's traffic)
    assert f"{cuda.report}".count("status") == 0


@pytest.mark.parametrize("bad", [100, -1, 10**9])
def test_cpu_reports_a_token_id_past_the_vocabulary(embeddings, bad):
    # Before the guards an id of -1 or 10**9 crashed the process (a
    # segmentation fault reading far outside the table) and 100 read past it.
    cpu, _, data = embeddings
    ids = data["in0"].copy()
    ids[1, 3] = bad
    with pytest.raises(GuardError) as e:
        cpu(ids, data["in1"])
    assert isinstance(e.value, KfuseError) and isinstance(e.value, IndexError)
    [failed] = e.value.failed
    assert "tensor<100x64xf32>: dimension 0 (size 100)" in failed
    assert "tensor.extract at line 40" in str(e.value)
    # the words were zeroed: a good call after it passes, and is right
    got = cpu(data["in0"], data["in1"])
    np.testing.assert_allclose(got, data["expected0"], rtol=1e-5, atol=2e-6)


def test_emulated_cuda_reports_a_token_id_past_the_vocabulary(embeddings):
    _, cuda, data = embeddings
    ids = data["in0"].copy()
    ids[2, 39] = 100
    with pytest.raises(GuardError, match=r"\(emulated\) read a tensor at an index outside "
                                         r"it") as e:
        cuda.emulate(ids, data["in1"])
    assert len(e.value.failed) == 1 and "tensor<100x64xf32>" in e.value.failed[0]
    types = data["in1"].copy()
    types[0, 0] = 2                          # two token types: 0 and 1
    with pytest.raises(GuardError) as e:
        cuda.emulate(data["in0"], types)
    assert len(e.value.failed) == 1 and "tensor<2x64xf32>" in e.value.failed[0]
    got = cuda.emulate(data["in0"], data["in1"])
    np.testing.assert_allclose(got, data["expected0"], rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_cross_entropy_label_past_the_classes(target):
    # torch's ignore_index (-100) becomes class 0 before the gather and is
    # masked out: not an error. A label of 50 (of 50 classes) is one.
    text, data = _exported("torch_cross_entropy_loss")
    f = kfuse.compile(text, target=target)
    run = f if target == "cpu" else f.emulate
    labels = data["in1"].copy()
    labels[3] = -100
    run(data["in0"], labels)
    labels[5] = 50
    with pytest.raises(GuardError) as e:
        run(data["in0"], labels)
    [failed] = e.value.failed
    assert "input #0 (tensor<16x50xf32>): dimension 1 (size 50)" in failed


@pytest.mark.parametrize("name", ["softmax_xent.mlir", "attention_slices.mlir"])
def test_no_guard_where_every_index_is_bounded(name):
    # The cross-entropy of softmax_xent.mlir picks its label by comparing it
    # with the column index: no gather. Slices read at loop indices.
    f = kfuse.compile(program_text(name), target="cuda")
    assert f.plan.guards == ()
    assert all(b.kind != "status" for b in f.plan.buffers)
    assert "fusion.guard" not in f.stages["normalize"]


def test_saved_programs_keep_their_guards(embeddings, tmp_path):
    cpu, cuda, data = embeddings
    for f, name in ((cpu, "cpu"), (cuda, "cuda")):
        f.save(str(tmp_path / name))
        plan = LaunchPlan.load(str(tmp_path / name))
        assert plan.guards == f.plan.guards
    loaded = kfuse.load(str(tmp_path / "cpu"))
    ids = data["in0"].copy()
    ids[0, 0] = 100
    with pytest.raises(GuardError):
        loaded(ids, data["in1"])


def test_plan_guards_are_validated(embeddings):
    _, cuda, _ = embeddings
    d = cuda.plan.to_dict()
    assert LaunchPlan.from_json(d).guards == cuda.plan.guards
    bad = dict(d, guards=d["guards"][:2])
    with pytest.raises(ArtifactError, match=r"a status buffer holds a word per guard \(2\)"):
        LaunchPlan.from_json(bad)
    bad = dict(d, buffers=[dict(b, kind="temp") if b["kind"] == "status" else b
                           for b in d["buffers"]])
    with pytest.raises(ArtifactError, match="a CUDA plan with guards needs a status buffer"):
        LaunchPlan.from_json(bad)
    bad = dict(d, guards=["ok", ""])
    with pytest.raises(ArtifactError, match="guards: expected a list of non-empty strings"):
        LaunchPlan.from_json(bad)
    status = next(b for b in d["buffers"] if b["kind"] == "status")
    bad = dict(d, buffers=d["buffers"] + [status])
    with pytest.raises(ArtifactError, match="at most one status buffer"):
        LaunchPlan.from_json(bad)
    bad = dict(d, steps=d["steps"] + [{"op": "copy", "src": 0,
                                       "dst": d["buffers"].index(status)}])
    with pytest.raises(ArtifactError, match="must not write into a status buffer"):
        LaunchPlan.from_json(bad)
