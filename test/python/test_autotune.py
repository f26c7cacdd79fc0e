"""kfuse.autotune: variants compiled here, kept when their code differs, every
one computing the same in the PTX emulator; the runtime's TunedExecutable
choosing the fastest by a measurement (a stand-in here: the GPU's choice is
test_gpu.py's), saved and loaded again. No GPU needed."""

import json
import os

import numpy as np
import pytest

import kfuse
import kfuse.runtime as rt
from kfuse import builder as kb
from kfuse.autotune import ROW_VARIANTS, label_of
from kfuse.errors import ArtifactError, CompileError, DeviceError, KfuseError
from kfuse.runtime.tune import TunedExecutable, wall_seconds


def _softmax(rows, width, name="softmax"):
    p = kb.Program(name)
    x = p.input("x", (rows, width), "f32")
    e = kb.exp(x - kb.amax(x, axis=1, keepdims=True))
    p.output(e / kb.reduce_sum(e, axis=1, keepdims=True), name="y")
    return p


def _softmax_ref(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _same(a, b):
    return a.ptx == b.ptx and a.plan.to_dict() == b.plan.to_dict()


@pytest.fixture(scope="module")
def wide():
    # rows of 65536: a split (two kernels) by default, a cluster of 16, streams
    return kfuse.autotune(_softmax(2, 65536), chip="sm_90")


def test_auto_variants_keep_distinct_code_and_say_why_the_others_go(wide):
    labels = wide.labels
    assert labels[0] == "default" and wide.variant_options["default"] == {}
    assert "row_cluster=16" in labels and "row_occupancy=2" in labels
    assert len(wide.variants["default"].plan.kernels) == 2
    assert len(wide.variants["row_cluster=16"].plan.kernels) == 1
    kept = list(wide.variants.values())
    for i, a in enumerate(kept):
        for b in kept[i + 1:]:
            assert not _same(a, b)
    tried = {label_of(v) for v in ROW_VARIANTS} | {"readonly_inputs=True"}
    assert set(labels) | {d for d, _ in wide.dropped} == tried | {"default"}
    for label, why in wide.dropped:
        assert why.startswith("the same code as "), (label, why)
        twin = why[len("the same code as "):]
        assert twin in wide.variants
    # each variant compiled with its options over the default's
    assert wide.variants["row_cluster=16"].options.row_cluster == 16
    assert "variant(s) of distinct code" in wide.summary()
    assert "dropped row_cluster=0: the same code as" in wide.summary()


def test_every_variant_computes_the_softmax_in_the_emulator(wide):
    x = np.random.default_rng(3).standard_normal((2, 65536)).astype(np.float32)
    ref = _softmax_ref(x)
    # (before any choice the tuned program is its default: plan, PTX, stages)
    assert wide.current is wide.default and wide.ptx == wide.default.ptx
    assert wide.plan is wide.default.plan and wide.stages is wide.default.stages
    np.testing.assert_allclose(wide.emulate(x), ref, rtol=1e-5, atol=1e-9)
    for label, c in wide.variants.items():
        np.testing.assert_allclose(c.emulate(x), ref, rtol=1e-5, atol=1e-9, err_msg=label)


def test_a_chip_without_clusters_refuses_their_variants_by_name():
    t = kfuse.autotune(_softmax(2, 65536), chip="sm_80")
    refused = dict(t.dropped)
    for label in ("row_cluster=4", "row_cluster=16", "row_persist=auto"):
        assert refused[label].startswith("refused: option "), refused[label]
        assert "sm_90" in refused[label]
    assert all("sm_90" not in c.options.chip for c in t.variants.values())


def test_an_elementwise_program_tries_vectors_per_thread_not_row_options():
    p = kb.Program("bias_gelu")
    x = p.input("x", (256, 4096), "f32")
    b = p.input("b", (4096,), "f32")
    p.output(kb.gelu(x + b), name="y")
    t = kfuse.autotune(p, chip="sm_90")
    grid = t.default.plan.steps[0].grid[0]
    assert set(t.labels) == {
        "default", f"sm_count=1,blocks_per_sm={grid // 2},unroll=2",
        f"sm_count=1,blocks_per_sm={grid // 4},unroll=4", "readonly_inputs=True"}
    assert not any(label.startswith("row_") for label, _ in t.dropped)
    assert t.variants[f"sm_count=1,blocks_per_sm={grid // 4},unroll=4"] \
        .plan.steps[0].grid[0] == grid // 4
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((256, 4096)).astype(np.float32)
    bs = rng.standard_normal(4096).astype(np.float32)
    want = t.default.emulate(xs, bs)
    for label, c in t.variants.items():
        np.testing.assert_allclose(c.emulate(xs, bs), want, rtol=1e-6, atol=1e-6,
                                   err_msg=label)


def test_given_variants_apply_over_the_strategy_and_repeat_once():
    t = kfuse.autotune(_softmax(4, 4096), chip="sm_90", row_chunks=2,
                       variants=[{"row_chunks": 0}, {}, {"row_chunks": 0},
                                 {"row_chunks": 2}, {"row_occupancy": 2}])
    assert t.labels == ("default", "row_chunks=0", "row_occupancy=2")
    assert t.variants["default"].options.row_chunks == 2
    # (over the strategy given: row_chunks=2 stays)
    assert t.variants["row_occupancy=2"].options.row_chunks == 2
    assert dict(t.dropped) == {"row_chunks=2": "the same options as a variant kept"}


@pytest.mark.parametrize("kwargs, message", [
    (dict(variants=[{"row_chunk": 0}]), "unknown options ['row_chunk']"),
    (dict(variants=[("row_chunks", 0)]), "each variant is a dict of options"),
    (dict(target="cpu"), "target 'cpu' has no variants"),
    (dict(rows=3), "unknown options ['rows']"),
])
def test_bad_requests_are_refused_by_name(kwargs, message):
    with pytest.raises(CompileError, match=message.replace("[", r"\[").replace("(", r"\(")):
        kfuse.autotune(_softmax(4, 1024), chip="sm_90", **kwargs)


def test_pairs_combine_the_variants_kept_that_set_different_options():
    t = kfuse.autotune(_softmax(4, 4096), chip="sm_90", pairs=True,
                       variants=[{"row_chunks": 0}, {"row_chunks": 8}, {"row_occupancy": 2},
                                 {"row_pack": 8}])
    # (row_pack changes nothing here: not kept, so in no pair; the two
    # row_chunks never pair with each other)
    assert t.labels == ("default", "row_chunks=0", "row_chunks=8", "row_occupancy=2",
                        "row_chunks=0,row_occupancy=2", "row_chunks=8,row_occupancy=2")
    assert t.variant_options["row_chunks=8,row_occupancy=2"] == {"row_chunks": 8,
                                                                 "row_occupancy": 2}
    opts = t.variants["row_chunks=8,row_occupancy=2"].options
    assert (opts.row_chunks, opts.row_occupancy) == (8, 2)


def test_a_variant_with_a_bad_value_is_dropped_with_the_reason():
    t = kfuse.autotune(_softmax(4, 1024), chip="sm_90",
                       variants=[{"row_occupancy": 3}, {"row_chunks": 0}])
    assert t.labels == ("default", "row_chunks=0")
    assert dict(t.dropped)["row_occupancy=3"] == (
        "refused: option row_occupancy must be 1, 2 or 4, got 3")


# ---- the runtime's choice, with stand-in executables and a stand-in clock

class _Plan:
    def __init__(self, sig="f(x: f32[4])"):
        self._sig = sig
        self.inputs, self.outputs = (), ()

    def signature(self):
        return self._sig


class _Exe:
    def __init__(self, sig="f(x: f32[4])"):
        self.plan = _Plan(sig)
        self.calls, self.syncs = [], 0

    def __call__(self, *args, stream=None, out=None):
        self.calls.append((args, stream, out))
        return ("y",) if out is None else out

    def synchronize(self):
        self.syncs += 1

    def device_name(self):
        return "fake gpu"

    def launch_grids(self, device=None):
        return [("grid of", id(self), device)]


def test_the_first_call_times_every_variant_and_runs_the_fastest():
    exes = {"default": _Exe(), "a": _Exe(), "b": _Exe()}
    seconds = {"default": 3e-4, "a": 1e-4, "b": 2e-4}
    seen = []

    def measure(label, run):
        run(1)
        seen.append(label)
        return seconds[label]
    t = TunedExecutable(list(exes.items()), name="f", measure=measure)
    assert t.choice is None and t.plan is exes["default"].plan
    assert t("x", stream=7) == ("y",)
    assert seen == ["default", "a", "b"] and t.choice == "a"
    assert list(t.timings) == ["a", "b", "default"]
    # the default's first call made the outputs every timed call writes
    # into, each followed by a wait; then the fastest ran the call itself
    assert exes["default"].calls == [(("x",), 7, None), (("x",), 7, ("y",))]
    assert exes["b"].calls == [(("x",), 7, ("y",))]
    assert exes["a"].calls == [(("x",), 7, ("y",)), (("x",), 7, None)]
    assert all(e.syncs == 1 for e in exes.values())
    n = len(exes["a"].calls)
    t("x")                           # (no timing now: the one kept runs)
    assert seen == ["default", "a", "b"] and len(exes["a"].calls) == n + 1
    assert t.plan is exes["a"].plan
    assert t.launch_grids(1) == [("grid of", id(exes["a"]), 1)]
    t.choose("b")
    assert t.choice == "b" and t.launch_grids() == [("grid of", id(exes["b"]), None)]
    with pytest.raises(KfuseError, match="no variant 'c'; the variants are default, a, b"):
        t.choose("c")


def test_threads_calling_first_at_once_time_the_variants_once():
    import threading
    import time
    seen = []

    def measure(label, run):
        seen.append(label)
        time.sleep(0.05)
        return {"a": 1.0, "b": 2.0}[label]
    t = TunedExecutable([("a", _Exe()), ("b", _Exe())], name="f", measure=measure)
    threads = [threading.Thread(target=t, args=("x",)) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert seen == ["a", "b"] and t.choice == "a"
    assert len(t.variants["a"].calls) == 1 + 4    # (the outputs' call, then 4 calls)


def test_a_variant_the_device_refuses_is_left_out_and_said():
    exes = {"default": _Exe(), "big_cluster": _Exe(), "b": _Exe()}

    def measure(label, run):
        if label == "big_cluster":
            raise DeviceError("CUDA driver error while launching: CUDA_ERROR_CLUSTER_SIZE")
        return {"default": 2.0, "b": 1.0}[label]
    t = TunedExecutable(list(exes.items()), name="f", measure=measure)
    t("x")
    assert t.choice == "b" and list(t.timings) == ["b", "default"]
    assert t.failed == {"big_cluster": "CUDA driver error while launching: "
                                       "CUDA_ERROR_CLUSTER_SIZE"}
    # the default itself refused: the outputs come from the next that runs
    class _Refused(_Exe):
        def __call__(self, *args, stream=None, out=None):
            raise DeviceError("CUDA driver error while loading: CUDA_ERROR_NO_BINARY_FOR_GPU")
    t = TunedExecutable([("default", _Refused()), ("b", _Exe())], name="f",
                        measure=lambda label, run: run(1) or 1.0)
    assert t("x") == ("y",) and t.choice == "b"
    assert list(t.failed) == ["default"] and list(t.timings) == ["b"]
    # none runs: the first's error
    t = TunedExecutable([("a", _Exe()), ("b", _Exe())], name="f",
                        measure=lambda label, run: (_ for _ in ()).throw(
                            DeviceError(f"no {label}")))
    with pytest.raises(DeviceError, match="no a"):
        t("x")
    # (a wrong argument is the caller's: raised, not a variant left out)
    t = TunedExecutable([("a", _Exe())], name="f",
                        measure=lambda label, run: (_ for _ in ()).throw(
                            kfuse.CallError("input 'x' has shape (3,)")))
    with pytest.raises(kfuse.CallError):
        t("x")


def test_a_choice_recorded_for_the_device_is_taken_without_timing():
    exes = {"default": _Exe(), "b": _Exe()}

    def measure(label, run):
        raise AssertionError("timed")
    t = TunedExecutable(list(exes.items()), name="f", measure=measure,
                        chosen={"fake gpu": "b", "other gpu": "default", "old": "gone"})
    assert t.chosen == {"fake gpu": "b", "other gpu": "default"}
    t("x")
    assert t.choice == "b" and t.timings == {} and len(exes["b"].calls) == 1
    with pytest.raises(KfuseError, match="record\\(\\) needs the tuned program's directory"):
        t.record()
    fresh = TunedExecutable(list(exes.items()), name="f", path="/nowhere")
    with pytest.raises(KfuseError, match="no variant chosen yet"):
        fresh.record()


def test_a_tuned_executable_refuses_variants_that_do_not_match():
    with pytest.raises(KfuseError, match="no variants"):
        TunedExecutable([], name="f")
    with pytest.raises(KfuseError, match="labels repeat"):
        TunedExecutable([("a", _Exe()), ("a", _Exe())], name="f")
    with pytest.raises(ArtifactError, match="take different arguments"):
        TunedExecutable([("a", _Exe()), ("b", _Exe("f(x: f32[8])"))], name="f")


def test_wall_seconds_times_a_run_sized_by_a_call_after_the_first():
    runs = []
    assert wall_seconds(runs.append, budget=0.0) > 0
    assert runs == [1, 1, 1]         # (the first, one to size the run, the run)
    runs.clear()
    wall_seconds(runs.append, budget=10.0)
    assert runs[:2] == [1, 1] and runs[2] == 1000   # (at most 1000 calls)


# ---- saved and loaded

def test_a_saved_tuned_program_loads_as_a_tuned_executable(tmp_path, wide):
    path = wide.save(tmp_path / "t")
    data = json.loads((tmp_path / "t" / "tuning.json").read_text())
    assert [v["label"] for v in data["variants"]] == list(wide.labels)
    assert data["variants"][1]["options"] == wide.variant_options[wide.labels[1]]
    exe = rt.load(path)
    assert isinstance(exe, TunedExecutable) and exe.labels == wide.labels
    assert exe.dropped == [tuple(d) for d in wide.dropped]
    for label, c in wide.variants.items():
        assert exe.variants[label].plan.to_dict() == c.plan.to_dict()
        assert exe.variants[label].ptx == c.ptx
    assert kfuse.load(path).labels == wide.labels
    with pytest.raises(ArtifactError, match="is a tuned program .kfuse.autotune.: emulate one "
                                            "of its variants, e.g. .*v0 .'default'."):
        rt.load_emulated(path)
    x = np.random.default_rng(5).standard_normal((2, 65536)).astype(np.float32)
    np.testing.assert_allclose(rt.load_emulated(os.path.join(path, "v1"))(x),
                               _softmax_ref(x), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(kfuse_tuning=2), "not a kfuse tuning file of version 1"),
    (lambda d: d.update(variants=[]), "'variants' must be a non-empty list"),
    (lambda d: d["variants"][0].pop("dir"), "variant 0 needs a 'label' and a 'dir'"),
    (lambda d: d["variants"][0].update(dir="../v0"), "is not inside the tuned program"),
    (lambda d: d["variants"][1].update(dir="nowhere"), "nowhere"),
    (lambda d: d.update(chosen={"gpu": {"label": "gone"}}), "'chosen' must map device names"),
    (lambda d: d.update(chosen=["default"]), "'chosen' must map device names"),
])
def test_a_damaged_tuning_file_is_named(tmp_path, edit, message):
    t = kfuse.autotune(_softmax(4, 1024), chip="sm_90", variants=[{"row_chunks": 0}])
    path = t.save(tmp_path / "t")
    file = os.path.join(path, "tuning.json")
    with open(file) as f:
        data = json.load(f)
    edit(data)
    with open(file, "w") as f:
        json.dump(data, f)
    with pytest.raises(ArtifactError, match=message):
        rt.load(path)


def test_cli_tune_prints_the_variants_and_saves_them(tmp_path, capsys):
    from kfuse.__main__ import main
    prog = tmp_path / "softmax.mlir"
    prog.write_text(_softmax(4, 4096).to_mlir())
    out = tmp_path / "t"
    assert main(["tune", str(prog), "--chip", "sm_90", "--set", "row_chunks=2",
                 "--variant", "row_chunks=0", "--variant", "row_occupancy=2,row_smem=0",
                 "--variant", "row_chunks=2", "--pairs", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "softmax: 4 variant(s) of distinct code" in text
    assert "  row_chunks=0,row_occupancy=2,row_smem=0: 1 kernel(s)" in text
    assert "  row_occupancy=2,row_smem=0: 1 kernel(s), 1 step(s)" in text
    assert "dropped row_chunks=2: the same options as a variant kept" in text
    exe = rt.load(out)
    assert exe.labels == ("default", "row_chunks=0", "row_occupancy=2,row_smem=0",
                          "row_chunks=0,row_occupancy=2,row_smem=0")
    # (every variant over --set's options)
    assert json.load(open(out / "v2" / "options.json"))["row_chunks"] == 2
    for bad, message in ((["--variant", "row_chunks"], "--variant takes NAME=VALUE"),
                         (["--variant", "rows=1"], "unknown options ['rows']"),
                         (["--set", "x"], "--set takes NAME=VALUE")):
        assert main(["tune", str(prog)] + bad) == 1
        assert message in capsys.readouterr().err
    assert main(["tune", str(tmp_path / "missing.mlir")]) == 1
    assert "cannot read" in capsys.readouterr().err
