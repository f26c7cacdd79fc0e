"""The machine code (SASS) of compiled CUDA programs' loops, without a GPU.

    python3 bench/sass_loops.py DIR... [--chip sm_90] [--top 6] [--all]

Each DIR is a saved CUDA program (kernels.ptx and plan.json, as
`make_artifacts.py` writes them). Its PTX is assembled by ptxas for the
plan's chip (or --chip) and disassembled by nvdisasm; for every kernel this
prints each innermost loop (a backward branch whose range holds no other):
its SASS instructions, the global bytes a thread loads and stores in one
iteration (LDG/STG, by their widths; predicated ones counted as if they
ran; NOPs not), SASS warp-instructions per 128 B of that traffic (4 x instructions /
bytes: a warp's iteration moves 32 x bytes), and its most frequent opcodes.
`--all` prints loops without global traffic too (a block's reductions). A
kernel none of whose loops moves global memory (its chunks unrolled) gets
one line for its whole code instead, each instruction counted once.

This is what bench/issue_counts.py measures on PTX, after ptxas: PTX
instructions that ptxas folds (64-bit address arithmetic, packing moves)
drop out, and the ones it expands (a non-flushing ex2.approx's denormal
range test, 64-bit compares) show. Static and per iteration: no trip
counts, no blocks' reductions or epilogues; compare loops with it, and
whole kernels with issue_counts.py.

Needs ptxas (found as kernel_times.py finds it) and nvdisasm: $NVDISASM,
on PATH, or from the `nvidia-cuda-nvdisasm` wheel (`.venv/bin/pip install
nvidia-cuda-nvdisasm`: its nvidia/cu*/bin/nvdisasm is found in the
interpreter's site-packages).
"""

import argparse
import collections
import glob
import json
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile

LABEL = re.compile(r"^\s*(\.L_x_\d+):\s*$")
INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*$")
BRANCH = re.compile(r"\bBRA\b.*`\((\.L_x_\d+)\)")
FUNC = re.compile(r"^\.text\.(\S+):\s*$")
# (a global access's width from its type suffix; plain .E is 32 bits)
WIDTHS = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}


def find_nvdisasm():
    """nvdisasm's path, or None."""
    env = os.environ.get("NVDISASM")
    if env:
        return env
    found = shutil.which("nvdisasm")
    if found:
        return found
    roots = list(site.getsitepackages()) + [site.getusersitepackages()]
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "nvidia", "cu*", "bin", "nvdisasm"))):
            if os.access(path, os.X_OK):
                return path
    return None


def find_ptxas():
    """ptxas on the PATH, else CUDA's usual place (which may not exist: the
    caller checks)."""
    return shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"


def run_ptxas(ptx_text, chip="sm_90", verbose=False, ptxas=None):
    """Assembles PTX text for `chip` (the object discarded): the finished
    subprocess, whose stderr holds ptxas's errors or, with `verbose` (-v),
    each kernel's registers, spills and shared memory. The caller checks its
    returncode."""
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as fh:
        fh.write(ptx_text)
    try:
        return subprocess.run([ptxas or find_ptxas(), f"-arch={chip}"]
                              + (["-v"] if verbose else []) + [fh.name, "-o", os.devnull],
                              capture_output=True, text=True)
    finally:
        os.remove(fh.name)


def access_bytes(op):
    """Bytes a thread moves with global load/store opcode `op` (LDG.E.128
    and so on), 0 for any other."""
    parts = op.split(".")
    if parts[0] not in ("LDG", "STG"):
        return 0
    for p in parts[1:]:
        if p in WIDTHS:
            return WIDTHS[p]
    return 4


def parse_sass(text):
    """{kernel: [(address, opcode, text)...], labels {name: address}} from
    `nvdisasm -c` output."""
    kernels = {}
    current = None
    pending = []
    for line in text.splitlines():
        m = FUNC.match(line.strip())
        if m:
            current = kernels.setdefault(m.group(1), {"insns": [], "labels": {}})
            pending = []
            continue
        if current is None:
            continue
        m = LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSN.match(line)
        if m:
            addr = int(m.group(1), 16)
            body = m.group(2)
            for name in pending:
                current["labels"][name] = addr
            pending = []
            # (a guard predicate first: @P0, @!PT)
            words = body.split()
            op = words[1] if words and words[0].startswith("@") and len(words) > 1 else (
                words[0] if words else "")
            current["insns"].append((addr, op, body))
    return kernels


def innermost_loops(kernel):
    """(start, end) address ranges of the kernel's innermost loops: a
    backward branch to an earlier label whose range contains no other such
    branch's range."""
    labels = kernel["labels"]
    loops = []
    for addr, op, body in kernel["insns"]:
        m = BRANCH.search(body)
        if not m or m.group(1) not in labels:
            continue
        target = labels[m.group(1)]
        if target < addr:  # (not the self-branch that ends a kernel's code)
            loops.append((target, addr))
    return [(s, e) for s, e in loops
            if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for s2, e2 in loops)]


def loop_stats(kernel, start, end):
    # (NOPs: the padding after a kernel's last instruction, not issued)
    insns = [(a, op, b) for a, op, b in kernel["insns"]
             if start <= a <= end and op != "NOP"]
    loads = sum(access_bytes(op) for _, op, _ in insns if op.startswith("LDG"))
    stores = sum(access_bytes(op) for _, op, _ in insns if op.startswith("STG"))
    ops = collections.Counter(op.split(".")[0] for _, op, _ in insns)
    moved = loads + stores
    return {"start": start, "end": end, "insns": len(insns), "load_bytes": loads,
            "store_bytes": stores,
            "per_128B": round(4 * len(insns) / moved, 2) if moved else None,
            "opcodes": ops.most_common()}


def analyze(directory, chip=None, nvdisasm=None, ptxas=None):
    """{kernel: {"insns": n, "loops": [loop_stats...]}} for the saved program
    in `directory`."""
    with open(os.path.join(directory, "plan.json")) as f:
        plan = json.load(f)
    chip = chip or plan.get("chip") or "sm_90"
    ptx = os.path.join(directory, plan.get("ptx") or "kernels.ptx")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "k.cubin")
        subprocess.run([ptxas or find_ptxas(), f"-arch={chip}", ptx, "-o", cubin],
                       check=True, capture_output=True, text=True)
        sass = subprocess.run([nvdisasm, "-c", cubin], check=True, capture_output=True,
                              text=True).stdout
    out = {}
    for name, kernel in parse_sass(sass).items():
        loops = [loop_stats(kernel, s, e) for s, e in innermost_loops(kernel)]
        whole = None
        if not any(loop["load_bytes"] or loop["store_bytes"] for loop in loops):
            # (no loop moves global memory: chunks unrolled, each instruction
            # runs once a thread but for branches; the whole kernel instead)
            insns = kernel["insns"]
            whole = loop_stats(kernel, insns[0][0], insns[-1][0]) if insns else None
        out[name] = {"insns": len(kernel["insns"]), "loops": loops, "whole": whole}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", help="saved CUDA programs (plan.json + kernels.ptx)")
    ap.add_argument("--chip", default=None, help="ptxas's -arch (default: the plan's)")
    ap.add_argument("--top", type=int, default=6, help="opcodes shown a loop")
    ap.add_argument("--all", action="store_true", help="loops without global traffic too")
    ap.add_argument("--json", default=None, help="also write the results as JSON here")
    args = ap.parse_args(argv)
    nvdisasm = find_nvdisasm()
    if nvdisasm is None:
        sys.exit("sass_loops: nvdisasm not found: set $NVDISASM, put it on PATH, or "
                 "`.venv/bin/pip install nvidia-cuda-nvdisasm`")
    print("| program | kernel | loop | SASS | loads B | stores B | warp-insts / 128 B | "
          "most frequent |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    results = {}
    for d in args.dirs:
        name = os.path.basename(os.path.normpath(d))
        try:
            results[name] = res = analyze(d, args.chip, nvdisasm)
        except (OSError, subprocess.CalledProcessError) as e:
            detail = getattr(e, "stderr", "") or str(e)
            print(f"| {name} | | could not assemble or disassemble: {detail.strip()[:200]} "
                  f"| | | | | |")
            continue
        for kernel, k in res.items():
            rows = [(f"{loop['start']:#06x}-{loop['end']:#06x}", loop) for loop in k["loops"]
                    if args.all or loop["load_bytes"] or loop["store_bytes"]]
            if k["whole"]:
                rows.append(("whole kernel, no loop", k["whole"]))
            for where, loop in rows:
                ops = ", ".join(f"{op} {n}" for op, n in loop["opcodes"][:args.top])
                per = "" if loop["per_128B"] is None else f"{loop['per_128B']:.2f}"
                print(f"| {name} | {kernel} | {where} | {loop['insns']} | "
                      f"{loop['load_bytes']} | {loop['store_bytes']} | {per} | {ops} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
