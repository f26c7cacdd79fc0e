#!/usr/bin/env python3
"""Benchmark of an elementwise chain, y = log(exp(x) + 1) over 2^26 f32, on one GPU.

Compares a compiled kfuse program (run through kfuse.runtime on torch tensors) with
torch eager, torch.compile and the device-to-device copy bandwidth of the same byte
count. Needs python3 with torch, numpy and cuda-bindings; no MLIR.

    python3 bench/bench_ew_chain.py --artifact DIR --out results.json
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--artifact", required=True,
                   help="compiled kfuse program directory (plan.json + kernels.ptx)")
    p.add_argument("--out", required=True, help="JSON file to write the results to")
    p.add_argument("--reps", type=int, default=50, help="timed repetitions (median reported)")
    p.add_argument("--warmup", type=int, default=10, help="untimed repetitions first")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def cuda_time_us(torch, fn, reps, warmup):
    """Median and min of per-repetition GPU time (us), measured with CUDA events on the
    current stream."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
    return statistics.median(times), min(times)


def interleaved_us(torch, fns, reps, rounds, warmup):
    """Per-call GPU times (us, CUDA events on the current stream) of each of
    `fns` (name -> callable), timed in `rounds` rounds of `reps` calls each,
    every callable in turn within a round, the order reversed every other
    round: peers compared under the same clocks and the same drift, not one
    after the other. Returns (name -> median over every call, name -> each
    round's median)."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    names = list(fns)
    samples = {n: [] for n in names}
    per_round = {n: [] for n in names}
    for r in range(rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            torch.cuda.synchronize()
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            for s, e in zip(starts, ends):
                s.record()
                fns[n]()
                e.record()
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
            samples[n] += times
            per_round[n].append(statistics.median(times))
    return {n: statistics.median(samples[n]) for n in names}, per_round


def cuda_batch_us(torch, fn, reps, warmup):
    """GPU time (us) per call of `reps` calls queued back to back between two
    CUDA events: what a stream of calls costs, with no event between calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / reps


def host_call_us(torch, fn, reps):
    """Median CPU time of one call (launch overhead, GPU work not waited for)."""
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def versions(torch):
    v = {"python": platform.python_version(), "torch": torch.__version__,
         "torch_cuda": torch.version.cuda}
    for mod in ("triton", "numpy"):
        try:
            v[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            v[mod] = None
    try:
        import cuda.bindings
        v["cuda_bindings"] = cuda.bindings.__version__
    except Exception:  # noqa: BLE001
        v["cuda_bindings"] = None
    return v


def driver_info():
    from cuda.bindings import driver as cu
    err, ver = cu.cuDriverGetVersion()
    info = {"cuda_driver_api": f"{ver // 1000}.{ver % 1000 // 10}" if int(err) == 0 else None}
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        info["nvidia_driver"] = out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except Exception:  # noqa: BLE001
        info["nvidia_driver"] = None
    return info


def main():
    args = parse_args()
    import torch
    import kfuse.runtime as rt
    from cuda.bindings import driver as cu

    if not torch.cuda.is_available() or not rt.cuda_available():
        sys.exit("bench_ew_chain: no CUDA device")
    exe = rt.load(args.artifact)
    plan = exe.plan
    if len(plan.inputs) != 1 or len(plan.outputs) != 1 or plan.inputs[0].dtype.name != "f32":
        sys.exit(f"bench_ew_chain: expected one f32 input and one output, got {plan.signature()}")
    shape = plan.inputs[0].shape
    numel = plan.inputs[0].numel
    nbytes = plan.inputs[0].nbytes
    moved = 2 * nbytes                       # one read + one write of the tensor

    torch.manual_seed(args.seed)
    dev = torch.device("cuda", 0)
    x = torch.randn(shape, device=dev, dtype=torch.float32) * 4
    y = torch.empty_like(x)
    src = torch.randn(numel, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)

    def eager(t):
        return torch.log(torch.exp(t) + 1)

    ref = torch.log(torch.exp(x.double()) + 1)

    results = {}

    def record(name, fn, out_fn=None, note=None):
        med, best = cuda_time_us(torch, fn, args.reps, args.warmup)
        entry = {"time_us": med, "min_time_us": best, "gbps": moved / (med * 1e-6) / 1e9}
        if out_fn is not None:
            out = out_fn()
            torch.cuda.synchronize()
            entry["max_abs_err"] = float((out.double() - ref).abs().max().item())
        if note:
            entry["note"] = note
        results[name] = entry
        return entry

    # (1) copy bandwidth of the same byte count
    record("copy_torch", lambda: dst.copy_(src))
    stream = torch.cuda.current_stream().cuda_stream

    def drv_copy():
        (err,) = cu.cuMemcpyDtoDAsync(dst.data_ptr(), src.data_ptr(), nbytes, stream)
        if int(err) != 0:
            raise RuntimeError(f"cuMemcpyDtoDAsync: {err}")
    record("copy_cuMemcpyDtoDAsync", drv_copy)
    copy_gbps = max(results["copy_torch"]["gbps"], results["copy_cuMemcpyDtoDAsync"]["gbps"])

    # (2) kfuse on torch tensors (zero-copy, torch's current stream)
    exe(x)  # loads the module
    torch.cuda.synchronize()
    record("kfuse", lambda: exe(x), out_fn=lambda: exe(x), note="exe(x): allocates y with torch")
    record("kfuse_out", lambda: exe(x, out=y), out_fn=lambda: exe(x, out=y),
           note="exe(x, out=y)")
    results["kfuse"]["host_call_us"] = host_call_us(torch, lambda: exe(x), args.reps)

    # (3) torch eager
    record("torch_eager", lambda: eager(x), out_fn=lambda: eager(x))

    # (4) torch.compile (mode default), cold compile time = first call
    compiled = torch.compile(eager)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    compiled(x)
    torch.cuda.synchronize()
    cold_s = time.perf_counter() - t0
    record("torch_compile", lambda: compiled(x), out_fn=lambda: compiled(x))
    results["torch_compile"]["cold_compile_s"] = cold_s

    for name, e in results.items():
        e["fraction_of_copy_bw"] = e["gbps"] / copy_gbps

    report = {
        "benchmark": "ew_chain log(exp(x)+1)",
        "artifact": os.path.abspath(args.artifact),
        "program": plan.signature(),
        "chip": plan.chip,
        "shape": list(shape), "dtype": "f32", "bytes_moved": moved,
        "reps": args.reps, "warmup": args.warmup,
        "measured_copy_gbps": copy_gbps,
        "device": torch.cuda.get_device_name(dev),
        "driver": driver_info(),
        "versions": versions(torch),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "results": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")

    print(f"## log(exp(x)+1), {numel} x f32, {report['device']}, {report['date']}\n")
    print(f"measured copy bandwidth: {copy_gbps:.0f} GB/s ({moved} bytes read+write)\n")
    print("| implementation | time (us) | GB/s | % of copy BW | max abs err vs f64 |")
    print("|---|---:|---:|---:|---:|")
    for name, e in results.items():
        err = f"{e['max_abs_err']:.2e}" if "max_abs_err" in e else "-"
        print(f"| {name} | {e['time_us']:.1f} | {e['gbps']:.0f} | "
              f"{100 * e['fraction_of_copy_bw']:.1f}% | {err} |")
    print(f"\ntorch.compile cold compile: {cold_s:.2f} s; kfuse host time per call: "
          f"{results['kfuse']['host_call_us']:.1f} us")
    print(f"versions: {report['versions']}; driver: {report['driver']}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
