"""Times compiled artifacts (and their torch peers) several ways, to tell the
GPU's time from what timing adds:

    python3 bench/timing_probe.py .artifacts/suite/bn_var_nhwc .artifacts/suite/bn_var_nhwc__nopdl

For each artifact directory (a suite workload, or name__variant), in one
process on one GPU, microseconds per call:
  events   median of an event pair around each call, calls queued back to back
           (bench_suite.py's per-call column);
  batch    all calls between one event pair, divided by their number
           (bench_suite.py's batch column);
  idle     median of an event pair around each call, the GPU idle before
           each (a synchronize between calls): the call's latency from a
           standing start, launches included;
  host     median host time of one call (its launches queued, not waited for);
a program with temporaries again with them allocated and freed with each call
(`keep_temps = False`, "temps per call"), and with --peers the same for
torch.compile of the workload's definition.
Prints a markdown table; --out writes JSON.
"""

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import kfuse.runtime as rt  # noqa: E402
from bench_ew_chain import cuda_batch_us, cuda_time_us, host_call_us  # noqa: E402
from suite import torch_inputs, torch_reference  # noqa: E402


def idle_us(torch, fn, reps, warmup):
    """Median per-call time with the GPU idle before each call."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    return statistics.median(times)


def modes(torch, fn, reps):
    return {"events_us": cuda_time_us(torch, fn, reps, 3)[0],
            "batch_us": cuda_batch_us(torch, fn, reps, 3),
            "idle_us": idle_us(torch, fn, reps, 3),
            "host_us": host_call_us(torch, fn, reps)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifacts", nargs="+")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--peers", action="store_true", help="also torch.compile of the workload")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import torch
    torch.manual_seed(0)
    rows = {}
    print("| program | events us | batch us | idle us | host us |")
    print("|---|---:|---:|---:|---:|")
    for d in args.artifacts:
        name = os.path.basename(os.path.normpath(d))
        exe = rt.load(d)
        ins = torch_inputs(exe)
        exe(*ins)
        found = {name: modes(torch, lambda: exe(*ins), args.reps)}
        if any(b.kind == "temp" for b in exe.plan.buffers):
            exe.keep_temps = False
            found[f"{name} (temps per call)"] = modes(torch, lambda: exe(*ins), args.reps)
            exe.keep_temps = True
        if args.peers and "__" not in name:
            comp = torch.compile(torch_reference(name))
            comp(*ins)
            found[f"{name} (torch.compile)"] = modes(torch, lambda: comp(*ins), args.reps)
        for n, m in found.items():
            rows[n] = m
            print(f"| {n} | {m['events_us']:.1f} | {m['batch_us']:.1f} | {m['idle_us']:.1f} | "
                  f"{m['host_us']:.1f} |", flush=True)
        del ins
        torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
