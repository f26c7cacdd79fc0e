"""How many thread-block clusters of each cluster kernel the GPU holds at once
(cuOccupancyMaxActiveClusters), and so how many of its SMs they keep busy.

    python3 bench/cluster_occupancy.py .artifacts/suite/occupancy_*

The 262144-wide softmax runs in clusters of 8 blocks of 1024 threads, one
block an SM: an H100 was measured holding 15 such clusters (120 of 132 SMs),
since a cluster's blocks must share a GPC. The occupancy_* programs are
softmaxes whose rows take clusters of 2, 4, 8 and 16 blocks with the same
blocks (1024 threads x 8 vectors; 16: 512 threads): whether smaller clusters
(a row kept in registers and shared memory) would use more SMs.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import kfuse.runtime as rt  # noqa: E402
from kfuse.runtime import cuda as rc  # noqa: E402
from kfuse.runtime.ptx import cluster_shapes  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifacts", nargs="+", help="program directories (make_artifacts.py)")
    args = ap.parse_args()
    cu = rc._driver()
    dev = rc._check(cu.cuDeviceGet(0), "getting device 0")
    sms = rc._check(cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "counting SMs")
    print("| program | kernel | cluster | threads | registers | clusters at once | "
          f"SMs busy (of {sms}) | persistent: launched / planned |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for d in args.artifacts:
        exe = rt.load(d)
        exe.warmup(0)
        st = exe._state(0)
        shapes = cluster_shapes(exe.ptx)
        launches = [s for s in exe.plan.steps if s.op == "launch"]
        # (the grids the runtime launches: persistent kernels cut to what fits)
        grids = dict(zip((id(s) for s in launches), exe.launch_grids(0)))
        for step in launches:
            if step.kernel not in shapes:
                continue
            cx, cy, cz = shapes[step.kernel]
            size = cx * cy * cz
            ran = (f"{grids[id(step)][0] // step.cluster_blocks} / {step.persistent}"
                   if step.persistent else "-")
            if size == 1:       # (no clusters: a block-per-row kernel)
                if step.persistent:
                    print(f"| {os.path.basename(os.path.normpath(d))} | {step.kernel} | 1 | "
                          f"{step.block[0]} | | | | {ran} |", flush=True)
                continue
            cfg = rc._launch_config(step.grid, step.block, step.smem)
            fn = st.functions[step.kernel]
            with st.current():
                n = rc._check(cu.cuOccupancyMaxActiveClusters(fn, cfg),
                              f"querying the cluster occupancy of {step.kernel!r}")
                regs = rc._check(cu.cuFuncGetAttribute(
                    cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, fn),
                    f"reading the registers of {step.kernel!r}")
                threads = step.block[0] * step.block[1] * step.block[2]
                per_sm = rc._check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    fn, threads, step.smem), f"querying the occupancy of {step.kernel!r}")
            print(f"| {os.path.basename(os.path.normpath(d))} | {step.kernel} | {size} | "
                  f"{threads} | {regs} | {n} | {min(sms, -(-n * size // per_sm))} | {ran} |",
                  flush=True)


if __name__ == "__main__":
    main()
