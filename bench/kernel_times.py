"""GPU time of each kernel of compiled programs of several kernels, against
the bytes each must move: which kernel of a split reduction (partials,
finish, store) holds a program back.

    python3 bench/kernel_times.py .artifacts/suite/bn_train_nhwc .artifacts/suite/softmax_dim0

For each artifact directory, in one process on one GPU:
  prefix   the plan's first 1, 2, ... steps run as programs of their own
           (the same PTX, buffers and launch shapes), each timed in a batch
           of --reps calls between one event pair; a step's time is its
           prefix's less the prefix before it. The steps run as in the whole
           program (programmatic launches included: a step that overlaps the
           one before it is charged only for what it adds).
  waves    the clusters or blocks of a launch the device holds at once
           (the driver's occupancy queries), and its grid's waves of them.
  bytes    the distinct buffers a step's kernel takes (inputs, outputs,
           temporaries, constants; not counters or guard words), each
           charged whole: what a kernel that reads or writes each of them
           once moves (a kernel that touches part of one, a tail's, is
           charged more than it moves). Its fraction of the copy bandwidth
           measured in the same run says how near that kernel is to the
           limit.
  profiler with --profiler, the kernels' own durations from torch.profiler
           (CUPTI), kfuse's and, with --peers, torch.compile's of the
           workload's definition: how torch.compile divides the same work.
Prints markdown tables; --out writes JSON. Without a GPU (--list) it prints
the steps and their bytes only; with --ptxas also each kernel's registers,
spills and an estimate of its blocks an SM and waves (no clusters).
"""

import argparse
import dataclasses
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import kfuse.runtime as rt  # noqa: E402
from kfuse.runtime.plan import BufferArg, LaunchStep  # noqa: E402

# (buffers whose bytes are not data: the finish counters and guards' words)
_NOT_DATA = ("counter", "status")


def step_bytes(plan):
    """The bytes each step of `plan` moves if it touches each of its buffers
    once, whole: for a launch, the sum of the distinct data buffers among its
    arguments; for a copy, its source read and its destination written."""
    out = []
    for step in plan.steps:
        if isinstance(step, LaunchStep):
            bufs = {a.buffer for a in step.args if isinstance(a, BufferArg)}
            out.append(sum(plan.buffers[b].nbytes for b in sorted(bufs)
                           if plan.buffers[b].kind not in _NOT_DATA))
        else:
            out.append(2 * plan.buffers[step.src].nbytes)
    return out


def step_label(step):
    if isinstance(step, LaunchStep):
        return step.name
    return f"copy {step.src} -> {step.dst}"


def prefix_plans(plan):
    """The plans of `plan`'s first 1, 2, ... steps (the last one `plan`
    itself, the others the same buffers with fewer steps), each validated."""
    return [dataclasses.replace(plan, steps=tuple(plan.steps[:n])).validate()
            for n in range(1, len(plan.steps) + 1)]


def prefix_times(whole, ins, timer, load=None):
    """The time `timer` (a callable taking a function of no arguments to
    time) gives each prefix program of the loaded program `whole` called on
    `ins`; `load(plan, ptx, path)` loads a prefix (default: for CUDA)."""
    load = load or (lambda plan, ptx, path: rt.CudaExecutable(plan, ptx, path=path))
    times = []
    for p in prefix_plans(whole.plan):
        exe = load(p, whole.ptx, whole.path)
        times.append(timer(lambda: exe(*ins)))
    return times


def launch_waves(exe, device=0):
    """For each step of the loaded CUDA program `exe`: None for a copy, else
    what the device holds of its launch at once (clusters of its kernel, or
    blocks: the runtime's occupancy query, as for persistent launches) and
    the waves its grid takes (grid / at once; 15.5 waves run as 16, the last
    one half full)."""
    import math

    from kfuse.runtime.ptx import cluster_shapes
    exe.warmup(device)
    st = exe._state(device)
    shapes = cluster_shapes(exe.ptx)
    grids = iter(exe.launch_grids(device))
    out = []
    for step in exe.plan.steps:
        if not isinstance(step, LaunchStep):
            out.append(None)
            continue
        blocks = math.prod(next(grids))
        size = math.prod(shapes.get(step.kernel, (1, 1, 1)))
        with st.current():
            at_once = st.resident(step, size)
        out.append({"cluster": size, "at_once": at_once,
                    "waves": blocks / size / at_once if at_once else None})
    return out


def ptxas_waves(plan, ptx_text, sms=132, ptxas=None):
    """Without a GPU: for each step, what `ptxas -v` says of its kernel
    (registers, spilled bytes, static shared memory) and an estimate of the
    blocks an SM holds (sm_90's limits: 65536 registers, allotted a warp
    at a time in units of 256; 2048 threads; 32 blocks; 228 KB of shared
    memory, 1 KB of it reserved a block) and so the waves of its grid over
    `sms` SMs. Cluster kernels get no estimate (the GPU places a cluster's
    blocks within one GPC, which ptxas does not know). None for a copy."""
    import math
    import re
    from sass_loops import run_ptxas
    r = run_ptxas(ptx_text, plan.chip or "sm_90", verbose=True, ptxas=ptxas)
    r.check_returncode()
    info, kernel = {}, None
    for line in r.stderr.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            kernel = m.group(1)
            info[kernel] = {"registers": 0, "spilled": 0, "smem": 0}
        elif kernel:
            m = re.search(r"(\d+) bytes spill stores", line)
            if m:
                info[kernel]["spilled"] = int(m.group(1))
            m = re.search(r"Used (\d+) registers", line)
            if m:
                info[kernel]["registers"] = int(m.group(1))
            m = re.search(r"(\d+) bytes smem", line)
            if m:
                info[kernel]["smem"] = int(m.group(1))
    clusters = set(re.findall(r"\.entry (\w+)\((?:[^{]*?)\.reqnctapercluster", ptx_text, re.S))
    out = []
    for step in plan.steps:
        if not isinstance(step, LaunchStep):
            out.append(None)
            continue
        k = dict(info.get(step.kernel, {"registers": 0, "spilled": 0, "smem": 0}))
        threads = math.prod(step.block)
        warps = -(-threads // 32)
        per_warp = -(-max(k["registers"], 1) * 32 // 256) * 256
        smem = k["smem"] + step.smem
        blocks = min(2048 // threads, 32, 65536 // (per_warp * warps),
                     233472 // (smem + 1024) if smem else 32)
        if step.kernel not in clusters and blocks > 0:
            k["blocks_per_sm"] = blocks
            k["waves"] = math.prod(step.grid) / (blocks * sms)
        out.append(k)
    return out


def step_rows(plan, prefix_us, copy_gbps=None):
    """One row per step: its label, launch shape, bytes, time (its prefix's
    time less the one before) and, given the copy bandwidth, the fraction of
    it the step's bytes take in that time."""
    rows = []
    before = 0.0
    for step, byts, us in zip(plan.steps, step_bytes(plan), prefix_us):
        row = {"step": step_label(step), "bytes": byts}
        if isinstance(step, LaunchStep):
            row.update(grid=list(step.grid), block=list(step.block),
                       programmatic=step.programmatic)
        if us is not None:
            row["us"] = us - before
            before = us
            if copy_gbps and row["us"] > 0:
                row["frac"] = byts / (row["us"] * 1e-6) / (copy_gbps * 1e9)
        rows.append(row)
    return rows


def table(name, rows):
    lines = [f"## {name}", "",
             "| step | grid x block | MB | us | GB/s | of copy BW | at once | waves |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        shape = (f"{r['grid']} x {r['block']}{' (pdl)' if r.get('programmatic') else ''}"
                 if "grid" in r else "")
        us = r.get("us")
        us_s = "-" if us is None else f"{us:.1f}"
        gbs = f"{r['bytes'] / (us * 1e-6) / 1e9:.0f}" if us is not None and us > 0 else "-"
        frac = f"{r['frac']:.3f}" if "frac" in r else "-"
        w = r.get("waves") or {}
        unit = "" if w.get("cluster", 1) == 1 else f" x {w['cluster']}"
        at_once = f"{w['at_once']}{unit}" if w else "-"
        waves = f"{w['waves']:.2f}" if w.get("waves") else "-"
        lines.append(f"| {r['step']} | {shape} | {r['bytes'] / 1e6:.1f} | {us_s} | {gbs} | "
                     f"{frac} | {at_once} | {waves} |")
    return lines


def kernel_durations(events, reps):
    """Mean duration (us) a call of each GPU kernel among profiler `events`
    (FunctionEvents of torch.profiler: those of device type CUDA), by kernel
    name, over `reps` calls, and how many launches a call it made."""
    totals, counts = {}, {}
    for ev in events:
        if str(getattr(ev, "device_type", "")).split(".")[-1] != "CUDA":
            continue
        # (a kernel's own interval on the GPU; the totals' names changed
        # between torch versions)
        span = getattr(ev, "time_range", None)
        us = span.elapsed_us() if span is not None else getattr(
            ev, "self_device_time_total", getattr(ev, "self_cuda_time_total", 0.0))
        totals[ev.name] = totals.get(ev.name, 0.0) + us
        counts[ev.name] = counts.get(ev.name, 0) + 1
    return {n: {"us": totals[n] / reps, "launches_per_call": counts[n] / reps}
            for n in totals}


def profiled_kernels(torch, fn, reps):
    """kernel_durations of what `fn` launches over `reps` calls (after a
    warm-up call), from torch.profiler."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    return kernel_durations(prof.events(), reps)


def copy_bandwidth(torch, cuda_time_us):
    """Device-to-device copy bandwidth (GB/s, bytes read + written) on a 1 GiB
    buffer, as bench_suite.py measures it."""
    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)
    copy_us, _ = cuda_time_us(torch, lambda: dst.copy_(src), 20, 5)
    return 2 * src.numel() * 4 / (copy_us * 1e-6) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifacts", nargs="+", help="directories written by make_artifacts.py")
    ap.add_argument("--reps", type=int, default=30, help="calls a batch")
    ap.add_argument("--repeat", type=int, default=3,
                    help="batches a prefix (its median taken)")
    ap.add_argument("--list", action="store_true",
                    help="no GPU: print each program's steps and their bytes only")
    ap.add_argument("--ptxas", action="store_true",
                    help="with --list: each kernel's registers, spills and an estimate of "
                         "its blocks an SM and waves (ptxas -v, sm_90's limits)")
    ap.add_argument("--sms", type=int, default=132, help="with --ptxas: the SMs (132)")
    ap.add_argument("--profiler", action="store_true",
                    help="also each kernel's own duration from torch.profiler")
    ap.add_argument("--peers", action="store_true",
                    help="with --profiler: torch.compile's kernels of each workload too "
                         "(not of variants, name__variant)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    results = {"programs": {}}
    if args.list:
        for d in args.artifacts:
            plan = rt.LaunchPlan.load(d)
            rows = step_rows(plan, [None] * len(plan.steps))
            lines = table(d, rows)
            if args.ptxas:
                with open(os.path.join(d, plan.ptx)) as fh:
                    for row, k in zip(rows, ptxas_waves(plan, fh.read(), args.sms)):
                        if k:
                            row["ptxas"] = k
                lines += ["", "| step | registers | spilled | smem | blocks an SM (est.) | "
                          "waves (est.) |", "|---|---:|---:|---:|---:|---:|"]
                lines += [f"| {r['step']} | {r['ptxas']['registers']} | "
                          f"{r['ptxas']['spilled']} | {r['ptxas']['smem']} | "
                          f"{r['ptxas'].get('blocks_per_sm', 'cluster')} | "
                          + (f"{r['ptxas']['waves']:.2f}" if "waves" in r["ptxas"] else "-")
                          + " |" for r in rows if "ptxas" in r]
            results["programs"][d] = {"steps": rows}
            print("\n".join(lines) + "\n")
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1)
        return

    import datetime

    import torch
    from bench_ew_chain import cuda_time_us
    torch.manual_seed(0)
    copy_gbps = copy_bandwidth(torch, cuda_time_us)
    results.update(date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
                   device=torch.cuda.get_device_name(), copy_GBps=copy_gbps)
    print(f"# {results['device']}  copy bandwidth {copy_gbps:.0f} GB/s  {results['date']}\n")
    for d in args.artifacts:
        try:
            entry, lines = measure(d, args, torch, copy_gbps)
        except Exception as e:  # noqa: BLE001 (the next program still runs)
            entry = {"error": f"{type(e).__name__}: {e}"}
            lines = [f"## {d}", "", f"failed: {entry['error']}"]
        results["programs"][d] = entry
        print("\n".join(lines) + "\n", flush=True)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1)
        torch.cuda.empty_cache()


def measure(d, args, torch, copy_gbps):
    """The JSON entry and the printed lines of the program directory `d`."""
    from bench_ew_chain import cuda_batch_us
    from suite import torch_inputs, torch_reference
    whole = rt.load(d)
    ins = torch_inputs(whole)
    prefix_us = prefix_times(
        whole, ins, lambda fn: statistics.median(
            cuda_batch_us(torch, fn, args.reps, 3) for _ in range(args.repeat)))
    rows = step_rows(whole.plan, prefix_us, copy_gbps)
    try:
        for row, w in zip(rows, launch_waves(whole)):
            if w:
                row["waves"] = w
    except Exception as e:  # noqa: BLE001 (the times stand without it)
        print(f"# {d}: occupancy not known: {type(e).__name__}: {e}")
    entry = {"steps": rows, "whole_batch_us": prefix_us[-1]}
    lines = table(d, rows)
    lines.append(f"\nwhole program: {prefix_us[-1]:.1f} us a call (batch of {args.reps})")
    if args.profiler:
        base = os.path.basename(os.path.normpath(d))
        try:
            entry["profiled"] = profiled_kernels(torch, lambda: whole(*ins), args.reps)
            if args.peers and "__" not in base:
                # (a workload's peer, not again for each variant)
                comp = torch.compile(torch_reference(base))
                entry["compile_profiled"] = profiled_kernels(
                    torch, lambda: comp(*ins), args.reps)
        except Exception as e:  # noqa: BLE001 (the prefix times stand)
            entry["profiler_error"] = f"{type(e).__name__}: {e}"
        for key, who in (("profiled", "kfuse"), ("compile_profiled", "torch.compile")):
            if key in entry:
                lines.append(f"\n{who} kernels (torch.profiler, us a call):")
                for n, k in sorted(entry[key].items(), key=lambda kv: -kv[1]["us"]):
                    lines.append(f"- {n[:90]}: {k['us']:.1f} "
                                 f"({k['launches_per_call']:g} a call)")
        if "profiler_error" in entry:
            lines.append(f"\nprofiler: {entry['profiler_error']}")
    return entry, lines

if __name__ == "__main__":
    main()
