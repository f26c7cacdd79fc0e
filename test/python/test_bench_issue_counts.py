"""bench/issue_counts.py: the suite's kernels profiled in the PTX emulator at
full size, on a sample of blocks -- the counts add up, scale to the grid,
and respond to what the kernel does (a wider elementwise body issues more
per byte; the same program with fewer blocks sampled issues the same per
byte). Times are not asserted."""

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

import issue_counts  # noqa: E402


def test_suite_workloads_profiled(tmp_path, capsys):
    out = tmp_path / "issue.json"
    rows = issue_counts.main(["ew_chain", "bias_gelu:unroll=2", "--blocks", "16",
                              "--bandwidth", "3000", "--hot", "3", "--out", str(out)])
    by = {r["workload"]: r for r in rows}
    ew = by["ew_chain"]
    assert ew["launches"] == 1
    # 2^26 floats read and written, every sector whole
    assert ew["sector_bytes"] == pytest.approx(2 * 4 * (1 << 26))
    assert ew["sectors_per_byte"] == pytest.approx(1.0)
    # per float a thread computes (128 B: 16 floats read and written, a
    # warp-instruction for 32 threads): one ex2 for exp, and a 128-bit load
    # and store for four floats
    per_float = {op: n / 16 * 32 for op, n in ew["by_op_per_128B"].items()}
    assert per_float["ex2"] == pytest.approx(1.0)
    assert per_float["ld.global"] == per_float["st.global"] == pytest.approx(0.25)
    assert sum(ew["by_op_per_128B"].values()) == pytest.approx(ew["per_128B"])
    assert by["bias_gelu"]["options"] == {"unroll": 2}
    table = capsys.readouterr().out
    assert "| ew_chain | 1 |" in table and "issue slots per 128 B at 3000 GB/s" in table
    # the statements issued most, 3 a workload
    assert table.count("| ew_chain | ew_chain_g0 |") == 3
    saved = json.loads(out.read_text())
    assert saved["blocks"] == 16 and saved["issue_slots_per_128B"] == pytest.approx(
        issue_counts.issue_slots(3000, 132, 1.98))
    assert [r["workload"] for r in saved["rows"]] == ["ew_chain", "bias_gelu"]


def test_the_statements_issued_most_are_the_loops():
    # a sum of squares over 2^26 floats: each thread's loop over its
    # vectors issues far more than the code around it (a warp's shuffles,
    # the block's combine), and its 128-bit load is among its statements
    r = issue_counts.count(issue_counts.suite.programs()["l2norm"], blocks=8)
    hot = r["hot_statements"]
    assert len(hot) == issue_counts.HOT_KEPT
    per = [h["per_128B"] for h in hot]
    assert per == sorted(per, reverse=True)
    assert sum(per) <= r["per_128B"] + 1e-9
    loop = [h for h in hot if h["per_128B"] == pytest.approx(per[0])]
    assert any(h["ptx"].startswith("ld.global.v4") for h in loop)
    assert any(h["ptx"].startswith("fma.rn.f32") for h in loop)
    # (several trips a thread: the loop issues a multiple of the prologue)
    params = [h for h in hot if h["ptx"].startswith("ld.param")]
    assert params and all(per[0] >= 2 * h["per_128B"] for h in params)


def test_sample_size_does_not_change_a_uniform_kernel():
    progs = issue_counts.suite.programs()
    a = issue_counts.count(progs["softmax"], blocks=8)
    b = issue_counts.count(progs["softmax"], blocks=32)
    assert a["per_128B"] == pytest.approx(b["per_128B"])
    assert a["warp_instructions"] == pytest.approx(b["warp_instructions"])


def test_a_saved_program_is_profiled_as_it_is(tmp_path):
    # a saved CUDA program (an older commit's artifacts) counts as the same
    # program compiled now
    prog = issue_counts.suite.programs()["softmax_w1024"]
    f = issue_counts.kfuse.compile(prog, target="cuda", chip="sm_90")
    f.save(str(tmp_path / "softmax"))
    [saved] = issue_counts.main([str(tmp_path / "softmax"), "--blocks", "8"])
    fresh = issue_counts.count(prog, blocks=8)
    assert saved["workload"] == str(tmp_path / "softmax")
    assert saved["per_128B"] == pytest.approx(fresh["per_128B"])
    assert saved["by_op_per_128B"] == pytest.approx(fresh["by_op_per_128B"])


def test_bad_arguments_are_named():
    with pytest.raises(SystemExit, match="no workload 'nope'"):
        issue_counts.main(["nope"])
    with pytest.raises(SystemExit, match="not key=value"):
        issue_counts.main(["softmax:row_trip"])
    with pytest.raises(SystemExit, match="--blocks must be positive"):
        issue_counts.main(["softmax", "--blocks", "0"])
