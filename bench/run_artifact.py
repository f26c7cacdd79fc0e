"""Runs compiled artifacts on random torch inputs, for a profiler to watch.

    ncu --nvtx --nvtx-include "run/" python3 bench/run_artifact.py .artifacts/suite/softmax

Inputs: f32 normal values; i64 inputs are class labels below the first
input's last dimension (as bench_suite.py draws them). Each run sits in an
NVTX range "run" (input set-up outside it). With --peer compile (or eager)
the suite workload's torch definition runs on the same inputs too (a
directory named like a suite workload, name__variant for variants).
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

sys.path.insert(0, HERE)

import kfuse.runtime as rt  # noqa: E402
from suite import torch_inputs, torch_reference  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifacts", nargs="+", help="directories written by make_artifacts.py")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--peer", choices=("compile", "eager"), default=None)
    args = ap.parse_args()
    import torch
    torch.manual_seed(0)
    for d in args.artifacts:
        exe = rt.load(d)
        ins = torch_inputs(exe)
        fns = [exe]
        if args.peer:
            ref = torch_reference(os.path.basename(os.path.normpath(d)).split("__")[0])
            peer = torch.compile(ref) if args.peer == "compile" else ref
            peer(*ins)  # (compiles outside the range)
            torch.cuda.synchronize()
            fns.append(peer)
        for fn in fns:
            for _ in range(args.reps):
                torch.cuda.nvtx.range_push("run")
                fn(*ins)
                torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        print(f"{d}: ran {args.reps} time(s)")
        del ins
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
