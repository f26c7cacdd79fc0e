"""Mutated MLIR programs: does kfuse refuse bad input with its own error, and
compute the right answer on what it takes?

Each seed takes one of the MLIR test programs (test/python/programs, the
torch-mlir exports included) and changes it once or twice, as a user's typo
or a front end's bug would: a dimension everywhere or in one place, f32 to
another float type, a loop's iterator type, the order of an indexing map's
results, an arith op for another, a line deleted, a constant, the operands of
a subtraction or comparison. A child process then compiles the result for
the CPU (fused and unfused) and for CUDA (sm_90), runs both CPU programs on
the same inputs (the program's recorded inputs where they still fit), and
runs the CUDA program in the PTX emulator. Outcomes:

  ok            the fused CPU program and the emulated CUDA one agree with the
                unfused CPU program (CUDA only compiled past ~400000 elements)
  refused       a kfuse error on the CPU compile (bad input, named)
  cuda-refused  the CPU runs it, the CUDA target refuses it with a kfuse
                error (something code generation does not do yet)
  guarded       the unfused CPU program reads a tensor outside its bounds
                (a GuardError: a gather's index from the data, a swapped
                map's); the detail says whether the fused CPU and emulated
                CUDA programs said so too (fusion may drop an unused read)
  fast-numerics the fused CPU program (fast numerics by default) differs from
                the unfused one and agrees in strict numerics (contraction
                and reordering; a sum of centred values, zero but for
                rounding); or emulated CUDA differs on a program of 16-bit
                floats under fast numerics and agrees in strict numerics
                (a contraction into an FMA skipped a rounding, see
                _differs and the README's numerics)
and the ones to look at (the script exits with 1 when there are any):
  crash, timeout, error (an exception that is not a kfuse error), mismatch
  (fused vs unfused on the CPU, or emulated CUDA vs unfused), emulator (the
  emulator stops a kernel: a race, a load outside every buffer), unnamed (a
  compiler stage failed past the parser and no diagnostic is kfuse's: an
  upstream verifier refused IR that kfuse made from input it took, which
  kfuse should have refused itself, naming the user's op).

With `--options` each seed draws one to four code generation options
instead (chip, row_chunks, row_cluster, row_occupancy, row_exchange,
row_joint, row_smem, row_pack, row_prefetch, row_persist, row_tile, row_trip, row_peel, row_fold,
row_shift, row_last_block, row_split_tail, row_store_transposed, threads, unroll, sm_count,
numerics, pdl, multi_tensor, pack_bytes, readonly_inputs),
and half the seeds widen the program's most common last dimension to 2048
to 65536 (rows for clusters, shared memory, streaming; the program's
operations unchanged): the CUDA program compiled with them must still agree
with the CPU's; half the seeds' inputs hold infinities, NaNs or rows of -inf
(random_programs.special_values, in the first float input).

A float product whose order decides 0 * inf lands among the ones to look
at too, and so would a read out of bounds that no guard covers: read each
before calling it a bug.

    python3 bench/mutate_programs.py --seeds 0:600 --jobs 2 --out /tmp/mut.jsonl
    python3 bench/mutate_programs.py --options --seeds 0:600
    python3 bench/mutate_programs.py --motifs --seeds 0:600
    python3 bench/mutate_programs.py --random --seeds 0:600

With `--motifs` the programs are random_programs.random_motif_program's
instead: softmaxes, logsumexps, variances, centred, RMS and L2
normalizations over random shapes, axes and dtypes (the online and centred
sums of the row kernels, their splits and clusters), under drawn options,
half of them on inputs with infinities or NaNs. With `--suite` they are the
benchmark workloads (bench/suite.py) in turn, at the sizes the emulator
runs, under drawn options and the same inputs. With `--random` they are
random_programs.py's other generators in turn (seed % 6): small programs of
elementwise chains, broadcasts, pads and reductions over any axis (f32,
f16, bf16, f64), the same with argmax / argmin, large ones (rank up to 4,
reductions over several axes at once), a few wide rows, softmaxes, column
sums and elementwise ops over strided views, masked and weighted poolings;
under drawn options and the same inputs.

With `--tune` (beside `--options`, `--motifs`, `--suite` or `--random`) the
program of each seed is compiled by kfuse.autotune instead of under drawn
options (sm_90, kfuse's variants), and every variant it keeps must agree
with the unfused CPU program in the emulator.

With `--passes` each seed takes one case of the lit tests that run fuse-opt
on their input (test/**/*.mlir, split at `// -----`), mutates it as above
(and the sizes of its memrefs, and its index constants), and runs fuse-opt
on it with one of the file's RUN lines' arguments: single passes, on IR at
any stage (gpu.launch bodies, buffers), that must refuse what they cannot
take. Outcomes: ok (fuse-opt succeeds), refused (an error that names the
problem), crash (fuse-opt reports a crash, an assertion or LLVM's fatal
error) or timeout.

    python3 bench/mutate_programs.py --passes --seeds 0:4000
"""

import argparse
import collections
import glob
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import traceback
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "..", "test", "python", "programs")


def _importable():
    """bench/ and python/ on sys.path, however this script was started."""
    for d in (HERE, os.path.join(HERE, "..", "python")):
        if d not in sys.path:
            sys.path.insert(0, d)


def _random_programs():
    """bench/random_programs.py (which imports kfuse)."""
    _importable()
    import random_programs
    return random_programs


def suite_program(seed):
    """(name, MLIR text) of a seed in --suite mode: the benchmark workloads
    (bench/suite.py) in turn, at the sizes the emulator runs (their row
    widths and kernel strategies, 2 rows; 4 of 262144, which 2 would split)."""
    _importable()
    import suite
    names = sorted(suite.WORKLOADS)
    name = names[seed % len(names)]
    prog = suite.programs(rows=4 if name == "softmax_w262144" else 2)[name]
    return name, prog if isinstance(prog, str) else prog.to_mlir()


FAILURES = ("crash", "timeout", "error", "mismatch", "emulator", "unnamed")
SIZES = [1, 2, 3, 5, 7, 8, 16, 17, 33, 64, 100, 129]
FLOAT_OPS = ["arith.addf", "arith.mulf", "arith.subf", "arith.divf", "arith.maximumf",
             "arith.minimumf"]
CONSTANTS = ["0.000000e+00", "-1.000000e+00", "1.000000e+30", "2.500000e-01",
             "0x7F800000", "0xFF800000", "0x7FC00000"]


# ------------------------------------------------------------------ mutations
# Each takes (text, rng) and returns (new text, what it did), or None where
# the program has nothing of its kind.

def _tensor_types(text):
    return list(re.finditer(r"tensor<([0-9x]+)x", text))


def resize_everywhere(text, rng, kind="tensor", what="size"):
    """One size of the `kind` types (tensor, memref) changed wherever it
    occurs."""
    pattern = kind + r"<([0-9x]+)x"
    sizes = sorted({int(d) for m in re.finditer(pattern, text)
                    for d in m.group(1).split("x") if d})
    if not sizes:
        return None
    old, new = rng.choice(sizes), rng.choice(SIZES)

    def swap(m):
        dims = [str(new) if d == str(old) else d for d in m.group(1).split("x")]
        return kind + "<" + "x".join(dims) + "x"
    return re.sub(pattern, swap, text), f"{what} {old} -> {new} everywhere"


def resize_once(text, rng, kind="tensor", what="size"):
    """One dimension of one of the `kind` types changed."""
    found = list(re.finditer(kind + r"<([0-9x]+)x", text))
    if not found:
        return None
    m = rng.choice(found)
    dims = [d for d in m.group(1).split("x") if d]
    dims[rng.randrange(len(dims))] = str(rng.choice(SIZES))
    return (text[:m.start()] + kind + "<" + "x".join(dims) + "x" + text[m.end():],
            f"one {what} at offset {m.start()}")


def retype_floats(text, rng):
    new = rng.choice(["f16", "bf16", "f64"])
    return re.sub(r"\bf32\b", new, text), f"f32 -> {new}"


def flip_iterator(text, rng):
    found = list(re.finditer(r'"(parallel|reduction)"', text))
    if not found:
        return None
    m = rng.choice(found)
    new = "reduction" if m.group(1) == "parallel" else "parallel"
    return text[:m.start()] + f'"{new}"' + text[m.end():], f"iterator at {m.start()} -> {new}"


def swap_map_results(text, rng):
    found = [m for m in re.finditer(r"affine_map<\(([^)]*)\) -> \(([^)]*)\)>", text)
             if len(m.group(2).split(",")) >= 2]
    if not found:
        return None
    m = rng.choice(found)
    results = [r.strip() for r in m.group(2).split(",")]
    i, j = rng.sample(range(len(results)), 2)
    results[i], results[j] = results[j], results[i]
    return (text[:m.start()] + f"affine_map<({m.group(1)}) -> ({', '.join(results)})>"
            + text[m.end():], f"map at {m.start()}: results {i} and {j} swapped")


def swap_op(text, rng):
    found = [m for op in FLOAT_OPS for m in re.finditer(re.escape(op) + r"\b", text)]
    if not found:
        return None
    m = rng.choice(found)
    new = rng.choice(FLOAT_OPS)
    return text[:m.start()] + new + text[m.end():], f"{m.group(0)} -> {new} at {m.start()}"


def delete_line(text, rng):
    lines = text.split("\n")
    found = [i for i, ln in enumerate(lines) if "=" in ln and "%" in ln]
    if not found:
        return None
    i = rng.choice(found)
    del lines[i]
    return "\n".join(lines), f"line {i + 1} deleted"


def change_constant(text, rng):
    found = list(re.finditer(r"arith.constant ([-0-9.e+]+|0x[0-9A-F]+) : (f16|bf16|f32|f64)",
                             text))
    if not found:
        return None
    m = rng.choice(found)
    new = rng.choice(CONSTANTS)
    if m.group(2) != "f32" and new.startswith("0x"):
        new = "1.000000e+00"
    return (text[:m.start()] + f"arith.constant {new} : {m.group(2)}" + text[m.end():],
            f"constant {m.group(1)} -> {new}")


def swap_operands(text, rng):
    found = list(re.finditer(r"(arith\.(?:subf|divf|cmpf [a-z]+,)) (%[\w#]+), (%[\w#]+)", text))
    if not found:
        return None
    m = rng.choice(found)
    return (text[:m.start()] + f"{m.group(1)} {m.group(3)}, {m.group(2)}" + text[m.end():],
            f"operands swapped at {m.start()}")


# (the likelier ones twice)
MUTATIONS = [resize_everywhere, resize_everywhere, resize_once, retype_floats, flip_iterator,
             swap_map_results, swap_op, swap_op, delete_line, change_constant, change_constant,
             swap_operands]


# Code generation options and the values a seed draws from (--options).
OPTIONS = {
    "chip": ["sm_80", "sm_90"],
    "row_chunks": [0, 2, 4, 8, 16],
    "row_cluster": [None, 0, 2, 4, 8, 16],
    "row_occupancy": [1, 2, 4],
    "row_exchange": ["async", "barrier"],
    "row_joint": [True, False],
    "row_smem": [-1, 0, 16384],
    "row_pack": [0, 1, 2, 8],
    "row_prefetch": [0, 2, 16],
    "row_persist": [0, 2, 15, "auto"],
    "row_tile": [0, 16, 32],
    "row_trip": [0, 1, 8, 16],
    "row_peel": [True, False],
    "row_fold": [0, 1, 8],
    "row_shift": [None, True, False],
    "row_last_block": [True, False],
    "row_split_tail": [True, False],
    "row_store_transposed": [True, False],
    "threads": [128, 256, 512],
    "unroll": [1, 2, 8],
    "sm_count": [0, 8, 132],
    "numerics": ["fast", "strict"],
    "pdl": [True, False],
    "multi_tensor": [True, False],
    "pack_bytes": [0, 1 << 20, 1 << 30],
    "readonly_inputs": [True, False],
}


def drawn_options(seed):
    """The CUDA options of a seed in --options mode."""
    rng = random.Random(f"options-{seed}")
    names = rng.sample(sorted(OPTIONS), rng.randint(1, 4))
    return {n: rng.choice(OPTIONS[n]) for n in sorted(names)}


def widen_rows(text, rng):
    """The most common last dimension of the program's tensors, everywhere
    it appears in a tensor type, made 2048 to 65536 long."""
    last = collections.Counter(m.group(1).split("x")[-1] for m in _tensor_types(text)
                               if m.group(1).split("x")[-1] not in ("", "1"))
    if not last:
        return None
    old, new = last.most_common(1)[0][0], rng.choice([2048, 8192, 20000, 40000, 65536])

    def swap(m):
        dims = m.group(1).split("x")
        return "tensor<" + "x".join(str(new) if d == old else d for d in dims) + "x"
    return re.sub(r"tensor<([0-9x]+)x", swap, text), f"size {old} -> {new} everywhere"


def programs():
    files = sorted(glob.glob(os.path.join(PROGRAMS, "*.mlir"))
                   + glob.glob(os.path.join(PROGRAMS, "torch", "*.mlir")))
    out = {}
    for f in files:
        with open(f) as fh:
            out[os.path.relpath(f, PROGRAMS)] = fh.read()
    return out


def memref_resize_once(text, rng):
    return resize_once(text, rng, "memref", "memref size")


def memref_resize_everywhere(text, rng):
    return resize_everywhere(text, rng, "memref", "memref size")


def change_index_constant(text, rng):
    found = list(re.finditer(r"arith.constant (\d+) : index", text))
    if not found:
        return None
    m = rng.choice(found)
    new = rng.choice([0, 1, 2, 3, 31, 64, 1025])
    return (text[:m.start()] + f"arith.constant {new} : index" + text[m.end():],
            f"index constant {m.group(1)} -> {new}")


# (--passes: IR past bufferization and code generation too)
PASS_MUTATIONS = MUTATIONS + [memref_resize_once, memref_resize_everywhere,
                              change_index_constant, change_index_constant]


def lit_cases():
    """(file:case, text, [fuse-opt arguments of each RUN line]) of the lit
    tests that run fuse-opt on their input."""
    import shlex
    cases = []
    for path in sorted(glob.glob(os.path.join(HERE, "..", "test", "**", "*.mlir"),
                                 recursive=True)):
        if path.endswith("fuse-opt-parser-abort.mlir"):
            continue  # (MLIR's parser aborts on it, as that test says)
        text = open(path).read()
        runs, lines = [], []
        for line in re.findall(r"//\s*RUN:\s*(.*)", text):
            # (a line that ends in a backslash goes on in the next)
            if lines and lines[-1].endswith("\\"):
                lines[-1] = lines[-1][:-1] + " " + line.strip()
            else:
                lines.append(line.strip())
        for line in lines:
            if "fuse-opt %s" not in line:
                continue
            try:
                words = shlex.split(line.split("|")[0].replace("%s", "INPUT"))
            except ValueError:
                continue
            args = [w for w in words[2:] if w.startswith("--")
                    and w != "--split-input-file" and not w.startswith("--verify")]
            if args:
                runs.append(args)
        if not runs:
            continue
        name = os.path.relpath(path, os.path.join(HERE, "..", "test"))
        for k, case in enumerate(text.split("// -----")):
            body = "\n".join(ln for ln in case.split("\n")
                             if not ln.lstrip().startswith("//"))
            if "func" in body or "module" in body:
                cases.append((f"{name}:{k}", body, runs))
    return cases


def run_pass_seed(seed, cases, workdir, timeout):
    """One mutated lit case under one of its file's fuse-opt lines."""
    from kfuse.pipeline import fuse_opt_path
    rng = random.Random(seed)
    name, text, runs = rng.choice(cases)
    what = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        changed = rng.choice(PASS_MUTATIONS)(text, rng)
        if changed:
            text = changed[0]
            what.append(changed[1])
    args = rng.choice(runs)
    path = os.path.join(workdir, f"{seed}.mlir")
    with open(path, "w") as fh:
        fh.write(text)
    try:
        p = subprocess.run([fuse_opt_path(), path] + args, capture_output=True, text=True,
                           timeout=timeout)
        crashed = re.search(r"crashed|Assertion .* failed|LLVM ERROR|UNREACHABLE|"
                            r"Stack dump", p.stderr)
        if crashed or (p.returncode != 0 and "error" not in p.stderr):
            res = {"outcome": "crash", "detail": p.stderr[-1500:]}
        elif p.returncode != 0:
            res = {"outcome": "refused", "detail": p.stderr[:600]}
        else:
            res = {"outcome": "ok", "detail": ""}
    except subprocess.TimeoutExpired:
        res = {"outcome": "timeout", "detail": f"more than {timeout} s"}
    res.update(seed=seed, program=name, mutations=what + [" ".join(args)], options={},
               file=path)
    return res


def mutant(seed, corpus):
    """(program name, mutated text, what changed) of a seed."""
    rng = random.Random(seed)
    name = rng.choice(sorted(corpus))
    text, what = corpus[name], []
    for _ in range(rng.choice([1, 1, 1, 2])):
        changed = rng.choice(MUTATIONS)(text, rng)
        if changed:
            text = changed[0]
            what.append(changed[1])
    return name, text, what


# --------------------------------------------------------------------- checks

def plan_inputs(specs, rng, recorded=None):
    """Random arrays for a plan's input specs: normal floats; integers in
    {0, 1} (ids and labels index tables of any size); i1 as booleans; where
    `recorded` holds an array of the spec's shape and kind (key "in<i>"),
    that one instead."""
    from kfuse import dtypes
    out = []
    for i, s in enumerate(specs):
        have = (recorded or {}).get(f"in{i}")
        is_int = s.dtype.name[0] == "i"
        if have is not None and have.shape == tuple(s.shape) and \
                (have.dtype.kind in "iub") == is_int:
            # (floats in the program's type: a retyped program's, bf16 saved
            # as f32)
            out.append(have if is_int else
                       have.astype(dtypes.to_numpy(s.dtype)))
        elif s.dtype.name == "i1":
            out.append(rng.random(s.shape) < 0.6)
        elif is_int:
            # (small: ids index tables of their own sizes)
            out.append(rng.integers(0, 2, s.shape).astype(dtypes.to_numpy(s.dtype)))
        else:
            out.append(rng.standard_normal(s.shape).astype(dtypes.to_numpy(s.dtype)))
    return out


def _differs(got, want):
    import numpy as np
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if got.dtype.name == "bfloat16":
        # (8 significant bits: fast numerics' contractions, which skip the
        # rounding of a product, move a bf16 exp of a value near 16 by 6%)
        tol = 1e-1
    elif got.dtype.itemsize == 2 and got.dtype.kind not in "iu":
        tol = 2e-2
    else:
        tol = 1e-4 if got.dtype.itemsize <= 4 else 1e-9
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~np.isclose(g, w, rtol=tol, atol=tol, equal_nan=True)
    if not bad.any():
        return None
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {bad.size} differ, first at {at}: {g[at]} vs {w[at]}"


def _differences(got, want):
    """'output k: how' for each output that differs from the reference."""
    return [f"output {k}: {d}" for k, d in
            ((k, _differs(g, w)) for k, (g, w) in enumerate(zip(got, want))) if d]


def _strict_verdict(detail, strict, want):
    """The outcome of a fast-numerics build that differs (`detail`), given
    the same program's outputs in strict numerics: fast-numerics where those
    agree with the reference, else a mismatch naming both."""
    off = _differences(strict, want)
    if not off:
        return {"outcome": "fast-numerics", "detail": detail + "; in strict numerics it agrees"}
    return {"outcome": "mismatch",
            "detail": detail + "; in strict numerics too, " + "; ".join(off)}


def _low_precision(*arrays):
    """Whether any of the arrays (or lists of them) holds 16-bit floats."""
    import numpy as np
    flat = [a for x in arrays for a in (x if isinstance(x, (list, tuple)) else [x])]
    return any(np.asarray(a).dtype.kind in "fV" and np.asarray(a).dtype.itemsize == 2
               for a in flat)


def _refusal(e, outcome):
    """`outcome` for kfuse error `e`, or "unnamed" where a stage past the
    parser failed on a diagnostic that is not kfuse's (an upstream verifier
    on IR kfuse made: no kfuse check named the problem in the input)."""
    from kfuse.errors import CompileError, ParseError
    diagnostics = getattr(e, "diagnostics", [])
    if (isinstance(e, CompileError) and not isinstance(e, ParseError) and diagnostics
            and not any("kfuse" in d or "fusion-" in d for d in diagnostics)):
        outcome = "unnamed"
    return {"outcome": outcome, "detail": f"{type(e).__name__}: {e}"}


def _tup(v):
    return v if isinstance(v, tuple) else (v,)


def check_one(path, npz, options="{}"):
    """Compiles and runs one mutated program (CUDA with `options`, JSON);
    returns {'outcome', 'detail'}."""
    import numpy as np
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import kfuse
    from kfuse.errors import GuardError, KfuseError

    with open(path) as fh:
        text = fh.read()
    options = json.loads(options)
    # (what the inputs hold: random_programs.INPUT_KINDS)
    kind, seed = options.pop("_inputs", ("normal", 0))
    tune = options.pop("_tune", False)
    stage = "compiling for the CPU"
    try:
        try:
            cpu = kfuse.compile(text, target="cpu")
        except KfuseError as e:
            return _refusal(e, "refused")
        stage = "compiling unfused for the CPU"
        unfused = kfuse.compile(text, target="cpu", fuse=False)
        elements = sum(int(np.prod(s.shape)) for s in cpu.inputs)
        if elements > 2_000_000:
            return {"outcome": "ok", "detail": "compiled only (large)"}
        recorded = {}
        if npz and os.path.exists(npz):
            with np.load(npz) as data:
                recorded = {k: data[k] for k in data.files}
        args = plan_inputs(cpu.inputs, np.random.default_rng(0), recorded)
        _random_programs().special_values(args, kind, seed)
        stage = "running on the CPU"
        try:
            want = _tup(unfused(*args))
        except GuardError as e:
            # (the mutant reads a tensor outside its bounds with these
            # inputs, and says so; the fused builds should too, unless
            # fusion dropped the read: its value unused)
            said = []
            for what, run in (("CPU fused", cpu),
                              ("CUDA emulated", lambda *a: kfuse.compile(
                                  text, target="cuda").emulate(*a))):
                try:
                    run(*args)
                    said.append(f"{what}: no error")
                except GuardError:
                    said.append(f"{what}: GuardError")
            return {"outcome": "guarded",
                    "detail": f"{e.failed[0]} ({'; '.join(said)})"}
        differs = _differences(_tup(cpu(*args)), want)
        if differs:
            # The unfused program rounds each op as written; the fused one
            # in fast numerics may contract and reorder (a sum of 131072
            # centred values, zero but for rounding, moves by 2e-4). The
            # fused program in strict numerics must agree with it.
            stage = "running the CPU program in strict numerics"
            strict = _tup(kfuse.compile(text, target="cpu", numerics="strict")(*args))
            return _strict_verdict("CPU fused, " + differs[0], strict, want)
        stage = "compiling for CUDA"
        chip = options.pop("chip", "sm_90")
        if tune:
            # every variant kfuse.autotune keeps, each against the CPU's
            try:
                tuned = kfuse.autotune(text, chip=chip)
            except KfuseError as e:
                return _refusal(e, "cuda-refused")
            if elements > 400_000:
                return {"outcome": "ok", "detail": f"{len(tuned.labels)} variants compiled, "
                                                   f"not emulated (large)"}
            for label, variant in tuned.variants.items():
                stage = f"emulating variant {label}"
                res = _check_cuda(kfuse, text, chip, tuned.variant_options[label], variant,
                                  args, want, f"variant {label}: ")
                if res["outcome"] != "ok":
                    return res
            return {"outcome": "ok", "detail": f"{len(tuned.labels)} variants"}
        try:
            cuda = kfuse.compile(text, target="cuda", chip=chip, **options)
        except KfuseError as e:
            return _refusal(e, "cuda-refused")
        if elements > 400_000:
            return {"outcome": "ok", "detail": "CUDA compiled, not emulated (large)"}
        stage = "emulating the CUDA program"
        return _check_cuda(kfuse, text, chip, options, cuda, args, want)
    except KfuseError as e:
        return {"outcome": "error", "detail": f"{stage}: {type(e).__name__}: {e}"}
    except Exception:
        return {"outcome": "error", "detail": f"{stage}: {traceback.format_exc()}"}


def _check_cuda(kfuse, text, chip, options, cuda, args, want, what=""):
    """{'outcome', 'detail'} of CUDA program `cuda` (compiled from `text` with
    `options`) run in the emulator on `args` against the unfused CPU
    program's `want`."""
    from kfuse.errors import KfuseError

    try:
        got = _tup(cuda.emulate(*args))
    except KfuseError as e:
        return {"outcome": "emulator", "detail": f"{what}{type(e).__name__}: {e}"}
    differs = _differences(got, want)
    if not differs:
        return {"outcome": "ok", "detail": ""}
    detail = f"{what}CUDA emulated, " + differs[0]
    if options.get("numerics", "fast") == "strict" or not _low_precision(args, got):
        return {"outcome": "mismatch", "detail": detail}
    # Fast numerics may contract a multiply and an add into one FMA
    # (LLVM narrows both to 16 bits: fma.rn.bf16x2, sm_80 on), skipping
    # the product's rounding: one ulp of a 16-bit value near 20 is
    # 0.125, 13% once through an exp, past any tolerance that still
    # catches a wrong kernel. The same program in strict numerics must
    # agree.
    strict = _tup(kfuse.compile(text, target="cuda", chip=chip,
                               **{**options, "numerics": "strict"}).emulate(*args))
    return _strict_verdict(detail, strict, want)


def motif_program(seed, npz):
    """(name, MLIR text) of a seed in --motifs mode: random_programs.py's
    statistics program of that seed, its standard normal inputs saved to
    `npz` (the seed's special values go in as in --options mode)."""
    import numpy as np
    rp = _random_programs()
    prog = rp.random_motif_program(seed)
    # (bf16 as f32, which holds it exactly: .npz has no bf16)
    np.savez(npz, **{f"in{i}": a.astype(np.float32) if a.dtype.name == "bfloat16" else a
                     for i, a in enumerate(rp.random_inputs(prog, seed))})
    return prog.name, prog.to_mlir()


RANDOM_KINDS = ("small", "arg", "large", "wide", "view", "pooling")


def random_builder_program(seed, npz):
    """(name, MLIR text) of a seed in --random mode: random_programs.py's
    generators in turn (seed % 6): a small program of elementwise chains,
    broadcasts, pads and reductions over any axis; the same with argmax /
    argmin; a large one (rank up to 4, up to 40000 elements, reductions over
    several axes); a few wide rows (softmaxes, centred norms); a softmax,
    column sum or elementwise op over a strided view; a masked or weighted
    pooling. Inputs of the builder programs are saved to `npz` (standard
    normal; the pooling's mask and weights as it draws them); the view
    programs take plan_inputs' (no npz)."""
    import numpy as np
    rp = _random_programs()
    kind = RANDOM_KINDS[seed % len(RANDOM_KINDS)]
    if kind == "view":
        text = rp.random_view_program(seed)[0]
        return f"view_{seed}", text
    if kind == "pooling":
        prog, args = rp.random_pooling_program(seed)[:2]
    else:
        prog = {"small": lambda: rp.random_program(seed),
                "arg": lambda: rp.random_program(seed, arg_reductions=True),
                "large": lambda: rp.random_program(seed, large=True),
                "wide": lambda: rp.random_wide_row_program(seed)}[kind]()
        args = rp.random_inputs(prog, seed)
    # (bf16 as f32, which holds it exactly: .npz has no bf16)
    np.savez(npz, **{f"in{i}": np.asarray(a).astype(np.float32)
                     if np.asarray(a).dtype.name == "bfloat16" else np.asarray(a)
                     for i, a in enumerate(args)})
    return prog.name, prog.to_mlir()


def run_seed(seed, corpus, workdir, timeout, options_mode=False, motifs=False,
             suite=False, random_mode=False, tune=False):
    npz = os.path.join(workdir, f"{seed}.npz")
    if motifs or suite or random_mode:
        name, text = (motif_program(seed, npz) if motifs else
                      random_builder_program(seed, npz) if random_mode else
                      suite_program(seed))
        options = drawn_options(seed)
        what = [f"{k}={v!r}" for k, v in options.items()]
    elif options_mode:
        rng = random.Random(seed)
        name = rng.choice(sorted(corpus))
        text, options = corpus[name], drawn_options(seed)
        what = [f"{k}={v!r}" for k, v in options.items()]
        wide = widen_rows(text, rng) if rng.random() < 0.5 else None
        if wide:
            text = wide[0]
            what.append(wide[1])
    else:
        (name, text, what), options = mutant(seed, corpus), {}
    if tune:
        # (kfuse.autotune's variants instead of the drawn options; on sm_90)
        drawn = {f"{k}={v!r}" for k, v in options.items()}
        options, what = {}, [w for w in what if w not in drawn] + ["autotune's variants"]
    if not motifs and not suite and not random_mode:
        npz = os.path.join(PROGRAMS, name[:-5] + ".npz")
    sent = options
    if options_mode or motifs or suite or random_mode:
        # (the seed's special values, put into the inputs by check_one)
        kinds = _random_programs().INPUT_KINDS
        kind = kinds[seed % len(kinds)]
        what.append(f"inputs {kind}")
        sent = dict(options, _inputs=(kind, seed), _tune=tune)
    path = os.path.join(workdir, f"{seed}.mlir")
    with open(path, "w") as fh:
        fh.write(text)
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", path, npz,
                            json.dumps(sent)],
                           capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            res = {"outcome": "crash",
                   "detail": f"exit status {p.returncode}: {p.stderr[-1500:]}"}
        else:
            res = json.loads(p.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        res = {"outcome": "timeout", "detail": f"more than {timeout} s"}
    res.update(seed=seed, program=name, mutations=what, options=options, file=path)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0:200", help="A:B, seeds A to B-1")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=180, help="seconds per program")
    ap.add_argument("--out", help="one JSON line per seed")
    ap.add_argument("--keep", help="folder for the mutated programs (default: a temporary one)")
    ap.add_argument("--options", action="store_true",
                    help="programs unchanged, CUDA options drawn per seed")
    ap.add_argument("--motifs", action="store_true",
                    help="random statistics programs (softmax, variance, norms over random "
                         "shapes and axes), CUDA options drawn per seed")
    ap.add_argument("--suite", action="store_true",
                    help="the benchmark workloads in turn at emulator sizes, CUDA options "
                         "drawn per seed")
    ap.add_argument("--random", action="store_true",
                    help="random builder programs (random_programs.py: chains, reductions, "
                         "argmax, wide rows, strided views, poolings), CUDA options drawn "
                         "per seed")
    ap.add_argument("--tune", action="store_true",
                    help="with --options, --motifs, --suite or --random: every variant "
                         "kfuse.autotune keeps (sm_90) instead of drawn options")
    ap.add_argument("--passes", action="store_true",
                    help="mutated lit test cases under their own fuse-opt passes")
    ap.add_argument("--one", nargs=3, metavar=("MLIR", "NPZ", "OPTIONS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.tune and not (args.options or args.motifs or args.suite or args.random):
        ap.error("--tune goes with --options, --motifs, --suite or --random")
    if args.one:
        print(json.dumps(check_one(*args.one)))
        return 0
    lo, hi = (int(v) for v in args.seeds.split(":"))
    corpus = lit_cases() if args.passes else programs()
    workdir = args.keep or tempfile.mkdtemp(prefix="kfuse-mutants-")
    os.makedirs(workdir, exist_ok=True)
    counts, failures = collections.Counter(), []
    out = open(args.out, "w") if args.out else None
    with ThreadPoolExecutor(args.jobs) as pool:
        for res in pool.map(lambda s: run_pass_seed(s, corpus, workdir, args.timeout)
                            if args.passes else
                            run_seed(s, corpus, workdir, args.timeout,
                                     args.options, args.motifs, args.suite, args.random,
                                     args.tune),
                            range(lo, hi)):
            counts[res["outcome"]] += 1
            if res["outcome"] in FAILURES:
                failures.append(res)
            if out:
                out.write(json.dumps(res) + "\n")
                out.flush()
    if out:
        out.close()
    kind = ("mutated lit cases under their passes" if args.passes else
            "programs under autotune's variants" if args.tune else
            "statistics programs under drawn options" if args.motifs else
            "random programs under drawn options" if args.random else
            "benchmark workloads under drawn options" if args.suite else
            "programs under drawn options" if args.options else "mutated programs")
    print(f"{hi - lo} {kind}: " + ", ".join(f"{n} {k}" for k, n in counts.most_common()))
    for res in failures:
        print(f"\nseed {res['seed']} ({res['program']}; {'; '.join(res['mutations'])}): "
              f"{res['outcome']}\n  {res['file']}\n  " + res["detail"][:600].replace("\n", "\n  "))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
