"""Host time of a call: how long kfuse's CUDA runtime keeps the CPU busy per call
(GPU work queued, not waited for), and where it goes (cProfile of the calls, the
functions with the most own time).

    python3 bench/host_overhead.py .artifacts/suite/l2norm .artifacts/suite/ew_chain

With torch (the default) the inputs are torch tensors and torch.compile's host
time for the same workload is printed beside kfuse's. `--arrays cai` passes
plain CUDA arrays (`__cuda_array_interface__` over cuMemAlloc memory) and
`out=`, which needs no torch: on a machine without a GPU, run it on nullcuda,
the driver stand-in the tests use (kernels are not run; what is left is
kfuse's own host time plus cuda-bindings'):

    LD_LIBRARY_PATH=build/test/nullcuda python3 bench/host_overhead.py --arrays cai DIR...

A call whose host time exceeds its GPU time leaves the GPU idle between calls
(l2norm on an H100: ~93 us of GPU work per call, calls queued back to back 3%
slower than torch.compile's).
"""

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import kfuse.runtime as rt  # noqa: E402
from kfuse import dtypes  # noqa: E402
from kfuse.runtime import cuda as rc  # noqa: E402


class CaiArray:
    """A CUDA array known only by its `__cuda_array_interface__` (v3)."""

    def __init__(self, shape, dtype):
        cu = rc._driver()
        nbytes = max(1, int(np.prod(shape)) * np.dtype(dtype).itemsize)
        self.ptr = int(rc._check(cu.cuMemAlloc(nbytes), "allocating a benchmark array"))
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": np.dtype(dtype).str, "data": (self.ptr, False),
            "version": 3, "strides": None, "stream": None}


def host_us(call, reps, sync):
    """Median CPU time (us) of one call, the device drained between calls."""
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e6)
    sync()
    return statistics.median(times)


def profile(call, reps, top, sync):
    prof = cProfile.Profile()
    sync()
    prof.enable()
    for _ in range(reps):
        call()
    prof.disable()
    sync()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifacts", nargs="+", help="program directories (make_artifacts.py)")
    ap.add_argument("--arrays", choices=("torch", "cai"), default="torch")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--no-profile", action="store_true")
    args = ap.parse_args()
    if args.arrays == "torch":
        import torch
        from suite import torch_inputs, torch_reference
        torch.manual_seed(0)
        sync = torch.cuda.synchronize
    else:
        cu = rc._driver()
        sync = lambda: rc._check(cu.cuCtxSynchronize(), "synchronizing")  # noqa: E731
    for d in args.artifacts:
        name = os.path.basename(os.path.normpath(d))
        exe = rt.load(d)
        if args.arrays == "torch":
            ins = torch_inputs(exe)
            call = lambda: exe(*ins)  # noqa: E731
        else:
            ins = [CaiArray(s.shape, dtypes.to_numpy(s.dtype)) for s in exe.plan.inputs]
            outs = tuple(CaiArray(s.shape, dtypes.to_numpy(s.dtype)) for s in exe.plan.outputs)
            call = lambda: exe(*ins, out=outs)  # noqa: E731
        for _ in range(10):
            call()
        kfuse_us = host_us(call, args.reps, sync)
        line = f"{name} ({args.arrays}): host us per call: kfuse {kfuse_us:.1f}"
        if args.arrays == "torch":
            peer = torch.compile(torch_reference(name.split("__")[0]))
            peer(*ins)
            line += f", torch.compile {host_us(lambda: peer(*ins), args.reps, sync):.1f}"
        print(line, flush=True)
        if not args.no_profile:
            print(profile(call, args.reps, args.top, sync))
        del ins


if __name__ == "__main__":
    main()
