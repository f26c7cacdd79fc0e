"""What kfuse's CUDA kernels issue per byte they move, on this host: a model
of a kernel's cost, for work on the kernels without a GPU. No GPU needed:
each workload of the suite (bench/suite.py) is compiled for CUDA at its full
size and each launch runs in the PTX emulator on a sample of its blocks
(`EmulatedExecutable.profile`: whole clusters drawn from the grid), which
counts the PTX warp-instructions the sampled warps issue and the 32-byte
sectors their global accesses touch.

    python3 bench/issue_counts.py [WORKLOAD[:option=value,...] | DIR ...]
                                  [--blocks 64] [--chip sm_90] [--out F]
                                  [--bandwidth GBPS --sms N --clock GHZ]

A DIR is a saved CUDA program (make_artifacts.py's, or an older commit's:
compare the two) profiled as it is.

For each workload: PTX warp-instructions per 128 bytes of sectors (a warp's
32 floats), sectors per byte asked for (above 1: accesses that straddle
sectors; below 1: threads sharing one, a broadcast), and the opcodes that
issue most. With `--bandwidth` (the device's measured copy bandwidth) the
issue slots a streaming kernel has per 128 bytes at that bandwidth:
`sms * clock * 4 * 128 / bandwidth` (4 warp-instructions a clock an SM) --
past about two thirds of them a kernel is likely bound by issue rather than
by memory.

What it does not say: PTX is not the SASS ptxas makes (moves vanish,
divisions and some conversions become several instructions; a kernel's
parameters, which LLVM loads and converts all at the kernel's entry,
`ld.param` and `cvta.to.global`, ptxas reads from the constant bank in the
branch that uses them: 21.3 of lamb_bert_vectors' 25.6 a 128 B, whose
packed launches pick 4 of 228 buffers a block, are 4 ULDC a block), sampled
blocks stand for the rest, and latency, occupancy and the memory system are
not modelled. Compare counts between versions of one kernel, and check
speed on a GPU (bench/bench_suite.py).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import kfuse  # noqa: E402

import suite  # noqa: E402
from mutate_programs import plan_inputs  # noqa: E402


HOT_KEPT = 40   # statements kept a workload, those issued most


def _parse_options(text):
    """`a=1,b=true` -> {"a": 1, "b": True} (ints, floats, booleans, else text)."""
    opts = {}
    for item in filter(None, text.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"issue_counts: option {item!r} is not key=value")
        low = value.lower()
        if low in ("true", "false"):
            opts[key] = low == "true"
            continue
        for conv in (int, float):
            try:
                opts[key] = conv(value)
                break
            except ValueError:
                pass
        else:
            opts[key] = value
    return opts


def count(program, blocks=64, chip="sm_90", seed=0, **options):
    """One workload: compiled, profiled; its totals over the whole grids
    (each launch's sampled counts scaled to its grid) and its launches."""
    f = kfuse.compile(program, target="cuda", chip=chip, **options)
    return profile(f.emulator, blocks, seed)


def profile(emulator, blocks=64, seed=0):
    """count() of a program already compiled (an EmulatedExecutable)."""
    ins = plan_inputs(emulator.plan.inputs, np.random.default_rng(seed))
    start = time.perf_counter()
    stats = emulator.profile(*ins, blocks=blocks)
    seconds = time.perf_counter() - start
    issued = sectors = asked = 0.0
    by_op, by_statement = {}, {}
    for st in stats:
        ran, grid = st["sampled"]
        scale = grid / ran if ran else 0.0
        issued += st["issued"]["warp_instructions"] * scale
        sectors += (st["load"]["sectors"] + st["store"]["sectors"]) * 32 * scale
        asked += (st["load"]["bytes"] + st["store"]["bytes"]) * scale
        for op, n in st["issued"]["by_op"].items():
            by_op[op] = by_op.get(op, 0.0) + n * scale
        text = {s.line: s.text for s in emulator.programs[st["kernel"]].kernel.body}
        for line, n in st["issued"]["by_line"].items():
            key = (st["kernel"], line, text[line])
            by_statement[key] = by_statement.get(key, 0.0) + n * scale
    hot = sorted(by_statement.items(), key=lambda kv: -kv[1])[:HOT_KEPT]
    return {
        "launches": len(stats),
        "warp_instructions": issued,
        "sector_bytes": sectors,
        "asked_bytes": asked,
        "per_128B": issued * 128 / sectors if sectors else float("nan"),
        "sectors_per_byte": sectors / asked if asked else float("nan"),
        "by_op_per_128B": {op: n * 128 / sectors if sectors else float("nan")
                           for op, n in sorted(by_op.items(), key=lambda kv: -kv[1])},
        "hot_statements": [
            {"kernel": k, "line": line, "ptx": ptx,
             "per_128B": n * 128 / sectors if sectors else float("nan")}
            for (k, line, ptx), n in hot],
        "profile_s": seconds,
    }


def issue_slots(bandwidth_gbps, sms, clock_ghz):
    """Warp-instruction issue slots a device has per 128 bytes moved at
    `bandwidth_gbps` (4 a clock an SM)."""
    return sms * clock_ghz * 1e9 * 4 * 128 / (bandwidth_gbps * 1e9)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workloads", nargs="*",
                    help="suite workloads, each perhaps with compile options "
                         "(softmax_xent_v50257:row_trip=16), or saved CUDA "
                         "programs' directories; default: every workload")
    ap.add_argument("--blocks", type=int, default=64,
                    help="blocks of each launch to run (default 64)")
    ap.add_argument("--chip", default="sm_90")
    ap.add_argument("--bandwidth", type=float,
                    help="copy bandwidth in GB/s, for the issue slots per 128 B")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--clock", type=float, default=1.98, help="SM clock in GHz")
    ap.add_argument("--top", type=int, default=6, help="opcodes listed a workload")
    ap.add_argument("--hot", type=int, default=0,
                    help="also list the PTX statements issued most a workload, "
                         f"up to {HOT_KEPT} (kernel, line, per 128 B)")
    ap.add_argument("--out", help="write the results as JSON too")
    args = ap.parse_args(argv)
    if args.blocks < 1:
        raise SystemExit(f"issue_counts: --blocks must be positive, not {args.blocks}")
    programs = suite.programs()
    picked = args.workloads or list(programs)
    slots = issue_slots(args.bandwidth, args.sms, args.clock) if args.bandwidth else None
    print("| workload | launches | warp-insts / 128 B | sectors / byte | most issued (per 128 B) |")
    print("|---|---:|---:|---:|---|")
    rows, hot = [], []
    for item in picked:
        if os.path.isdir(item):
            r = profile(kfuse.runtime.load_emulated(item), blocks=args.blocks)
            r.update(workload=item, options={})
        else:
            name, _, text = item.partition(":")
            if name not in programs:
                raise SystemExit(f"issue_counts: no workload {name!r}; the suite has "
                                 f"{', '.join(programs)}")
            options = _parse_options(text)
            r = count(programs[name], blocks=args.blocks, chip=args.chip, **options)
            r.update(workload=name, options=options)
        rows.append(r)
        top = ", ".join(f"{op} {n:.2f}" for op, n in
                        list(r["by_op_per_128B"].items())[:args.top])
        print(f"| {item} | {r['launches']} | {r['per_128B']:.2f} | "
              f"{r['sectors_per_byte']:.3f} | {top} |", flush=True)
        hot.extend((item, h) for h in r["hot_statements"][:args.hot])
    if hot:
        print("\n| workload | kernel | PTX line | per 128 B | statement |")
        print("|---|---|---:|---:|---|")
        for item, h in hot:
            print(f"| {item} | {h['kernel']} | {h['line']} | {h['per_128B']:.3f} | "
                  f"`{h['ptx']}` |")
    if slots is not None:
        print(f"\nissue slots per 128 B at {args.bandwidth:.0f} GB/s "
              f"({args.sms} SMs at {args.clock} GHz): {slots:.1f}")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"chip": args.chip, "blocks": args.blocks,
                       "issue_slots_per_128B": slots, "rows": rows}, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
