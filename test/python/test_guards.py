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
    # (two words a guard: whether it failed, and an index that did)
    assert status.shape == (6,) and status.dtype.name == "i64"
    # every kernel that gathers is passed the status buffer
    idx = cuda.plan.buffers.index(status)
    assert any(any(getattr(a, "buffer", None) == idx for a in st.args)
               for st in cuda.plan.steps)
    # (the status words are not the program's traffic); the report lists
    # what is checked when the program runs
    assert f"{cuda.report}".count("status") == 0
    for f in (cpu, cuda):
        assert f.report.guards == list(f.plan.guards)
        assert [ln for ln in str(f.report).splitlines() if "checked when run" in ln] == \
            [f"  checked when run: {g}" for g in f.plan.guards]


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
    # the index that was out of range, in the message too
    assert e.value.indices == [bad]
    assert str(e.value).endswith(f"): index {bad}")
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
    assert e.value.indices == [100]
    ids[2, 39] = -7
    with pytest.raises(GuardError, match=r": index -7$") as e:
        cuda.emulate(ids, data["in1"])
    types = data["in1"].copy()
    types[0, 0] = 2                          # two token types: 0 and 1
    with pytest.raises(GuardError) as e:
        cuda.emulate(data["in0"], types)
    assert len(e.value.failed) == 1 and "tensor<2x64xf32>" in e.value.failed[0]
    got = cuda.emulate(data["in0"], data["in1"])
    np.testing.assert_allclose(got, data["expected0"], rtol=1e-5, atol=2e-6)


def test_threads_failing_at_once_leave_one_of_their_indices(embeddings):
    # Every row's id out of range, each a different one: the threads that
    # fail store their indices to one word at once. Plain stores of
    # different values there raced (the emulator's race check stopped on
    # them); each is an atomic exchange now, and one index stays, whole.
    _, cuda, data = embeddings
    ids = data["in0"].copy()
    bad = 100 + np.arange(ids.size, dtype=ids.dtype).reshape(ids.shape)
    with pytest.raises(GuardError) as e:
        cuda.emulate(bad, data["in1"])
    [index] = e.value.indices
    assert index in set(bad.ravel().tolist())
    assert "atom.global.exch.b64" in cuda.ptx


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
    assert e.value.indices == [50]


@pytest.mark.parametrize("name", ["softmax_xent.mlir", "attention_slices.mlir"])
def test_no_guard_where_every_index_is_bounded(name):
    # The cross-entropy of softmax_xent.mlir picks its label by comparing it
    # with the column index; as a gather (fusion-picks-as-gathers) it reads
    # at min(label, 999) and picks 0 where the label is outside the row, as
    # the sum does: nothing to guard. Slices read at loop indices.
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
    loaded.check_guards()                # (the CPU's calls check themselves)
    cpu.check_guards()


def test_plan_guards_are_validated(embeddings):
    _, cuda, _ = embeddings
    d = cuda.plan.to_dict()
    assert LaunchPlan.from_json(d).guards == cuda.plan.guards
    bad = dict(d, guards=d["guards"][:2])
    with pytest.raises(ArtifactError, match=r"a status buffer holds two words per guard \(4\)"):
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


def _padded_lanes_program(width, offset):
    """exp(table[ids - 1]) over rows of `width` ids (a slice from column `offset`),
    its row sums and the rows divided by them: ids are 1-based, so a lane past the
    row's end, evaluated on padding (id 0), would read at -1."""
    wide = width + offset
    return f'''
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @f(%all: tensor<4x{wide}xi64>, %table: tensor<100xf32>) -> (tensor<4xf32>, tensor<4x{width}xf32>) {{
  %ids = tensor.extract_slice %all[0, {offset}] [4, {width}] [1, 1] : tensor<4x{wide}xi64> to tensor<4x{width}xi64>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x{width}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.generic {{indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}}
      ins(%ids : tensor<4x{width}xi64>) outs(%e2 : tensor<4x{width}xf32>) {{
  ^bb0(%id: i64, %o: f32):
    %c1 = arith.constant 1 : i64
    %m = arith.subi %id, %c1 : i64
    %i = arith.index_cast %m : i64 to index
    %v = tensor.extract %table[%i] : tensor<100xf32>
    %x = math.exp %v : f32
    linalg.yield %x : f32
  }} -> tensor<4x{width}xf32>
  %r = linalg.generic {{indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%g : tensor<4x{width}xf32>) outs(%f : tensor<4xf32>) {{
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }} -> tensor<4xf32>
  %n = linalg.generic {{indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}}
      ins(%g, %r : tensor<4x{width}xf32>, tensor<4xf32>) outs(%e2 : tensor<4x{width}xf32>) {{
  ^bb0(%v: f32, %s: f32, %o: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  }} -> tensor<4x{width}xf32>
  return %r, %n : tensor<4xf32>, tensor<4x{width}xf32>
}}
'''


@pytest.mark.parametrize("width,offset,opts", [
    (1000, 0, {}),                       # ragged rows in registers
    (1001, 1, {}),                       # rows shifted against the vectors
    (37, 3, {}),
    (1001, 1, {"row_chunks": 0}),        # streamed
    (4099, 1, {"row_chunks": 0}),
    (4099, 1, {"row_cluster": 4, "row_smem": 0}),   # a cluster's blocks
])
def test_lanes_past_the_row_do_not_trip_a_guard(width, offset, opts):
    # A row kernel evaluates whole vectors: the lanes past a row's end (and, in
    # a cluster, past a block's share) run the body on padding and are dropped.
    # Their guards hold; a bad id in a row's first or last column still trips.
    text = _padded_lanes_program(width, offset)
    f = kfuse.compile(text, target="cuda", **opts)
    rng = np.random.default_rng(width)
    table = (rng.standard_normal(100) * 0.1).astype(np.float32)
    ids = rng.integers(1, 101, size=(4, width + offset)).astype(np.int64)
    ids[:, :offset] = 0                  # (outside the slice: never read)
    sums, rows = f.emulate(ids, table)
    want = np.exp(table[ids[:, offset:] - 1])
    np.testing.assert_allclose(sums, want.sum(1), rtol=1e-5)
    np.testing.assert_allclose(rows, want / want.sum(1, keepdims=True), rtol=1e-5, atol=1e-9)
    for r, c in ((2, width + offset - 1), (1, offset)):
        bad = ids.copy()
        bad[r, c] = 0 if c == offset else 101
        with pytest.raises(GuardError):
            f.emulate(bad, table)
