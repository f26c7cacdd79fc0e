"""Compile time of long programs on this host: how kfuse's compile time grows
with a program's length, so that a pass quadratic (or worse) in the size of
a group shows up here before a user meets it. No GPU needed: programs are
compiled for CUDA (sm_90, 132 SMs) and nothing runs.

    python3 bench/compile_scaling.py [--sizes chain=1000,3000 ...] [--passes]

Families (each size a program of its own):
- chain N:   y = y * a + 1, N times, over 2^16 floats (2N elementwise
             generics, one kernel);
- update P:  an optimizer's step over P parameters of different sizes
             (m = 0.9 m + g, w - 0.01 m: 3 inputs, 2 outputs each;
             multi-tensor launches);
- lamb P:    LAMB's step over P parameters of different sizes (a trust
             ratio |w| / |r| each: a one-block row kernel a parameter,
             packed into shared launches, fusion-pack-launches);
- layers L:  L pre-norm residual blocks over [256, 1024] rows,
             h = h + gelu(layernorm(h) * w + b): 2L row reductions over the
             same rows, one row kernel;
- blocks L:  L of the exported transformer block of the tests
             (test/python/programs/torch, [2, 16, 64]), each reading the one
             before: 9 launches a layer, of the same 10 kernels in all
             (fusion-dedup-kernels).
`--passes` also runs fuse-opt's whole pipeline with --mlir-timing on each
program and prints its slowest passes. With `--out F` the results are
written as JSON too.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import kfuse  # noqa: E402
from kfuse import builder as kb  # noqa: E402
from kfuse.pipeline import fuse_opt_path  # noqa: E402

DEFAULT_SIZES = {"chain": [1000, 3000], "update": [100, 400], "lamb": [100],
                 "layers": [25, 100], "blocks": [12]}


def chain(n):
    p = kb.Program(f"chain{n}")
    y = p.input("x", (1 << 16,), "f32")
    a = p.input("a", (1 << 16,), "f32")
    for _ in range(n):
        y = y * a + 1.0
    p.output(y, name="y")
    return p


def update(n):
    p = kb.Program(f"update{n}")
    for i in range(n):
        shape = (64 + i,)
        w = p.input(f"w{i}", shape, "f32")
        g = p.input(f"g{i}", shape, "f32")
        m = p.input(f"m{i}", shape, "f32")
        m2 = m * 0.9 + g
        p.output(m2, name=f"m_out{i}")
        p.output(w - m2 * 0.01, name=f"w_out{i}")
    return p


def lamb(n):
    from suite import lamb_program
    return lamb_program(f"lamb{n}", [512 + 64 * i for i in range(n)])


def layers(n):
    sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
    from _programs import norm_stack
    return norm_stack(f"layers{n}", n, 256, 1024)


def blocks(n):
    sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
    from _programs import program_text, stacked_layers
    return stacked_layers(program_text("torch/torch_transformer_block.mlir"), n)


FAMILIES = {"chain": chain, "update": update, "lamb": lamb, "layers": layers,
            "blocks": blocks}


def slowest_passes(text, top=5):
    """fuse-opt's whole CUDA pipeline on `text` with --mlir-timing: the
    `top` passes (not pipelines) with the most wall time, (seconds, name)."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        pipeline = ("builtin.module(fusion-normalize,fusion-plan,"
                    "fusion-codegen-cuda,fusion-target-cuda)")
        run = subprocess.run([fuse_opt_path(), f.name, f"--pass-pipeline={pipeline}",
                              "--mlir-timing", "-o", os.devnull],
                             capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    rows = []
    for line in run.stderr.splitlines():
        m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*)$", line)
        if m and not m.group(2).endswith("Pipeline") and m.group(2) not in ("Total", "Rest"):
            rows.append((float(m.group(1)), m.group(2).strip()))
    return sorted(rows, reverse=True)[:top]


def measure(family, size, passes=False):
    program = FAMILIES[family](size)
    text = program if isinstance(program, str) else program.to_mlir()
    t0 = time.perf_counter()
    compiled = kfuse.compile(program, target="cuda", chip="sm_90", sm_count=132)
    seconds = time.perf_counter() - t0
    # (kernels: launches; compiled: the kernels of different code they run)
    row = {"family": family, "size": size, "ops": len(text.splitlines()),
           "kernels": len(compiled.plan.steps), "compiled": len(compiled.plan.kernels),
           "compile_s": round(seconds, 3)}
    if passes:
        row["passes"] = [[round(s, 3), name] for s, name in slowest_passes(text)]
    return row


def parse_sizes(specs):
    sizes = dict(DEFAULT_SIZES)
    for spec in specs or ():
        name, _, values = spec.partition("=")
        if name not in FAMILIES or not values:
            raise SystemExit(f"compile_scaling: --sizes takes FAMILY=N[,N...] with FAMILY "
                             f"one of {', '.join(FAMILIES)}, got {spec!r}")
        sizes[name] = [int(v) for v in values.split(",")]
    return sizes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", help="FAMILY=N[,N...] (default: %s)" % " ".join(
        f"{k}={','.join(map(str, v))}" for k, v in DEFAULT_SIZES.items()))
    ap.add_argument("--only", nargs="*", choices=sorted(FAMILIES))
    ap.add_argument("--passes", action="store_true",
                    help="also each program's slowest passes (fuse-opt --mlir-timing)")
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args(argv)
    sizes = parse_sizes(args.sizes)
    rows = []
    print("| program | size | lines of MLIR | launches | kernels compiled | compile (s) |" +
          (" slowest passes (s) |" if args.passes else ""))
    print("|---|---:|---:|---:|---:|---:|" + ("---|" if args.passes else ""))
    for family in args.only or FAMILIES:
        for size in sizes[family]:
            row = measure(family, size, args.passes)
            rows.append(row)
            extra = ""
            if args.passes:
                extra = " " + ", ".join(f"{n} {s}" for s, n in row["passes"]) + " |"
            print(f"| {family} | {size} | {row['ops']} | {row['kernels']} | "
                  f"{row['compiled']} | {row['compile_s']:.2f} |{extra}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"host": os.uname().nodename, "cpus": os.cpu_count(), "rows": rows},
                      f, indent=1)
    return rows


if __name__ == "__main__":
    main()
