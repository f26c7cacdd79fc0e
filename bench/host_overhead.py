"""Host time of a call: how long kfuse's CUDA runtime keeps the CPU busy per call
(GPU work queued, not waited for), beside torch.compile's for the same workload,
and where kfuse's goes (cProfile of 200 calls, the functions with the most own
time).

    python3 bench/host_overhead.py .artifacts/suite/l2norm .artifacts/suite/ew_chain

A call whose host time exceeds its GPU time leaves the GPU idle between calls
(l2norm on an H100: ~93 us of GPU work per call, calls queued back to back 3%
slower than torch.compile's).
"""

import argparse
import cProfile
import io
import os
import pstats
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import kfuse.runtime as rt  # noqa: E402
from bench_ew_chain import host_call_us  # noqa: E402
from suite import torch_inputs, torch_reference  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifacts", nargs="+", help="suite directories from make_artifacts.py")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    import torch
    torch.manual_seed(0)
    for d in args.artifacts:
        name = os.path.basename(os.path.normpath(d))
        exe = rt.load(d)
        ins = torch_inputs(exe)
        call = lambda: exe(*ins)  # noqa: E731
        call()
        kfuse_us = host_call_us(torch, call, args.reps)
        peer = torch.compile(torch_reference(name.split("__")[0]))
        peer(*ins)
        compile_us = host_call_us(torch, lambda: peer(*ins), args.reps)
        print(f"{name}: host us per call: kfuse {kfuse_us:.1f}, torch.compile "
              f"{compile_us:.1f}")
        prof = cProfile.Profile()
        torch.cuda.synchronize()
        prof.enable()
        for _ in range(args.reps):
            call()
        prof.disable()
        torch.cuda.synchronize()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(args.top)
        print(text.getvalue())
        del ins
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
