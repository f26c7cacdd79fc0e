"""bench/kernel_times.py: each step of a plan timed as the difference of its
prefix programs, against the bytes its buffers hold (no GPU needed here)."""

import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

import kernel_times  # noqa: E402
from _programs import batch_norm, row_program  # noqa: E402

import kfuse  # noqa: E402
import kfuse.runtime as rt  # noqa: E402
from kfuse import dtypes  # noqa: E402
from kfuse.runtime.plan import (BufferArg, BufferSpec, CopyStep, LaunchPlan,  # noqa: E402
                                LaunchStep, ScalarArg, TensorSpec)


def _bn_nhwc():
    """Batch norm over channels last: a split along rows (partials, finish,
    store), its finish programmatic."""
    return batch_norm("bn", (16, 16, 32, 64), (0, 1, 2))


def _hand_plan():
    f32, i32 = dtypes.get("f32"), dtypes.get("i32")
    x = TensorSpec("x", (1024,), f32)
    y = TensorSpec("y", (1024,), f32)
    bufs = (BufferSpec("input", (1024,), f32, index=0),
            BufferSpec("output", (1024,), f32, index=0),
            BufferSpec("temp", (64,), f32),
            BufferSpec("counter", (8,), i32))
    steps = (LaunchStep("k0", (8, 1, 1), (128, 1, 1),
                        (BufferArg(0), BufferArg(2), BufferArg(0), BufferArg(3),
                         ScalarArg(3, "i32"))),
             LaunchStep("k1", (8, 1, 1), (128, 1, 1),
                        (BufferArg(0), BufferArg(2), BufferArg(1)), programmatic=True),
             CopyStep(2, 1))
    return LaunchPlan(name="hand", target="cuda", chip="sm_90", ptx="kernels.ptx",
                      inputs=(x,), outputs=(y,), buffers=bufs, steps=steps).validate()


def test_step_bytes_count_each_data_buffer_once():
    plan = _hand_plan()
    # k0: x (taken twice) and the temporary, not the counter; k1: x, the
    # temporary and y; the copy reads its source and writes as much
    assert kernel_times.step_bytes(plan) == [4096 + 256, 4096 + 256 + 4096, 2 * 256]
    assert [kernel_times.step_label(s) for s in plan.steps] == ["k0", "k1", "copy 2 -> 1"]


def test_step_rows_take_each_prefix_less_the_one_before():
    plan = _hand_plan()
    rows = kernel_times.step_rows(plan, [10.0, 14.0, 15.0], copy_gbps=1.0)
    assert [r["us"] for r in rows] == [10.0, 4.0, 1.0]
    assert rows[0]["frac"] == pytest.approx(4352 / 10e-6 / 1e9)
    assert rows[1]["programmatic"] and not rows[0]["programmatic"]
    assert "grid" not in rows[2]
    # (untimed: no time, no fraction; a step that adds nothing: no fraction)
    assert all("us" not in r and "frac" not in r
               for r in kernel_times.step_rows(plan, [None] * 3))
    rows = kernel_times.step_rows(plan, [10.0, 10.0, 12.0], copy_gbps=1.0)
    assert rows[1]["us"] == 0.0 and "frac" not in rows[1]
    text = "\n".join(kernel_times.table("hand", rows))
    assert "| k1 | [8, 1, 1] x [128, 1, 1] (pdl) | 0.0 | 0.0 | - | - |" in text


def test_prefix_plans_of_a_split_run_like_the_whole_program():
    f = kfuse.compile(_bn_nhwc(), target="cuda", chip="sm_90", sm_count=8)
    kernels = [s.kernel for s in f.plan.steps]
    assert len(kernels) == 3 and kernels[0].endswith("_partial"), kernels
    assert kernels[2].endswith("_store") and f.plan.steps[1].programmatic
    prefixes = kernel_times.prefix_plans(f.plan)
    assert [len(p.steps) for p in prefixes] == [1, 2, 3]
    assert prefixes[-1].steps == f.plan.steps
    # (the runtime takes every prefix: a programmatic launch still follows a
    # launch, and its kernel waits on the grid before it)
    for p in prefixes:
        rt.CudaExecutable(p, f.ptx)
    # every prefix runs (emulated); the whole one gives the program's result
    x = np.random.default_rng(0).standard_normal((16, 16, 32, 64)).astype(np.float32)
    for p in prefixes[:-1]:
        rt.EmulatedExecutable(p, f.ptx)(x)
    y = rt.EmulatedExecutable(prefixes[-1], f.ptx)(x)
    xd = x.astype(np.float64)
    want = (xd - xd.mean((0, 1, 2))) / np.sqrt(xd.var((0, 1, 2)) + 1e-5)
    np.testing.assert_allclose(y, want, atol=1e-5)


def test_list_prints_the_steps_of_saved_programs(tmp_path):
    f = kfuse.compile(_bn_nhwc(), target="cuda", chip="sm_90", sm_count=8)
    f.save(str(tmp_path / "bn"))
    out = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench",
                                                       "kernel_times.py"),
                          "--list", str(tmp_path / "bn"), "--out", str(tmp_path / "k.json")],
                         capture_output=True, text=True, check=True).stdout
    nbytes = 16 * 16 * 32 * 64 * 4
    store = [line for line in out.splitlines() if line.startswith("| bn_g0_store")]
    assert len(store) == 1
    # (the store reads x and writes y, and reads the statistics)
    mb = float(store[0].split("|")[3])
    assert 2 * nbytes / 1e6 <= mb < 2 * nbytes / 1e6 + 0.01
    import json
    data = json.load(open(tmp_path / "k.json"))
    rows = data["programs"][str(tmp_path / "bn")]["steps"]
    assert [r["step"] for r in rows] == [s.kernel for s in f.plan.steps]


def test_prefix_times_difference_each_step_and_its_bytes_are_what_it_touches():
    # the prefixes run through the PTX emulator, a "timer" that gives the
    # bytes of buffers the whole prefix touched (each buffer's, read or
    # written, at least once): differenced, a step's own, which are the
    # bytes kernel_times.step_bytes counts for it (every buffer a kernel of
    # this split takes it reads or writes whole)
    import types
    f = kfuse.compile(_bn_nhwc(), target="cuda", chip="sm_90", sm_count=8)
    whole = types.SimpleNamespace(plan=f.plan, ptx=f.ptx, path=None)
    loaded = []

    def load(plan, ptx, path):
        loaded.append(rt.EmulatedExecutable(plan, ptx, path=path))
        return loaded[-1]

    def touched():
        total = 0
        for st in loaded[-1].last_stats:
            for b in set(st["read"]) | set(st["written"]):
                if f.plan.buffers[b].kind not in ("counter", "status"):
                    total += max(st["read"].get(b, 0), st["written"].get(b, 0))
        return float(total)

    x = np.random.default_rng(0).standard_normal((16, 16, 32, 64)).astype(np.float32)
    times = kernel_times.prefix_times(whole, [x], lambda fn: (fn(), touched())[1], load)
    assert len(loaded) == 3 and [len(e.plan.steps) for e in loaded] == [1, 2, 3]
    rows = kernel_times.step_rows(f.plan, times)
    assert [r["us"] for r in rows] == kernel_times.step_bytes(f.plan)


def test_kernel_durations_add_each_kernels_launches_a_call():
    import types

    def ev(name, us, device="DeviceType.CUDA"):
        span = types.SimpleNamespace(elapsed_us=lambda: us)
        return types.SimpleNamespace(name=name, device_type=device, time_range=span)

    events = [ev("k_partial", 10.0), ev("k_store", 30.0), ev("k_partial", 12.0),
              ev("k_store", 34.0), ev("cudaLaunchKernel", 5.0, "DeviceType.CPU")]
    got = kernel_times.kernel_durations(events, reps=2)
    assert got == {"k_partial": {"us": 11.0, "launches_per_call": 1.0},
                   "k_store": {"us": 32.0, "launches_per_call": 1.0}}


def test_ptxas_estimates_blocks_an_sm_and_waves(tmp_path):
    # x / |x| over 2^20: its store, 512 blocks of 256 threads, few registers
    # (ptxas: 18 on sm_90), holds 8 blocks an SM by threads, so 512 / (8 x
    # 132) waves; a softmax over rows of 65536 runs in clusters: no estimate
    from kfuse import builder as kb
    from sass_loops import find_ptxas
    ptxas = find_ptxas()
    if not os.path.exists(ptxas):
        pytest.skip("ptxas not installed")
    p = kb.Program("normalize")
    x = p.input("x", (1 << 20,), "f32")
    p.output(x / kb.sqrt(kb.sum(x * x)), name="y")
    f = kfuse.compile(p, target="cuda", chip="sm_90")
    part, store = kernel_times.ptxas_waves(f.plan, f.ptx, ptxas=ptxas)
    assert f.plan.steps[1].grid[0] == 512 and f.plan.steps[1].block[0] == 256
    assert 0 < store["registers"] <= 32 and store["spilled"] == 0
    assert store["blocks_per_sm"] == 8
    assert store["waves"] == pytest.approx(512 / (8 * 132))
    assert part["registers"] > 0 and part["blocks_per_sm"] >= 1
    g = kfuse.compile(row_program("rows", "softmax", (4, 65536)), target="cuda",
                      chip="sm_90")
    assert ".reqnctapercluster" in g.ptx
    (k,) = kernel_times.ptxas_waves(g.plan, g.ptx, ptxas=ptxas)
    assert k["registers"] > 0 and "waves" not in k and "blocks_per_sm" not in k
    f.save(str(tmp_path / "n"))
    out = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench",
                                                       "kernel_times.py"),
                          "--list", "--ptxas", str(tmp_path / "n")],
                         capture_output=True, text=True, check=True).stdout
    assert f"| normalize_g0_store | {store['registers']} | 0 | 0 | 8 | 0.48 |" in out
