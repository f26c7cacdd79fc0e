"""Command line.

    python -m kfuse demo [--target cpu|cuda|auto] [--size N]
    python -m kfuse compile FILE.mlir [--target ...] [--chip sm_90] [-o DIR]
    python -m kfuse tune FILE.mlir [--chip sm_90] [-o DIR] [--variant row_chunks=0 ...]
                                   [--pairs]

The demo builds three programs with the builder (an elementwise chain, a
bias + gelu with two outputs in f16, a row softmax), compiles them for
the default target (CUDA when a GPU is present, else the CPU), prints the
fusion report, runs them and checks the results against numpy; then it
compiles a PyTorch transformer block exported by torch-mlir and checks it
against PyTorch's output. Without a GPU it also compiles the three programs
for CUDA (sm_90) and runs their PTX, at a small size, in kfuse's PTX
emulator. Last, kfuse.autotune compiles the softmax's variants: with a GPU
it times them and keeps the fastest, without one it runs each in the
emulator."""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def _demo_programs(n: int):
    from . import builder as kb
    softplus = kb.Program("softplus")
    x = softplus.input("x", (n,), "f32")
    softplus.output(kb.log(kb.exp(x) + 1.0), name="y")

    rows = max(1, n // 1024)
    bias_gelu = kb.Program("bias_gelu_f16")
    a = bias_gelu.input("x", (rows, 1024), "f16")
    b = bias_gelu.input("bias", (1024,), "f16")
    t = a + b
    bias_gelu.output(kb.gelu(t), name="y")
    bias_gelu.output(kb.sigmoid(t) * 2.0, name="gate")

    softmax = kb.Program("softmax_rows")
    z = softmax.input("x", (rows, 1024), "f32")
    e = kb.exp(z - z.max(axis=-1, keepdims=True))
    softmax.output(e / e.sum(axis=-1, keepdims=True), name="y")
    return [softplus, bias_gelu, softmax]


def demo(target: str, n: int) -> int:
    import kfuse
    from kfuse import dtypes
    rng = np.random.default_rng(0)
    ok = True
    for prog in _demo_programs(n):
        t0 = time.perf_counter()
        compiled = kfuse.compile(prog, target=target)
        dt = time.perf_counter() - t0
        print(f"== {prog.name}: compiled for {compiled.target} in {dt:.2f} s")
        print(compiled.report)
        args = [rng.standard_normal(shape).astype(dtypes.to_numpy(dtype))
                for _, shape, dtype in prog.inputs]
        got = compiled(*args)
        got = got if isinstance(got, tuple) else (got,)
        want = prog.reference(*args)
        for (name, _, dtype), g, w in zip(prog.outputs, got, want):
            tol = 1e-5 if dtype.name == "f32" else 2e-3
            err = float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)) /
                               (1.0 + np.abs(w.astype(np.float64)))))
            good = err <= tol
            ok &= good
            print(f"  check {name} vs numpy: max relative error {err:.2e} "
                  f"(tolerance {tol:g}) {'OK' if good else 'FAIL'}")
    ok &= _demo_transformer_block(target)
    if compiled.target == "cpu":
        ok &= _demo_emulated(min(n, 1 << 14))
    ok &= _demo_autotune(compiled.target == "cuda", n)
    print("demo passed" if ok else "demo FAILED")
    return 0 if ok else 1


def _demo_emulated(n: int) -> bool:
    """The demo programs' CUDA kernels, run by the PTX emulator (no GPU)."""
    import kfuse
    from kfuse import dtypes
    rng = np.random.default_rng(1)
    ok = True
    print(f"== the same programs for CUDA (sm_90), {n} elements, in the PTX emulator:")
    for prog in _demo_programs(n):
        compiled = kfuse.compile(prog, target="cuda", chip="sm_90")
        args = [rng.standard_normal(shape).astype(dtypes.to_numpy(dtype))
                for _, shape, dtype in prog.inputs]
        t0 = time.perf_counter()
        got = compiled.emulate(*args)
        dt = time.perf_counter() - t0
        got = got if isinstance(got, tuple) else (got,)
        err = 0.0
        for (_, _, dtype), g, w in zip(prog.outputs, got, prog.reference(*args)):
            w = w.astype(np.float64)
            err = max(err, float(np.max(np.abs(g.astype(np.float64) - w) / (1.0 + np.abs(w)))))
        tol = 2e-3 if any(dt_.name != "f32" for _, _, dt_ in prog.outputs) else 1e-5
        good = err <= tol
        ok &= good
        launches = compiled.emulator.last_stats
        print(f"  {prog.name}: {len(launches)} kernel(s), emulated in {dt:.2f} s, max "
              f"relative error {err:.2e} (tolerance {tol:g}) {'OK' if good else 'FAIL'}")
    return ok


def _demo_autotune(gpu: bool, n: int) -> bool:
    """kfuse.autotune on the row softmax: its variants compiled for CUDA; with
    a GPU, timed on it and the fastest kept; without, each run in the PTX
    emulator at a small size and checked."""
    import kfuse
    prog = _demo_programs(n if gpu else min(n, 1 << 12))[2]
    t0 = time.perf_counter()
    tuned = kfuse.autotune(prog) if gpu else kfuse.autotune(prog, chip="sm_90")
    dt = time.perf_counter() - t0
    print(f"== {prog.name} under kfuse.autotune: {len(tuned.labels)} variants of "
          f"distinct code ({', '.join(tuned.labels)}), compiled in {dt:.2f} s")
    x = np.random.default_rng(2).standard_normal(prog.inputs[0][1]).astype(np.float32)
    want = prog.reference(x)[0]
    if gpu:
        got = tuned(x)
        timings = ", ".join(f"{label} {s * 1e6:.1f} us" for label, s in tuned.timings.items())
        print(f"  timed on this GPU (a call, host arrays copied in and out): {timings}; "
              f"kept {tuned.choice}")
        results = {tuned.choice: got}
    else:
        results = {label: c.emulate(x) for label, c in tuned.variants.items()}
    ok = True
    for label, got in results.items():
        err = float(np.max(np.abs(got - want)))
        good = err <= 1e-5
        ok &= good
        print(f"  {label}: max abs error {err:.2e} (tolerance 1e-05) "
              f"{'OK' if good else 'FAIL'}")
    return ok


# A PyTorch transformer block exported by torch-mlir, with PyTorch's output
# (in the repository's test programs; skipped where they are not present).
_TORCH_BLOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                            "test", "python", "programs", "torch",
                            "torch_transformer_block")


def _demo_transformer_block(target: str) -> bool:
    import kfuse
    if not os.path.exists(_TORCH_BLOCK + ".mlir"):
        return True
    with open(_TORCH_BLOCK + ".mlir") as f:
        text = f.read()
    t0 = time.perf_counter()
    compiled = kfuse.compile(text, target=target)
    dt = time.perf_counter() - t0
    r = compiled.report
    print(f"== torch_transformer_block (torch-mlir export): compiled for "
          f"{compiled.target} in {dt:.2f} s: {r.before.kernels} ops -> "
          f"{r.after.kernels} kernels, HBM traffic {r.before.bytes / 1e6:.3f} MB -> "
          f"{r.after.bytes / 1e6:.3f} MB")
    data = np.load(_TORCH_BLOCK + ".npz")
    got = compiled(data["in0"])
    err = float(np.max(np.abs(got - data["expected0"])))
    good = err <= 1e-4
    print(f"  check vs PyTorch: max abs error {err:.2e} (tolerance 1e-4) "
          f"{'OK' if good else 'FAIL'}")
    return good


def strategy_value(text: str):
    """An option value as `--set` takes it: an integer, true/false, none, or
    else the word itself (row_persist=auto, row_exchange=barrier)."""
    word = text.strip().lower()
    if word in ("true", "false"):
        return word == "true"
    if word == "none":
        return None
    try:
        return int(text, 0)
    except ValueError:
        return text.strip()


def parse_strategy(pairs, flag: str = "--set") -> dict:
    """`--set NAME=VALUE` pairs as kfuse.compile's keyword options (`flag`
    names the option they came from in messages)."""
    from .errors import CompileError
    options = {}
    for pair in pairs or ():
        name, eq, value = pair.partition("=")
        if not eq or not name.strip():
            raise CompileError(f"{flag} takes NAME=VALUE (e.g. row_chunks=8), got {pair!r}")
        options[name.strip()] = strategy_value(value)
    return options


def _read_mlir(path: str):
    """The text of `path`, or None once the reason it cannot be read is printed."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        print(f"kfuse: error: cannot read {path}: {e.strerror}", file=sys.stderr)
    except UnicodeDecodeError as e:
        print(f"kfuse: error: {path} is not MLIR text: byte 0x{e.object[e.start]:02x} at "
              f"offset {e.start} is not UTF-8", file=sys.stderr)
    return None


def compile_file(path: str, target: str, chip, out, numerics: str = "fast",
                 strategy=None) -> int:
    import kfuse
    text = _read_mlir(path)
    if text is None:
        return 1
    compiled = kfuse.compile(text, target=target, chip=chip, filename=path,
                             numerics=numerics, **(strategy or {}))
    print(compiled.report)
    if out:
        compiled.save(out)
        print(f"saved to {out}")
    return 0


def tune_file(path: str, chip, out, numerics: str = "fast", strategy=None,
              variants=None, pairs: bool = False) -> int:
    """kfuse.autotune on an .mlir file: prints the variants kept and dropped
    (`variants`: lists of --set pairs, each a variant; None: kfuse's)."""
    import kfuse
    text = _read_mlir(path)
    if text is None:
        return 1
    tuned = kfuse.autotune(text, chip=chip, filename=path, numerics=numerics,
                           variants=None if variants is None else
                           [parse_strategy(v.split(","), "--variant") for v in variants],
                           pairs=pairs, **(strategy or {}))
    print(tuned.summary())
    if out:
        tuned.save(out)
        print(f"saved to {out} (kfuse.runtime.load times the variants at the first call)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="kfuse")
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="compile, run and check three demo programs")
    d.add_argument("--target", default="auto", choices=["auto", "cpu", "cuda"])
    d.add_argument("--size", type=int, default=1 << 20, help="elements per program")
    c = sub.add_parser("compile", help="compile an .mlir file, print its fusion report")
    c.add_argument("file")
    c.add_argument("--target", default="auto", choices=["auto", "cpu", "cuda"])
    c.add_argument("--chip", default=None, help="CUDA chip, e.g. sm_90")
    c.add_argument("-o", "--out", default=None, help="directory to save the program to")
    c.add_argument("--numerics", default="fast", choices=["fast", "strict"])
    c.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a strategy option of kfuse.compile (row_chunks=8, "
                        "row_persist=auto, pdl=false; repeatable); the report names "
                        "those that change nothing")
    t = sub.add_parser("tune", help="compile an .mlir file for CUDA under several "
                                     "strategies (kfuse.autotune), print the variants")
    t.add_argument("file")
    t.add_argument("--chip", default=None, help="CUDA chip, e.g. sm_90")
    t.add_argument("-o", "--out", default=None,
                   help="directory to save the variants and tuning.json to")
    t.add_argument("--numerics", default="fast", choices=["fast", "strict"])
    t.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a strategy option every variant takes (repeatable)")
    t.add_argument("--variant", action="append", default=None, metavar="NAME=VALUE[,...]",
                   help="a variant to try, its options comma-separated (repeatable; "
                        "default: kfuse's, one option at a time)")
    t.add_argument("--pairs", action="store_true",
                   help="also each pair of the variants kept, their options together")
    args = parser.parse_args(argv)
    from .errors import KfuseError
    try:
        if args.cmd == "compile":
            return compile_file(args.file, args.target, args.chip, args.out,
                                args.numerics, parse_strategy(args.set))
        if args.cmd == "tune":
            return tune_file(args.file, args.chip, args.out, args.numerics,
                             parse_strategy(args.set), args.variant, args.pairs)
        return demo(args.target, args.size)
    except KfuseError as e:
        print(f"kfuse: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
