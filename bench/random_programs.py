"""Random builder programs (seeded): f32/f16/bf16/f64 tensors of rank 1-3,
chains of elementwise ops with broadcasting, where, constant pads and
reductions over any axis, several outputs. test/python/test_random_programs.py
checks their CPU results against Program.reference; make_artifacts.py
compiles some for the GPU checks."""

import numpy as np

import kfuse
from kfuse import builder as kb
from kfuse import dtypes

UNARY = ["exp", "tanh", "sigmoid", "relu", "neg", "abs", "silu", "sqrt", "log"]
BINARY = ["add", "sub", "mul", "maximum", "minimum", "div"]
REDUCE = [kb.sum, kb.max, kb.mean, kb.min]
# argmax / argmin, their int64 indices cast back to the program's dtype so
# that later ops can use them
ARG_REDUCE = [lambda t, axis, keepdims: kb.cast(kb.argmax(t, axis=axis, keepdims=keepdims),
                                                t.dtype),
              lambda t, axis, keepdims: kb.cast(kb.argmin(t, axis=axis, keepdims=keepdims),
                                                t.dtype)]
DTYPES = ["f32", "f16", "bf16", "f64"]
# CPU vs reference, relative and absolute, by dtype (both round per op)
TOLERANCE = {"f32": 1e-4, "f16": 2e-2, "bf16": 1e-1, "f64": 1e-9}


# Extents of the larger programs: squares among them (a square matrix's
# column sums have the extents of its row sums), odd widths, unit dims.
LARGE_DIMS = [1, 3, 8, 16, 33, 64, 100]


def _large_shape(rng):
    rank = int(rng.integers(1, 5))
    if rng.random() < 0.4:
        shape = (int(rng.choice(LARGE_DIMS[2:])),) * rank
    else:
        shape = tuple(int(rng.choice(LARGE_DIMS)) for _ in range(rank))
    while np.prod(shape) > 40000:
        shape = shape[1:]
    return shape


def random_program(seed: int, arg_reductions: bool = False,
                   large: bool = False) -> kb.Program:
    """With `arg_reductions`, reductions may also be argmax / argmin (other
    seeds' programs are those without). `large` programs have rank 1-4 and up
    to 40000 elements (extents from LARGE_DIMS, often all equal), an input
    per leading index too, and reductions over several axes at once: the row
    kernels' tiles, splits and clusters, where the small ones run a block or a
    thread per row."""
    rng = np.random.default_rng(seed)
    reduce = REDUCE + ARG_REDUCE if arg_reductions else REDUCE
    dt = DTYPES[int(rng.integers(0, len(DTYPES)))]
    p = kb.Program(f"random_{'large_' if large else ''}{'arg_' if arg_reductions else ''}"
                   f"{seed}")
    if large:
        shape = _large_shape(rng)
    else:
        shape = tuple(int(rng.integers(1, 9)) for _ in range(int(rng.integers(1, 4))))
    pool = [p.input(f"x{i}", shape, dt) for i in range(2)]
    pool.append(p.input("b", shape[-1:], dt))
    if large and len(shape) > 1:
        pool.append(p.input("c", shape[:1] + (1,) * (len(shape) - 1), dt))
    outputs = 0
    for _ in range(int(rng.integers(3, 10))):
        kind = int(rng.integers(0, 6))
        t = pool[int(rng.integers(0, len(pool)))]
        try:
            if kind == 0:  # (sqrt and log of |t| + 0.5 half the time)
                arg = kb.abs(t) + 0.5 if rng.random() < 0.5 else t
                t = getattr(kb, UNARY[int(rng.integers(0, len(UNARY)))])(arg)
            elif kind == 1:
                u = pool[int(rng.integers(0, len(pool)))]
                t = getattr(kb, BINARY[int(rng.integers(0, len(BINARY)))])(t, u)
            elif kind == 2:
                widths = tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3)))
                               for _ in t.shape)
                t = kb.pad(t, widths, value=float(rng.integers(-2, 3)))
            elif kind == 3 and t.shape:
                axis = int(rng.integers(0, len(t.shape)))
                if large and not arg_reductions and rng.random() < 0.5:
                    axis = tuple(sorted({axis, int(rng.integers(0, len(t.shape)))}))
                t = reduce[int(rng.integers(0, len(reduce)))](
                    t, axis=axis, keepdims=bool(rng.integers(0, 2)))
            elif kind == 4:
                t = kb.where(t > 0.0, t, t * 0.5)
            else:
                t = t * float(rng.integers(1, 4)) + 0.5
        except kfuse.BuilderError:  # shapes that do not broadcast, ...
            continue
        pool.append(t)
        if rng.random() < 0.3:
            p.output(t, name=f"o{outputs}")
            outputs += 1
    p.output(pool[-1], name=f"o{outputs}")
    return p


# Row widths of the wide-row programs: a block's registers and beyond (rows
# in shared memory, over clusters, streamed), odd ones among them.
WIDE_ROWS = [8192, 12000, 20000, 32768, 40000, 65536, 70001, 131072]


def random_wide_row_program(seed: int) -> kb.Program:
    """A few rows (1-5) of one of WIDE_ROWS columns, f32 or f64: elementwise
    chains over x (and maybe a second [rows, width] input and a per-column
    weight), row reductions kept as columns or broadcast back, softmaxes and
    centered normalizations along the rows, several outputs."""
    rng = np.random.default_rng(seed)
    rows = int(rng.choice([1, 2, 3, 5]))
    width = int(rng.choice(WIDE_ROWS))
    dt = "f32" if rng.random() < 0.8 else "f64"
    p = kb.Program(f"wide{seed}")
    pool = [p.input("x", (rows, width), dt)]
    if rng.random() < 0.5:
        pool.append(p.input("z", (rows, width), dt))
    if rng.random() < 0.5:
        pool.append(p.input("w", (width,), dt))
    outs = 0
    for _ in range(int(rng.integers(3, 9))):
        kind = int(rng.integers(0, 6))
        t = pool[int(rng.integers(0, len(pool)))]
        if kind == 0:
            t = getattr(kb, UNARY[int(rng.integers(0, 7))])(t * 0.1)
        elif kind == 1:
            u = pool[int(rng.integers(0, len(pool)))]
            t = getattr(kb, BINARY[int(rng.integers(0, 5))])(t, u)
        elif kind in (2, 3) and t.shape == (rows, width):
            if kind == 2:
                t = REDUCE[int(rng.integers(0, len(REDUCE)))](t, axis=-1, keepdims=True)
            elif rng.random() < 0.5:
                e = kb.exp(t - t.max(axis=-1, keepdims=True))
                t = e / e.sum(axis=-1, keepdims=True)
            else:
                c = t - t.mean(axis=-1, keepdims=True)
                t = c * kb.rsqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5)
        elif kind == 4:
            t = kb.where(t > 0.0, t, t * 0.5)
        else:
            t = t * float(rng.integers(1, 4)) + 0.5
        pool.append(t)
        if rng.random() < 0.3:
            p.output(t, name=f"o{outs}")
            outs += 1
    p.output(pool[-1], name=f"o{outs}")
    return p


# Extents of the statistics programs: unit, odd and power-of-two ones, rows
# a warp, a block, a cluster or a stream covers.
MOTIF_DIMS = [1, 2, 3, 7, 8, 16, 33, 64, 100, 256, 1000, 2048, 4100, 20000]
MOTIFS = ["softmax", "log_softmax", "logsumexp", "variance", "normalize", "rms_norm",
          "l2_normalize", "sum_exp"]


def random_motif_program(seed: int) -> kb.Program:
    """The statistics that code generation treats specially, over random
    shapes (rank 1-4, up to about 200000 elements) and axes (the last,
    leading ones as in NHWC batch statistics, middle ones as in NCHW, any
    subset): softmax and its log (a max, then a sum of exp(e - max): online
    sums), logsumexp, variances and centred normalizations (a sum of (e -
    mean)^2: centred sums), RMS and L2 norms, of an input or of an
    elementwise value of it moved far from zero (x * a + c), with weights
    along the reduced axes, the statistics as outputs too, and an
    elementwise op after; f32 mostly, f16, bf16 and f64."""
    rng = np.random.default_rng(seed)
    dt = ["f32", "f32", "f32", "f16", "bf16", "f64"][int(rng.integers(0, 6))]
    rank = int(rng.integers(1, 5))
    shape = [int(rng.choice(MOTIF_DIMS)) for _ in range(rank)]
    while int(np.prod(shape)) > 200_000:
        k = int(np.argmax(shape))
        shape[k] = max(1, shape[k] // int(rng.choice([2, 3, 10])))
    shape = tuple(shape)
    pick = rng.random()
    if pick < 0.4 or rank == 1:
        axes = (rank - 1,)
    elif pick < 0.6:
        axes = tuple(range(rank - 1))                   # channels last (NHWC)
    elif pick < 0.8:
        axes = tuple(a for a in range(rank) if a != 1)  # channels second (NCHW)
    else:
        axes = tuple(sorted({int(a) for a in rng.integers(0, rank, size=rank)}))
    motif = MOTIFS[int(rng.integers(0, len(MOTIFS)))]
    p = kb.Program(f"motif_{motif}_{seed}")
    x = p.input("x", shape, dt)
    e = x
    if rng.random() < 0.5:
        # (far from zero: the centred sums' shift matters; softmax then
        # subtracts a large max; 16-bit floats not past 16, where fast
        # numerics' contraction, which skips the product's rounding, moves
        # e by up to an ulp, 1/16 near 100 in f16, and exp(e - m) by 6%)
        offsets = [0.0, 10.0] if dt in ("f16", "bf16") else [0.0, 10.0, -100.0]
        e = x * float(rng.choice([0.5, 2.0, 3.0])) + float(rng.choice(offsets))
    if rng.random() < 0.3:
        e = e + p.input("z", shape, dt)
    wshape = tuple(n if a in axes else 1 for a, n in enumerate(shape))
    w = p.input("w", wshape, dt) if rng.random() < 0.4 else None
    keep = bool(rng.integers(0, 2))
    stats = []
    if motif in ("softmax", "log_softmax", "logsumexp", "sum_exp"):
        m = e.max(axis=axes, keepdims=True)
        s = kb.exp(e - m).sum(axis=axes, keepdims=True)
        if motif == "softmax":
            y = kb.exp(e - m) / s
        elif motif == "log_softmax":
            y = e - m - kb.log(s)
        elif motif == "logsumexp":
            y = kb.log(s) + m
        else:
            y = s
        stats.append(m)
    elif motif in ("variance", "normalize"):
        mean = e.mean(axis=axes, keepdims=True)
        c = e - mean
        var = (c * c).mean(axis=axes, keepdims=True)
        y = var if motif == "variance" else c * kb.rsqrt(var + 1e-5)
        stats += [mean, var]
    elif motif == "rms_norm":
        ms = (e * e).mean(axis=axes, keepdims=True)
        y = e * kb.rsqrt(ms + 1e-6)
        stats.append(ms)
    else:
        n = kb.sqrt((e * e).sum(axis=axes, keepdims=True))
        y = e / (n + 1e-6)
        stats.append(n)
    if w is not None and y.shape == shape:
        y = y * w
    if rng.random() < 0.3:
        y = kb.silu(y) if rng.random() < 0.5 else kb.relu(y) * 2.0
    p.output(y, name="y")
    if rng.random() < 0.4:
        t = stats[int(rng.integers(0, len(stats)))]
        if not keep:
            t = t.sum(axis=axes)  # (over its unit extents: a view)
        p.output(t, name="stat")
    return p


# What a seed's inputs hold (special_values), by seed % 8: half of them
# infinities, NaNs or rows of -inf.
INPUT_KINDS = ["normal", "normal", "normal", "normal", "-inf", "+inf", "nan", "-inf slab"]


def special_values(arrays, kind: str, seed: int) -> None:
    """Puts `kind` (INPUT_KINDS) into the first float array of `arrays`, in
    place: -inf, +inf or NaN at about one element in 60, or -inf over the
    first third of the last dimension (rows whose max is -inf)."""
    x = next((a for a in arrays if a.dtype.kind in "fV" and a.size), None)
    if x is None or kind == "normal":
        return
    if kind == "-inf slab":
        if x.ndim:
            x[..., : max(1, x.shape[-1] // 3)] = -np.inf
        else:
            x[...] = -np.inf
        return
    rng = np.random.default_rng(seed + 99)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, size=max(1, flat.size // 60))] = \
        {"-inf": -np.inf, "+inf": np.inf, "nan": np.nan}[kind]


def motif_inputs(prog: kb.Program, seed: int):
    """(inputs, what they hold) of random_motif_program(seed): standard
    normal (random_inputs), with special_values of the seed's INPUT_KINDS."""
    args = random_inputs(prog, seed)
    kind = INPUT_KINDS[seed % len(INPUT_KINDS)]
    special_values(args, kind, seed)
    return args, kind


def random_inputs(prog: kb.Program, seed: int):
    rng = np.random.default_rng(seed + 7)
    return [rng.standard_normal(shape).astype(np.float32).astype(dtypes.to_numpy(dt))
            for _, shape, dt in prog.inputs]


# ---------------------------------------------------------------- MLIR text

# Random linalg-on-tensors written the way front ends write it: named ops
# (linalg.transpose, linalg.exp/tanh/abs/negf/add, linalg.matmul with a fill
# init and a transposed operand), tensor.extract_slice with offsets and
# strides (aligned blocks and lanes too), tensor.pad, tensor.collapse_shape,
# tensor.expand_shape,
# a softmax over the last dimension (linalg.generic row reduction). A numpy reference is built
# beside the text.

class _Text:
    """The lines of a function being written, and fresh SSA names."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.lines = []
        self.n = 0

    def name(self):
        self.n += 1
        return f"%v{self.n}"

    def ty(self, shape):
        return "tensor<" + "x".join(map(str, shape)) + ("x" if shape else "") + "f32>"

    def empty(self, shape):
        e = self.name()
        self.lines.append(f"{e} = tensor.empty() : {self.ty(shape)}")
        return e


def random_mlir_program(seed: int):
    """(MLIR text of func @m<seed>(%a0, %a1), the input shape, one numpy
    reference function per result taking {"a0": ..., "a1": ...})."""
    g = _Text(seed); rng = g.rng
    shape = tuple(int(rng.integers(2, 7)) for _ in range(int(rng.integers(2, 4))))
    args = [("%a0", shape), ("%a1", shape)]
    env = [("%a0", shape, lambda e: e["a0"]), ("%a1", shape, lambda e: e["a1"])]
    outs = []
    for step in range(int(rng.integers(2, 8))):
        v, sh, f = env[int(rng.integers(0, len(env)))]
        k = int(rng.integers(0, 9))
        if k == 0 and len(sh) >= 2:  # transpose
            perm = list(rng.permutation(len(sh)))
            nsh = tuple(sh[p] for p in perm)
            e = g.empty(nsh); r = g.name()
            g.lines.append(f"{r} = linalg.transpose ins({v} : {g.ty(sh)}) outs({e} : {g.ty(nsh)}) permutation = [{', '.join(map(str, perm))}]")
            nf = (lambda f, perm: lambda en: np.transpose(f(en), perm))(f, perm)
        elif k == 1 and rng.random() < 0.4:  # aligned slice: a block or a lane of one dim
            i = int(rng.integers(0, len(sh)))
            d = sh[i]
            divs = [t for t in range(1, d + 1) if d % t == 0]
            t = divs[int(rng.integers(0, len(divs)))]
            off, size, stride = [0] * len(sh), list(sh), [1] * len(sh)
            if rng.random() < 0.5:  # block j of size t: [j*t, (j+1)*t)
                off[i], size[i] = int(rng.integers(0, d // t)) * t, t
            else:  # lane o of t: o::t
                off[i], size[i], stride[i] = int(rng.integers(0, t)), d // t, t
            nsh = tuple(size); r = g.name()
            g.lines.append(f"{r} = tensor.extract_slice {v}[{', '.join(map(str, off))}] [{', '.join(map(str, size))}] [{', '.join(map(str, stride))}] : {g.ty(sh)} to {g.ty(nsh)}")
            sl = tuple(slice(o, o + s * st, st) for o, s, st in zip(off, size, stride))
            nf = (lambda f, sl: lambda en: f(en)[sl])(f, sl)
        elif k == 1:  # slice
            off = [int(rng.integers(0, d)) for d in sh]
            size = [int(rng.integers(1, d - o + 1)) for d, o in zip(sh, off)]
            stride = [int(rng.integers(1, 3)) if (d - o) >= 2 * s else 1 for d, o, s in zip(sh, off, size)]
            size = [min(s, (d - o + st - 1) // st) for d, o, s, st in zip(sh, off, size, stride)]
            nsh = tuple(size); r = g.name()
            g.lines.append(f"{r} = tensor.extract_slice {v}[{', '.join(map(str, off))}] [{', '.join(map(str, size))}] [{', '.join(map(str, stride))}] : {g.ty(sh)} to {g.ty(nsh)}")
            sl = tuple(slice(o, o + s * st, st) for o, s, st in zip(off, size, stride))
            nf = (lambda f, sl: lambda en: f(en)[sl])(f, sl)
        elif k == 2:  # pad
            lo = [int(rng.integers(0, 3)) for _ in sh]; hi = [int(rng.integers(0, 3)) for _ in sh]
            nsh = tuple(d + a + b for d, a, b in zip(sh, lo, hi)); r = g.name(); c = g.name()
            val = float(rng.integers(-2, 3))
            g.lines.append(f"{c} = arith.constant {val} : f32")
            idx = ", ".join(f"%i{j}: index" for j in range(len(sh)))
            g.lines.append(f"{r} = tensor.pad {v} low[{', '.join(map(str, lo))}] high[{', '.join(map(str, hi))}] {{\n  ^bb0({idx}):\n    tensor.yield {c} : f32\n  }} : {g.ty(sh)} to {g.ty(nsh)}")
            nf = (lambda f, w, val: lambda en: np.pad(f(en), w, constant_values=val))(f, list(zip(lo, hi)), val)
        elif k == 3 and len(sh) >= 2:  # collapse then maybe expand
            i = int(rng.integers(0, len(sh) - 1))
            nsh = sh[:i] + (sh[i] * sh[i + 1],) + sh[i + 2:]
            reassoc = [[j] for j in range(i)] + [[i, i + 1]] + [[j + 1] for j in range(i + 1, len(sh) - 1)]
            r = g.name()
            g.lines.append(f"{r} = tensor.collapse_shape {v} {reassoc} : {g.ty(sh)} into {g.ty(nsh)}")
            nf = (lambda f, nsh: lambda en: f(en).reshape(nsh))(f, nsh)
        elif k == 4:  # exp / tanh named elementwise
            op = ["exp", "tanh", "abs", "negf"][int(rng.integers(0, 4))]
            e = g.empty(sh); r = g.name(); nsh = sh
            g.lines.append(f"{r} = linalg.{op} ins({v} : {g.ty(sh)}) outs({e} : {g.ty(sh)}) -> {g.ty(sh)}")
            npf = {"exp": np.exp, "tanh": np.tanh, "abs": np.abs, "negf": np.negative}[op]
            nf = (lambda f, npf: lambda en: npf(f(en)))(f, npf)
        elif k == 5:  # add with another value of the same shape
            same = [(w, s2, f2) for (w, s2, f2) in env if s2 == sh]
            w, _, f2 = same[int(rng.integers(0, len(same)))]
            e = g.empty(sh); r = g.name(); nsh = sh
            g.lines.append(f"{r} = linalg.add ins({v}, {w} : {g.ty(sh)}, {g.ty(sh)}) outs({e} : {g.ty(sh)}) -> {g.ty(sh)}")
            nf = (lambda f, f2: lambda en: f(en) + f2(en))(f, f2)
        elif k == 6 and len(sh) == 2:  # matmul with its own transpose
            e = g.empty((sh[0], sh[0])); z = g.name(); fl = g.name()
            g.lines.append(f"{z} = arith.constant 0.0 : f32")
            g.lines.append(f"{fl} = linalg.fill ins({z} : f32) outs({e} : {g.ty((sh[0], sh[0]))}) -> {g.ty((sh[0], sh[0]))}")
            te = g.empty((sh[1], sh[0])); t = g.name()
            g.lines.append(f"{t} = linalg.transpose ins({v} : {g.ty(sh)}) outs({te} : {g.ty((sh[1], sh[0]))}) permutation = [1, 0]")
            r = g.name(); nsh = (sh[0], sh[0])
            g.lines.append(f"{r} = linalg.matmul ins({v}, {t} : {g.ty(sh)}, {g.ty((sh[1], sh[0]))}) outs({fl} : {g.ty(nsh)}) -> {g.ty(nsh)}")
            nf = (lambda f: lambda en: f(en).astype(np.float64) @ f(en).T.astype(np.float64))(f)
        elif k == 8 and len(sh) <= 3 and any(
                a for d in sh for a in range(2, d) if d % a == 0):  # expand (split a dim)
            cands = [(i, a) for i, d in enumerate(sh) for a in range(2, d) if d % a == 0]
            i, a = cands[int(rng.integers(0, len(cands)))]
            nsh = sh[:i] + (a, sh[i] // a) + sh[i + 1:]
            reassoc = [[j] for j in range(i)] + [[i, i + 1]] + [[j + 1] for j in range(i + 1, len(sh))]
            r = g.name()
            g.lines.append(f"{r} = tensor.expand_shape {v} {reassoc} output_shape [{', '.join(map(str, nsh))}] : {g.ty(sh)} into {g.ty(nsh)}")
            nf = (lambda f, nsh: lambda en: f(en).reshape(nsh))(f, nsh)
        elif k == 7:  # softmax of tanh(x) over the last dimension (a row reduction;
            # tanh keeps exp finite after chains of exp)
            n = len(sh)
            dims = ", ".join(f"d{j}" for j in range(n))
            rows = ", ".join(f"d{j}" for j in range(n - 1))
            ident = f"affine_map<({dims}) -> ({dims})>"
            rowmap = f"affine_map<({dims}) -> ({rows})>"
            z = g.name(); fl = g.name(); sm = g.name(); r = g.name(); nsh = sh
            g.lines.append(f"{z} = arith.constant 0.0 : f32")
            e = g.empty(sh[:-1])
            g.lines.append(f"{fl} = linalg.fill ins({z} : f32) outs({e} : {g.ty(sh[:-1])}) -> {g.ty(sh[:-1])}")
            iters = ", ".join(['"parallel"'] * (n - 1) + ['"reduction"'])
            g.lines.append(f"{sm} = linalg.generic {{indexing_maps = [{ident}, {rowmap}], iterator_types = [{iters}]}} ins({v} : {g.ty(sh)}) outs({fl} : {g.ty(sh[:-1])}) {{\n  ^bb0(%in: f32, %acc: f32):\n    %t = math.tanh %in : f32\n    %ex = math.exp %t : f32\n    %s = arith.addf %ex, %acc : f32\n    linalg.yield %s : f32\n  }} -> {g.ty(sh[:-1])}")
            e = g.empty(sh)
            par = ", ".join(['"parallel"'] * n)
            g.lines.append(f"{r} = linalg.generic {{indexing_maps = [{ident}, {rowmap}, {ident}], iterator_types = [{par}]}} ins({v}, {sm} : {g.ty(sh)}, {g.ty(sh[:-1])}) outs({e} : {g.ty(sh)}) {{\n  ^bb0(%in: f32, %s: f32, %o: f32):\n    %t = math.tanh %in : f32\n    %ex = math.exp %t : f32\n    %q = arith.divf %ex, %s : f32\n    linalg.yield %q : f32\n  }} -> {g.ty(sh)}")
            nf = (lambda f: lambda en: (lambda a: a / a.sum(-1, keepdims=True))(
                np.exp(np.tanh(f(en).astype(np.float64)))))(f)
        else:
            continue
        env.append((r, nsh, nf))
        if rng.random() < 0.3: outs.append(env[-1])
    outs.append(env[-1])
    # distinct outputs only (repeats are tested elsewhere)
    seen, uniq = set(), []
    for o in outs:
        if o[0] not in seen: seen.add(o[0]); uniq.append(o)
    sig = ", ".join(f"{a}: {g.ty(s)}" for a, s in args)
    res = ", ".join(g.ty(o[1]) for o in uniq)
    text = f"func.func @m{seed}({sig}) -> ({res}) {{\n  " + "\n  ".join(g.lines) + f"\n  return {', '.join(o[0] for o in uniq)} : {res}\n}}\n"
    return text, shape, [o[2] for o in uniq]


# ------------------------------------------------------- slices of arguments

# A slice x[r0 : r0 + r*rs : rs, c0 : c0 + c] of an argument x[R, C] (f32 or
# f16), kept as a view of x (fusion-fold-copies), under a softmax over its
# rows, its column sums or an elementwise square: row kernels in registers,
# streamed and split, column splits, elementwise vectors as wide as the
# view's alignment allows.
_VIEW_MAPS = ("#id = affine_map<(d0, d1) -> (d0, d1)>\n#row = affine_map<(d0, d1) -> (d0)>\n"
              "#col = affine_map<(d0, d1) -> (d1)>\n")


def _view_text(kind, R, C, r0, c0, r, c, rs, dt, batch=0):
    """(MLIR text, numpy reference) of one view program (see above). With
    `batch`, x is [batch, R, C], sliced x[:, r0 : r0 + r*rs : rs, c0 : c0 + c]
    and reshaped to [batch * r, c] (no view: its readers run over the
    slice's own loops), which the program reads as its rows."""
    T = lambda s: f"tensor<{'x'.join(map(str, s))}x{dt}>"  # noqa: E731
    if batch:
        xshape = (batch, R, C)
        sl = (f"%v3 = tensor.extract_slice %x[0, {r0}, {c0}] [{batch}, {r}, {c}] [1, {rs}, 1] : "
              f"{T(xshape)} to {T((batch, r, c))}\n"
              f"  %v = tensor.collapse_shape %v3 [[0, 1], [2]] : {T((batch, r, c))} into "
              f"{T((batch * r, c))}")
        view = lambda x, r=r: x[:, r0:r0 + r * rs:rs, c0:c0 + c].reshape(batch * r, c)  # noqa: E731
        r = batch * r
    else:
        xshape = (R, C)
        sl = f"%v = tensor.extract_slice %x[{r0}, {c0}] [{r}, {c}] [{rs}, 1] : {T((R, C))} to {T((r, c))}"
        view = lambda x: x[r0:r0 + r * rs:rs, c0:c0 + c]  # noqa: E731
    # (each body computes in f32: the element widened, or itself)
    widen = "arith.extf %a : f16 to f32" if dt == "f16" else "arith.maximumf %a, %a : f32"
    if kind == "softmax":
        body = f"""
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<{r}xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<{r}xf32>) -> tensor<{r}xf32>
  %m = linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}} ins(%v : {T((r, c))}) outs(%fm : tensor<{r}xf32>) {{
  ^bb0(%a: {dt}, %acc: f32):
    %w = {widen}
    %q = arith.maximumf %w, %acc : f32
    linalg.yield %q : f32
  }} -> tensor<{r}xf32>
  %fs = linalg.fill ins(%z : f32) outs(%er : tensor<{r}xf32>) -> tensor<{r}xf32>
  %s = linalg.generic {{indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}} ins(%v, %m : {T((r, c))}, tensor<{r}xf32>) outs(%fs : tensor<{r}xf32>) {{
  ^bb0(%a: {dt}, %b: f32, %acc: f32):
    %w = {widen}
    %d = arith.subf %w, %b : f32
    %e = math.exp %d : f32
    %q = arith.addf %e, %acc : f32
    linalg.yield %q : f32
  }} -> tensor<{r}xf32>
  %ee = tensor.empty() : tensor<{r}x{c}xf32>
  %y = linalg.generic {{indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}} ins(%v, %m, %s : {T((r, c))}, tensor<{r}xf32>, tensor<{r}xf32>) outs(%ee : tensor<{r}x{c}xf32>) {{
  ^bb0(%a: {dt}, %b: f32, %t: f32, %o: f32):
    %w = {widen}
    %d = arith.subf %w, %b : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %t : f32
    linalg.yield %q : f32
  }} -> tensor<{r}x{c}xf32>
  return %y : tensor<{r}x{c}xf32>"""
        ret = f"tensor<{r}x{c}xf32>"
        def ref(x):
            v = view(x).astype(np.float64)
            e = np.exp(v - v.max(-1, keepdims=True)); return e / e.sum(-1, keepdims=True)
    elif kind == "colsum":
        body = f"""
  %z = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<{c}xf32>
  %f = linalg.fill ins(%z : f32) outs(%er : tensor<{c}xf32>) -> tensor<{c}xf32>
  %s = linalg.generic {{indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}} ins(%v : {T((r, c))}) outs(%f : tensor<{c}xf32>) {{
  ^bb0(%a: {dt}, %acc: f32):
    %w = {widen}
    %q = arith.addf %w, %acc : f32
    linalg.yield %q : f32
  }} -> tensor<{c}xf32>
  return %s : tensor<{c}xf32>"""
        ret = f"tensor<{c}xf32>"
        ref = lambda x: view(x).astype(np.float64).sum(0)  # noqa: E731
    else:  # elementwise
        body = f"""
  %ee = tensor.empty() : tensor<{r}x{c}xf32>
  %y = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}} ins(%v : {T((r, c))}) outs(%ee : tensor<{r}x{c}xf32>) {{
  ^bb0(%a: {dt}, %o: f32):
    %w = {widen}
    %q = arith.mulf %w, %w : f32
    linalg.yield %q : f32
  }} -> tensor<{r}x{c}xf32>
  return %y : tensor<{r}x{c}xf32>"""
        ret = f"tensor<{r}x{c}xf32>"
        ref = lambda x: view(x).astype(np.float64) ** 2  # noqa: E731
    text = _VIEW_MAPS + f"func.func @f(%x: {T(xshape)}) -> {ret} {{\n  {sl}{body}\n}}\n"
    return text, ref


def random_view_program(seed: int):
    """(MLIR text of func @f(%x), x's shape and dtype, a numpy reference of x
    in float64, the kind: softmax, colsum or ew)."""
    rng = np.random.default_rng(seed)
    kind = ["softmax", "colsum", "ew"][seed % 3]
    dt = "f32" if rng.random() < 0.7 else "f16"
    R = int(rng.integers(1, 40)); C = int(rng.choice([5, 33, 260, 1030, 4100, 9000, 70001]))
    if kind == "colsum" and rng.random() < 0.5:
        R, C = int(rng.choice([300, 5000, 20011])), int(rng.choice([3, 16, 33, 130]))
    if R * C > 2_000_000:
        R = max(1, 2_000_000 // C)
    rs = 1 if rng.random() < 0.7 or R < 4 else 2
    r0 = int(rng.integers(0, max(1, R // 3)))
    r = max(1, (R - r0 + rs - 1) // rs - int(rng.integers(0, 2)))
    c0 = int(rng.integers(0, min(C, 9)))
    c = max(1, C - c0 - int(rng.integers(0, min(C - c0, 5))))
    # (a third of the programs read a reshape of a view of a 3-D x: drawn
    # apart, so that the 2-D programs stay what they were for each seed)
    batch = 0
    if np.random.default_rng((seed, 1)).random() < 1 / 3:
        batch = int(np.random.default_rng((seed, 2)).integers(2, 5))
        R = max(r0 + 1, min(R, 2_000_000 // (batch * C)))
        r = max(1, min(r, (R - r0 + rs - 1) // rs))
    text, ref = _view_text(kind, R, C, r0, c0, r, c, rs, dt, batch)
    return text, ((batch, R, C) if batch else (R, C)), dt, ref, kind


def random_pooling_program(seed: int):
    """A weighted or masked pooling over one axis of x [B, S, H] (or
    [B, H, S]): a reduction of x * m over S beside a reduction of m alone
    (the count or total), read broadcast by an epilogue over (B, H), as
    fusion-lift-broadcast-reductions recomputes it. m is a mask [B, S] of
    zeros and ones, weights [B, S], or weights [S] (their total a reduction
    over every loop); the reductions are sums, maxima or minima; a
    row-space op (a clamp, a shift) may come between the count and its
    reader. One in five programs reads a second tensor for the count (left
    alone: its loads would be new) or returns the count too; one in four is
    f16 (sums accumulated in f32, truncated to f16 before the epilogue).
    Returns (the Program, its inputs, the float64 numpy reference of its
    outputs, whether the lift applies, the relative tolerance)."""
    rng = np.random.default_rng(seed)
    B = int(rng.choice([1, 3, 8])); S = int(rng.choice([5, 37, 64, 300]))
    H = int(rng.choice([4, 33, 96, 256]))
    middle = rng.random() < 0.5            # x [B, S, H]; else [B, H, S]
    ax = 1 if middle else 2
    xs = (B, S, H) if middle else (B, H, S)
    kind = str(rng.choice(["mask", "weights", "weights1d"]))
    ms = (1 if kind == "weights1d" else B,) + ((S, 1) if middle else (1, S))
    k_num = str(rng.choice(["sum", "max"]))
    k_den = str(rng.choice(["sum", "max", "min"]))
    comb = str(rng.choice(["div", "sub", "mul_exp"]))
    rowop = str(rng.choice(["none", "clamp", "shift"]))
    spoil = str(rng.choice(["none", "other", "returned"], p=[0.8, 0.1, 0.1]))
    axis = None if kind == "weights1d" else ax

    def pooled(lib, x, m, m2):
        # (the program, on builder tensors with lib = kb or on numpy arrays
        # with lib = np)
        num = getattr(x * m, k_num)(axis=ax)
        den = getattr(m2, k_den)(axis=axis)
        if rowop == "clamp":
            den = lib.maximum(den, 1.0)
        elif rowop == "shift":
            den = den + 0.5
        y = {"div": lambda: num / (den + 3.0), "sub": lambda: num - den,
             "mul_exp": lambda: num * lib.exp(den * 0.01)}[comb]()
        return (y, den) if spoil == "returned" else (y,)

    # (drawn apart, so that the f32 programs stay what they were for each seed)
    dt = "f16" if np.random.default_rng((seed, 1)).random() < 0.25 else "f32"
    p = kb.Program(f"pooling_{seed}")
    x = p.input("x", xs, dt)
    m = p.input("m", ms, dt)
    m2 = p.input("m2", ms, dt) if spoil == "other" else m
    for out, name in zip(pooled(kb, x, m, m2), ("y", "den")):
        p.output(out, name=name)

    X = rng.standard_normal(xs).astype(np.float32)
    M = ((rng.random(ms) < 0.6) if kind == "mask" else rng.random(ms)).astype(np.float32)
    M2 = rng.random(ms).astype(np.float32)
    inputs = [a.astype(np.float16 if dt == "f16" else np.float32)
              for a in [X, M] + ([M2] if spoil == "other" else [])]

    def ref(X, M, M2=None):
        X, M = X.astype(np.float64), M.astype(np.float64)
        return pooled(np, X, M, M if M2 is None else M2.astype(np.float64))
    return p, inputs, ref, spoil == "none", (1e-2 if dt == "f16" else 1e-4)
