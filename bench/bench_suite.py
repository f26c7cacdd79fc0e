"""Runs the workload suite (bench/suite.py) on one GPU beside torch eager and
torch.compile, from artifacts compiled elsewhere (make_artifacts.py --suite).

    python3 bench/bench_suite.py --artifacts .artifacts/suite --out results.json

Times are medians of per-call CUDA events (an event pair around each call),
over --rounds rounds of --reps calls in which kfuse, torch eager and
torch.compile take turns (bench_ew_chain.interleaved_us): a gap of a fraction
of a percent between peers is then not the GPU's drift between one
measurement and the next. Each row keeps its rounds' medians and how many
rounds kfuse was ahead of each peer. The batch columns divide the time of all
repetitions queued back to back between one event pair by their number.
Variants (name__variant, with --variants) take turns with the workload's
default program (name__tuned: kfuse.autotune's variants, the runtime's
choice made at the first call, recorded as tuned_choice and tuned_us;
`default_us`, what compare.py sets them against); their
peers are the workload's own row (--variant-peers times them too). The JSON
is rewritten after every workload, so a run cut short keeps what it measured;
a workload that fails (an exception) is recorded under "errors" and the run
goes on.
"""

import argparse
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import kfuse.runtime as rt  # noqa: E402
from bench_ew_chain import (cuda_batch_us, cuda_time_us, driver_info,  # noqa: E402
                            interleaved_us, versions)
from suite import WORKLOADS, torch_inputs, torch_reference  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=30, help="calls a round")
    ap.add_argument("--rounds", type=int, default=4,
                    help="rounds in which the peers take turns")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--variants", action="store_true",
                    help="also run the name__variant artifacts in --artifacts")
    ap.add_argument("--variant-peers", action="store_true",
                    help="with --variants: time torch eager and torch.compile for each "
                         "variant too (default: only for the workload itself)")
    args = ap.parse_args()
    import time

    import torch
    torch.manual_seed(0)
    dev = torch.device("cuda")
    # Measured copy bandwidth on a 1 GiB buffer (bytes = read + write).
    src = torch.empty(1 << 28, dtype=torch.float32, device=dev).normal_()
    dst = torch.empty_like(src)
    copy_us, _ = cuda_time_us(torch, lambda: dst.copy_(src), args.reps, 5)
    copy_bw = 2 * src.numel() * 4 / (copy_us * 1e-6)
    del src, dst
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
               "device": torch.cuda.get_device_name(), "versions": versions(torch),
               "driver": driver_info(), "copy_GBps": copy_bw / 1e9, "workloads": {}}
    print(f"# {results['device']}  copy bandwidth {copy_bw / 1e9:.0f} GB/s  {results['date']}")
    print("| workload | kfuse us | eager us | compile us | kfuse/copy BW | eager/copy | "
          "compile/copy | compile cold s | kfuse compile s | max err | kfuse batch us | "
          "compile batch us |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    names = args.only or WORKLOADS
    if args.variants:  # strategy variants compiled beside the workloads (name__...)
        names = names + sorted(d for d in os.listdir(args.artifacts) if "__" in d)
    for name in names:
        d = os.path.join(args.artifacts, name)
        if not os.path.isdir(d):
            # (a name --only asked for that make_artifacts.py did not build:
            # said, and the rest of the device call still runs)
            print(f"# {name}: no artifacts in {d}, skipped", flush=True)
            continue
        try:
            exe = rt.load(d)
            ins = torch_inputs(exe, dev)
            ref = torch_reference(name.split("__")[0])  # name__variant: same workload
            refargs = ins
            byts = sum(t.numel() * t.element_size() for t in ins) + \
                sum(s.nbytes for s in exe.plan.outputs)
            out = exe(*ins)
            expect = ref(*[t.double() if t.is_floating_point() else t for t in refargs])
            # (several outputs: the largest error of any)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            expects = expect if isinstance(expect, (tuple, list)) else (expect,)
            err = max((o.reshape(e.shape) - e.float()).abs().max().item()
                      for o, e in zip(outs, expects))
            variant = "__" in name
            timed = {"kfuse": lambda: exe(*ins)}
            base_dir = os.path.join(args.artifacts, name.split("__")[0])
            if variant and os.path.isdir(base_dir):
                # (the workload's default program takes turns with the variant)
                default = rt.load(base_dir)
                timed["default"] = lambda: default(*ins)
            if not variant or args.variant_peers:
                timed["eager"] = lambda: ref(*refargs)
                comp = torch.compile(ref)
                t0 = time.perf_counter()
                comp(*refargs)
                torch.cuda.synchronize()
                cold = time.perf_counter() - t0
                timed["compile"] = lambda: comp(*refargs)
            med, rounds = interleaved_us(torch, timed, args.reps, args.rounds, 3)
            k_us = med["kfuse"]
            # the same, queued back to back (no events between calls)
            kb_us = cuda_batch_us(torch, lambda: exe(*ins), args.reps, 3)
            if "compile" in timed:
                e_us, c_us = med["eager"], med["compile"]
                cb_us = cuda_batch_us(torch, lambda: comp(*refargs), args.reps, 3)
            else:
                base = results["workloads"].get(name.split("__")[0], {})
                e_us, c_us, cold, cb_us = (base.get(k, float("nan")) for k in
                                           ("eager_us", "compile_us", "compile_cold_s",
                                            "compile_batch_us"))
            with open(os.path.join(d, "compile_seconds.txt")) as f:
                kfuse_compile = float(f.read())
            frac = lambda us: byts / (us * 1e-6) / copy_bw  # noqa: E731
            row = {"bytes": byts, "kfuse_us": k_us, "eager_us": e_us, "compile_us": c_us,
                   "kfuse_frac": frac(k_us), "eager_frac": frac(e_us), "compile_frac": frac(c_us),
                   "compile_cold_s": cold, "kfuse_compile_s": kfuse_compile, "max_abs_err": err,
                   "kfuse_batch_us": kb_us, "compile_batch_us": cb_us}
            row["rounds_us"] = rounds
            for peer in ("eager", "compile", "default"):
                if peer in rounds:
                    row[f"ahead_of_{peer}_rounds"] = sum(
                        k < p for k, p in zip(rounds["kfuse"], rounds[peer]))
            if "default" in med:
                row["default_us"] = med["default"]
            if variant and not args.variant_peers:
                row["peers_from"] = name.split("__")[0]
            if isinstance(exe, rt.TunedExecutable):
                # (kfuse.autotune's variants: the runtime's choice on this GPU at
                # the first call, and its timings, us a call)
                row["tuned_choice"] = exe.choice
                row["tuned_us"] = {k: v * 1e6 for k, v in exe.timings.items()}
            if any(getattr(st, "persistent", 0) for st in exe.plan.steps):
                # (persistent launches: the grids the runtime chose on this GPU)
                row["grids"] = [list(g) for g in exe.launch_grids()]
            results["workloads"][name] = row
            print(f"| {name} | {k_us:.1f} | {e_us:.1f} | {c_us:.1f} | {frac(k_us):.3f} | "
                  f"{frac(e_us):.3f} | {frac(c_us):.3f} | {cold:.2f} | {kfuse_compile:.2f} | "
                  f"{err:.2e} | {kb_us:.1f} | {cb_us:.1f} |", flush=True)
            del ins, out, expect
            torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001 - one workload's failure ends only its row
            # (the rest of the device call still runs: the error goes to the
            # JSON and the log)
            import traceback
            results.setdefault("errors", {})[name] = f"{type(e).__name__}: {e}"
            print(f"# {name}: failed: {type(e).__name__}: {e}", flush=True)
            traceback.print_exc()
            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001 - a context the error broke: later rows say so
                pass
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
