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
from kfuse.runtime.ptx import cluster_shapes  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifacts", nargs="+", help="program directories (make_artifacts.py)")
    args = ap.parse_args()
    header = False
    for d in args.artifacts:
        exe = rt.load(d)
        exe.warmup(0)
        st = exe._state(0)
        if not header:
            print("| program | kernel | cluster | threads | registers | clusters at once | "
                  f"SMs busy (of {st.sm_count()}) | persistent: launched / planned |")
            print("|---|---|---:|---:|---:|---:|---:|---:|")
            header = True
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
            name = os.path.basename(os.path.normpath(d))
            if size == 1:       # (no clusters: a block-per-row kernel)
                if step.persistent:
                    print(f"| {name} | {step.kernel} | 1 | {step.block[0]} | | | | {ran} |",
                          flush=True)
                continue
            with st.current():
                # (the runtime's own queries, as its persistent launches ask)
                n = st.resident(step, size) or 0
                regs = st.registers(step.kernel)
                per_sm = st.blocks_per_sm(step)
                sms = st.sm_count()
            threads = step.block[0] * step.block[1] * step.block[2]
            busy = min(sms, -(-n * size // per_sm)) if per_sm else 0
            print(f"| {name} | {step.kernel} | {size} | {threads} | {regs} | {n} | {busy} | "
                  f"{ran} |", flush=True)


if __name__ == "__main__":
    main()
