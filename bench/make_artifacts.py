"""Compiles the GPU test programs and the benchmark programs into artifacts
(no GPU needed): `<out>/tests/<name>/` with check.npz for test/python/test_gpu.py,
and `<out>/bench/<name>/` for the bench scripts. Carry the directory to the GPU
machine and run them there with kfuse.runtime.

    python bench/make_artifacts.py --out .artifacts [--chip sm_90]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import warnings
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kfuse  # noqa: E402
from kfuse import builder as kb  # noqa: E402
from kfuse import dtypes  # noqa: E402

TOL = {"f32": (1e-5, 1e-6), "f16": (2e-3, 2e-3), "bf16": (1.6e-2, 1.6e-2), "i64": (0, 0)}


def test_programs():
    progs = []
    for dt in ("f32", "f16", "bf16"):
        p = kb.Program(f"softplus_{dt}")
        x = p.input("x", (1 << 18,), dt)
        p.output(kb.log(kb.exp(x) + 1.0), name="y")
        progs.append(p)
    p = kb.Program("bias_gelu_f32")
    x = p.input("x", (256, 1024), "f32")
    b = p.input("bias", (1024,), "f32")
    t = x + b
    p.output(kb.gelu(t), name="y")
    p.output(kb.silu(t) * 0.5, name="z")
    progs.append(p)
    p = kb.Program("odd_sizes_f32")           # vector width 1 + remainder loop
    x = p.input("x", (1000, 37), "f32")
    r = p.input("r", (1000, 1), "f32")
    p.output(kb.where(x > r, kb.tanh(x), kb.sigmoid(r) * x), name="y")
    progs.append(p)
    p = kb.Program("mixed_f16")
    x = p.input("x", (128, 512), "f16")
    s = p.input("s", (), "f16")
    p.output(kb.cast(kb.sqrt(kb.abs(x) + 1.0) * s, "f32"), name="y")
    progs.append(p)
    p = kb.Program("pad_exp_f32")             # a gather (padding) fused both ways
    x = p.input("x", (64, 1020), "f32")
    b = p.input("b", (1024,), "f32")
    p.output(kb.pad(kb.exp(x), ((2, 1), (3, 1)), value=-0.5) * b, name="y")
    progs.append(p)
    p = kb.Program("pad_f16")
    x = p.input("x", (30, 37), "f16")
    p.output(kb.tanh(kb.pad(x, ((1, 1), (0, 3)))), name="y")
    progs.append(p)
    progs += reduction_programs()
    return progs


def _softmax_program(name, shape):
    p = kb.Program(name)
    x = p.input("x", shape, "f32")
    e = kb.exp(x - x.max(axis=-1, keepdims=True))
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    return p


def _layernorm_program(name, rows, cols):
    """Layer norm over rows of `cols` with a weight and a bias, f32."""
    p = kb.Program(name)
    x = p.input("x", (rows, cols), "f32")
    w = p.input("w", (cols,), "f32")
    b = p.input("b", (cols,), "f32")
    c = x - x.mean(axis=-1, keepdims=True)
    p.output(c * kb.rsqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5) * w + b, name="y")
    return p


def cluster_programs():
    """Rows too long for one block's registers, compiled with row_cluster=8:
    each row spread over a thread-block cluster (sm_90). The `cluster_`
    programs combine the blocks' totals with st.async and mbarriers (the
    default), the `cluster_barrier_` copies with cluster barriers
    (row_exchange="barrier"). The `occupancy2_` programs plan for two blocks
    an SM (row_occupancy=2). All in tests_wide."""
    progs = []
    for exchange in ("", "barrier_"):
        p = kb.Program(f"cluster_{exchange}softmax_f32")  # 4 blocks per row, 8 chunks each
        x = p.input("x", (4, 131072), "f32")
        e = kb.exp(x - x.max(axis=-1, keepdims=True))
        p.output(e / e.sum(axis=-1, keepdims=True), name="y")
        progs.append(p)
        # ragged blocks, a row-space output (17 rows x 8 blocks fill the 132 SMs:
        # with fewer, the two reductions would run as waves over row slices)
        p = kb.Program(f"cluster_{exchange}logsumexp_f32")
        x = p.input("x", (17, 100000), "f32")
        m = x.max(axis=-1, keepdims=True)
        p.output(kb.log(kb.exp(x - m).sum(axis=-1)) + m.sum(axis=-1), name="lse")
        progs.append(p)
    # row_occupancy=2: blocks of 512 threads, two an SM (.minnctapersm 2): a
    # row of 32768 floats a block, 6 of a thread's 16 vectors in registers
    # and 10 in 80 KB of shared memory; a layer norm's row of 20000 the same
    # way (10 vectors, the last ragged); rows of 131072 over clusters of 8
    # such blocks in registers
    progs += [_softmax_program("occupancy2_softmax_f32", (8, 32768)),
              _layernorm_program("occupancy2_layernorm_f32", 8, 20000),
              _softmax_program("occupancy2_cluster_softmax_f32", (2, 131072))]
    return progs


# Programs whose kernels no GPU has run yet, in tests_new (small: carried
# beside the suite in one device call): name -> extra compile options.
NEW_ON_HARDWARE = {
    # persistent clusters (row_persist): 3 rows of 65536 over 2 clusters of 2
    # blocks, each block's share of its next row copied into shared memory
    "persist_softmax_f32": dict(row_persist=2),
    "persist_layernorm_f32": dict(row_persist=2),
    # up to a cluster a row, as many as the GPU holds (the runtime asks the
    # driver, cuOccupancyMaxActiveClusters)
    "persist_auto_softmax_f32": dict(row_persist="auto"),
    # persistent blocks without clusters: 5 rows of 32768 over 2 blocks
    "persist_block_softmax_f32": dict(row_persist=2),
    # L2 prefetch of the share a row on (row_prefetch): over a cluster, and
    # a block a row
    "prefetch_cluster_softmax_f32": dict(row_prefetch=1),
    "prefetch_softmax_f32": dict(row_prefetch=2),
    # row tiles of 32 rows (row_tile): a softmax over NCHW's channels
    "tile32_channel_softmax_f32": dict(row_tile=32),
    # NHWC batch statistics split into slices, the variance's slice sums
    # the mean's partials (three partials a slice, not four)
    "shared_mean_bn_nhwc_f32": {},
    # 16 single floats a thread each trip of a streamed row of an odd width
    # (row_trip), with row_occupancy=2 (blocks of at most 512 threads, 320
    # here, two or more an SM)
    "trip16_logsumexp_f32": dict(row_trip=16, row_occupancy=2),
    # LAMB's trust ratio over parameters of five sizes: one-block row
    # kernels of 32 to 288 threads packed into one launch (the narrower
    # kernels' extra warps exit before their barriers), and a parameter of
    # 100000 floats too large to pack, with kernels of its own
    "packed_lamb_f32": {},
    # LAMB's trust ratio over three parameters of 70000 floats, one of 90000
    # and two of 3072: the large ones' split kernels (partials, last block
    # finishing; store) launched apart, those of one size running one
    # kernel each (fusion-dedup-kernels: a programmatic launch's kernel and
    # the first launch's, their grid dependency controls merged), the small
    # ones packed
    "dedup_lamb_f32": {},
    # five pre-norm blocks (h = h + gelu(layernorm(h) * w + b)) over 2 rows
    # of 2^17, every h an output: the rows split over the SMs (a partials
    # kernel a wave, then the store), the long shared values of h kept as
    # ops of their own (fusion-fuse-group-bodies) and recomputed in each
    # kernel that reads them, in a buffer of the kernel's own; only the
    # storing kernel writes the outputs
    "stacked_norms_split_f32": {},
    # the program's inputs loaded non-coherently (readonly_inputs,
    # ld.global.nc): a layer norm's x, w and b; and x / |x| split over the
    # SMs, x read by the partials kernel and by the store, the partials
    # (written by a kernel before) with plain loads
    "readonly_layernorm_f32": dict(readonly_inputs=True),
    "readonly_split_normalize_f32": dict(readonly_inputs=True),
    # streamed log-sum-exp over rows whose terms exp(x - max) are mostly
    # below 2^-126 (x scaled by 300): the online sum's exps and rescales
    # flush them (ex2.approx.ftz), which no output can see
    "flush_logsumexp_f32": {},
}


def new_hardware_programs():
    """The NEW_ON_HARDWARE programs."""
    p = kb.Program("tile32_channel_softmax_f32")
    x = p.input("x", (2, 64, 16, 16), "f32")
    e = kb.exp(x - x.max(axis=1, keepdims=True))
    p.output(e / e.sum(axis=1, keepdims=True), name="y")
    q = kb.Program("shared_mean_bn_nhwc_f32")
    x = q.input("x", (16, 16, 32, 64), "f32")
    c = x - x.mean(axis=(0, 1, 2), keepdims=True)
    q.output(c * kb.rsqrt((c * c).mean(axis=(0, 1, 2), keepdims=True) + 1e-5), name="y")
    r = kb.Program("trip16_logsumexp_f32")
    x = r.input("x", (24, 5001), "f32")
    m = x.max(axis=1, keepdims=True)
    r.output(kb.log(kb.exp(x - m).sum(axis=1)) + x.max(axis=1), name="y")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test",
                                    "python"))
    from _programs import norm_stack
    stack = norm_stack("stacked_norms_split_f32", 5, 2, 1 << 17, every=True)
    n = kb.Program("readonly_split_normalize_f32")
    x = n.input("x", (1 << 20,), "f32")
    n.output(x / kb.sqrt((x * x).sum()), name="y")
    f = kb.Program("flush_logsumexp_f32")
    x = f.input("x", (16, 50001), "f32") * 300.0
    m = x.max(axis=1, keepdims=True)
    f.output(kb.log(kb.exp(x - m).sum(axis=1)) + x.max(axis=1), name="y")
    return [_softmax_program("persist_softmax_f32", (3, 65536)),
            _softmax_program("persist_auto_softmax_f32", (3, 65536)),
            _softmax_program("persist_block_softmax_f32", (5, 32768)),
            _layernorm_program("persist_layernorm_f32", 3, 65536),
            _softmax_program("prefetch_cluster_softmax_f32", (3, 65536)),
            _softmax_program("prefetch_softmax_f32", (8, 8192)), p, q, r,
            _packed_lamb_program(), _dedup_lamb_program(), stack,
            _layernorm_program("readonly_layernorm_f32", 64, 8192), n, f]


def _packed_lamb_program():
    from suite import lamb_program
    return lamb_program("packed_lamb_f32", (1000, 3072, 300, 4160, 100000, 64))


def _dedup_lamb_program():
    from suite import lamb_program
    return lamb_program("dedup_lamb_f32", (3072, 70000, 3072, 70000, 90000, 70000))


def shifted_programs():
    """Rows whose width no vector divides (shifted chunks: aligned vectors,
    the rows' first and last chunks masked), in registers, with per-column
    weights read lane by lane, over a cluster (sm_90), and a few long rows
    with a stored result split over slices (x / |x|)."""
    progs = []
    progs.append(_softmax_program("shifted_softmax_f32", (64, 1025)))  # every shift 0..3
    progs.append(_layernorm_program("shifted_layernorm_f32", 32, 4097))
    # 3 rows over clusters of 8
    progs.append(_softmax_program("shifted_cluster_softmax_f32", (3, 100001)))
    p = kb.Program("shifted_logsumexp_f16")  # streamed: 8 halves a chunk,
    x = p.input("x", (16, 50257), "f16")      # a masked load past x's end
    m = x.max(axis=-1, keepdims=True)
    p.output(kb.log(kb.exp(x - m).sum(axis=-1)) + m.sum(axis=-1), name="y")
    progs.append(p)
    p = kb.Program("packed_softmax_f32")  # 4 rows a block, a warp each;
    x = p.input("x", (1057, 128), "f32")   # the last block's 3 rows past the end
    m = x.max(axis=-1, keepdims=True)
    e = kb.exp(x - m)
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    p.output(m.sum(axis=-1), name="m")  # (a row result: lane 0 of each row's warp)
    progs.append(p)
    p = kb.Program("packed_shifted_lse_f16")  # packed, streamed, rows of an
    x = p.input("x", (1061, 131), "f16")      # odd width (shifted chunks)
    m = x.max(axis=-1, keepdims=True)
    p.output(kb.log(kb.exp(x - m).sum(axis=-1)) + m.sum(axis=-1), name="y")
    progs.append(p)
    p = kb.Program("split_normalize_f32")  # partials, finish, store
    x = p.input("x", (1 << 20,), "f32")
    p.output(x / kb.sqrt((x * x).sum()), name="y")
    progs.append(p)
    return progs


def _softmax64(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# split_tail_programs' results in f64 (numpy's f32 sums drift over a million
# values: see expected_and_tolerance)
SPLIT_TAIL_REFERENCES = {
    "split_tail_full_f32": lambda x: (np.sqrt((x * x).sum()), x.var(),
                                      np.log(np.exp(x - x.max()).sum()) + x.max()),
    "split_tail_rows_f32": lambda x: (x.sum(-1),),
    "split_tail_softmax_f32": lambda x: (_softmax64(x),),
    "split_tail_columns_f32": lambda x: (x.var(0), np.argmax(x, axis=0)),
    "split_tail_bn_f32": lambda x: ((x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5),),
}


def split_tail_programs():
    """Long rows that no good number of slices divides, split anyway into
    equal slices and a tail whose blocks are the partials kernel's last
    (row_split_tail): a full reduction over a prime length (norm, variance,
    log-sum-exp; the last block to count finishes), a few rows of a prime
    width, a softmax stored over the slices and the tail, and reductions
    along a prime count of rows (x.sum(0)-like, slices of rows) with a
    stored x - mean. In tests_wide (their inputs are large)."""
    progs = []
    p = kb.Program("split_tail_full_f32")  # 244 slices of 4096 and a tail of 579
    x = p.input("x", (1000003,), "f32")
    p.output(kb.sqrt((x * x).sum()), name="norm")
    c = x - x.mean(keepdims=True)
    p.output((c * c).mean(), name="var")
    m = x.max(keepdims=True)
    p.output(kb.log(kb.exp(x - m).sum()) + m.sum(), name="lse")
    progs.append(p)
    p = kb.Program("split_tail_rows_f32")  # 7 x 24 slices of 4160 and 7 tails of 163
    x = p.input("x", (7, 100003), "f32")
    p.output(x.sum(axis=-1), name="s")
    progs.append(p)
    p = kb.Program("split_tail_softmax_f32")  # stored over the slices and the tails
    x = p.input("x", (2, 300007), "f32")
    e = kb.exp(x - x.max(axis=-1, keepdims=True))
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    progs.append(p)
    p = kb.Program("split_tail_columns_f32")  # 5882 slices of 17 rows and a tail of 9
    x = p.input("x", (100003, 16), "f32")
    c = x - x.mean(axis=0, keepdims=True)
    p.output((c * c).mean(axis=0), name="var")
    p.output(kb.argmax(x, axis=0), name="am")
    progs.append(p)
    p = kb.Program("split_tail_bn_f32")  # a stored x - mean along 4099 rows
    x = p.input("x", (4099, 64), "f32")
    c = x - x.mean(axis=0, keepdims=True)
    p.output(c * kb.rsqrt((c * c).mean(axis=0, keepdims=True) + 1e-5), name="y")
    progs.append(p)
    return progs


def _test_options(name):
    if name in NEW_ON_HARDWARE:
        return NEW_ON_HARDWARE[name]
    if name.endswith("_fold_f32"):
        return {"sm_count": 8}
    if name.startswith("occupancy2_"):
        # (sm_count=8: these few rows take a block each, not a cluster)
        return {"row_occupancy": 2, "sm_count": 8}
    if not name.startswith("cluster_"):
        return {}
    if name.startswith("cluster_barrier_"):
        return {"row_cluster": 8, "row_exchange": "barrier"}
    return {"row_cluster": 8}


def reduction_programs(rows=256, cols=1000):
    """Row-wise groups (issue 3): each compiles to one kernel."""
    progs = []
    for dt in ("f32", "f16"):
        p = kb.Program(f"softmax_{dt}")
        x = p.input("x", (rows, cols), dt)
        e = kb.exp(x - x.max(axis=-1, keepdims=True))
        p.output(e / e.sum(axis=-1, keepdims=True), name="y")
        progs.append(p)
    p = kb.Program("log_softmax_f32")
    x = p.input("x", (rows, cols), "f32")
    s = x - x.max(axis=-1, keepdims=True)
    p.output(s - kb.log(kb.exp(s).sum(axis=-1, keepdims=True)), name="y")
    progs.append(p)
    p = kb.Program("layernorm_f32")
    x = p.input("x", (rows, cols), "f32")
    w = p.input("w", (cols,), "f32")
    b = p.input("b", (cols,), "f32")
    c = x - x.mean(axis=-1, keepdims=True)
    p.output(c * kb.rsqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5) * w + b, name="y")
    progs.append(p)
    p = kb.Program("rmsnorm_silu_f32")
    x = p.input("x", (rows, cols), "f32")
    w = p.input("w", (cols,), "f32")
    p.output(kb.silu(x * kb.rsqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * w),
             name="y")
    progs.append(p)
    p = kb.Program("l2norm_f32")
    x = p.input("x", (1 << 16,), "f32")
    p.output(kb.sqrt((x * x).sum()), name="y")
    progs.append(p)
    p = kb.Program("softmax_wide_f32")  # rows too long for registers: streaming
    x = p.input("x", (4, 1 << 17), "f32")
    e = kb.exp(x - x.max(axis=-1, keepdims=True))
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    progs.append(p)
    # -inf elements and whole rows of -inf, rows with +inf, rows with NaN: the
    # special cases of a max and a sum of exp(x - max) folded in one pass
    p = kb.Program("softmax_edges_f32")
    x = p.input("x", (rows // 4, 3 * cols), "f32")
    r = p.input("r", (rows // 4, 1), "f32")
    y = kb.where(x > 0.8, -math.inf, x)
    y = kb.where(r > 0.7, -math.inf, y)
    y = kb.where(r < -1.0, kb.where(x > 2.2, math.inf, y), y)
    y = kb.where(r < -0.5, kb.where(r > -1.0, kb.where(x > 2.5, math.nan, y), y), y)
    m = y.max(axis=-1, keepdims=True)
    e = kb.exp(y - m)
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    p.output(kb.log(kb.exp(y - m).sum(axis=-1)) + m.sum(axis=-1), name="lse")
    progs.append(p)
    p = kb.Program("sum_exp_rows_f32")
    x = p.input("x", (rows, 3, 40), "f32")
    p.output(kb.exp(x).sum(axis=(1, 2)), name="y")
    p.output(x.max(axis=-1), name="m")
    progs.append(p)
    # Column sums in a row kernel (layer norm's backward pass); the
    # `_fold` copy is compiled for 8 SMs (_test_options) so that its blocks
    # fold runs of rows into partials even at this size, with a ragged last
    # chunk (1000 columns over 64 threads of 4).
    from suite import layernorm_backward
    for suffix in ("", "_fold"):
        progs.append(layernorm_backward(f"layernorm_bwd{suffix}_f32", rows, cols))
    return progs


def bench_programs():
    p = kb.Program("ew_chain")
    x = p.input("x", (1 << 26,), "f32")
    p.output(kb.log(kb.exp(x) + 1.0), name="y")
    return [p]


def _has_row_kernel(f):
    return any(g.kind == "reduction" for g in f.report.groups)


def _inputs(prog, rng):
    out = []
    for _, shape, dt in prog.inputs:
        a = rng.standard_normal(shape).astype(np.float32)
        out.append(a.astype(dtypes.to_numpy(dt)))
    return out


def builder_test_programs():
    """The builder programs of the GPU test set: (program, extra compile options)."""
    from random_programs import random_program
    # (random programs with argmax / argmin: the seeds below have some)
    randoms = [random_program(s) for s in range(16)] + [
        random_program(s, arg_reductions=True) for s in (0, 4, 5, 6, 7, 11, 14)]
    return [(prog, _test_options(prog.name))
            for prog in test_programs() + cluster_programs() + shifted_programs() +
            split_tail_programs() + new_hardware_programs() + randoms]


def expected_and_tolerance(prog, ins):
    """numpy's results for a builder program and the (rtol, atol) to compare at."""
    with warnings.catch_warnings():  # (-inf - -inf and the like, on purpose)
        warnings.simplefilter("ignore", RuntimeWarning)
        if prog.name in SPLIT_TAIL_REFERENCES:
            # (sums over a million f32 values: numpy adds along a leading
            # axis one row at a time, 5e-4 off for the variance over
            # 1000003 rows of 16; these in f64, then rounded)
            exps = tuple(e.astype(np.float32) if e.dtype == np.float64 else e
                         for e in SPLIT_TAIL_REFERENCES[prog.name](ins[0].astype(np.float64)))
        else:
            exps = prog.reference(*ins)
    if prog.name.startswith("random_"):
        from random_programs import TOLERANCE
        tol = (TOLERANCE[prog.inputs[0][2].name],) * 2
    else:
        tol = max((TOL[dt.name] for _, _, dt in prog.outputs), key=lambda t: t[0])
        tol = max(tol, max(TOL[dt.name] for _, _, dt in prog.inputs))
    if prog.name.startswith("layernorm_bwd"):
        # (f32 sums over all the rows, added in another order than numpy's)
        tol = max(tol, (1e-4, 5e-5))
    if prog.name.startswith("stacked_norms"):
        # (five layers, each feeding the next: a GPU's approximate rsqrt
        # and exp, a few ulp off where the emulator rounds correctly,
        # compound through them)
        tol = max(tol, (2e-5, 2e-5))
    return exps, tol


# Programs written as MLIR (torch-mlir style) in test/python/programs, and
# random data-movement programs ("random:<seed>"): expected values come from
# the CPU target, which the tests check against numpy.
MLIR_TEST_PROGRAMS = (
    "matmul_epilogue.mlir", "conv_bias_relu.mlir", "batch_matmul.mlir",
    "softmax.mlir", "transpose.mlir", "bcast.mlir", "const.mlir",
    "softmax_xent.mlir", "column_mean.mlir", "dense_resource.mlir",
    "matmul_bias_first.mlir", "two_matmuls.mlir",
    "accumulate_into_arg.mlir", "init_twice.mlir", "torch/torch_softmax.mlir",
    "torch/torch_layernorm.mlir", "torch/torch_linear_gelu_residual.mlir",
    "torch/torch_bias_gelu.mlir", "torch/torch_conv_relu.mlir",
    "torch/torch_residual_conv.mlir", "torch/torch_pad.mlir",
    "torch/torch_view_chain.mlir", "torch/torch_transformer_block.mlir",
    "torch/torch_mha.mlir", "torch/torch_rotary.mlir", "attention_slices.mlir",
    "aligned_rows.mlir", "torch/torch_sdpa_causal.mlir", "masked_rows.mlir",
    "batch1_rows.mlir", "arg_rows.mlir", "torch/torch_greedy.mlir",
    "long_rows.mlir", "torch/torch_layernorm_bwd.mlir",
    "torch/torch_batch_stats_nhwc.mlir", "torch/torch_gelu_tanh_bwd.mlir",
    "torch/torch_cross_entropy_loss.mlir", "torch/torch_kl_div.mlir",
    "torch/torch_attention_bwd.mlir", "torch/torch_scalar_weights.mlir",
    "torch/torch_instance_norm.mlir", "torch/torch_conv_transpose_roll.mlir",
    "torch/torch_stack_mul.mlir", "torch/torch_group_norm_silu.mlir",
    "torch/torch_group_norm_b1.mlir", "sliced_rows.mlir",
    "torch/torch_causal_lm_loss.mlir", "torch/torch_masked_mean_pool.mlir",
    "torch/torch_masked_slice_sum.mlir", "torch/torch_sentence_mean_pool.mlir",
    "torch/torch_bert_embeddings.mlir", "torch/torch_adam_step.mlir",
    "torch/torch_clip_grad_norm.mlir", "torch/torch_embedding_add_ln.mlir",
    "ordered/ordered_reductions.mlir",
    *(f"random:{seed}" for seed in range(12)))


def mlir_test_program(entry):
    """(name, MLIR text) of an entry of MLIR_TEST_PROGRAMS."""
    if entry.startswith("random:"):
        from random_programs import random_mlir_program
        return f"mlir_random_mlir_{entry[7:]}", random_mlir_program(int(entry[7:]))[0]
    prog_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test",
                            "python", "programs")
    with open(os.path.join(prog_dir, entry)) as fh:
        return "mlir_" + os.path.basename(entry)[:-5], fh.read()


def mlir_inputs(cpu, rng, entry=None):
    """Inputs for a compiled MLIR test program: labels in range, masks about
    60% true, floats normal. The integer inputs of a program exported from
    PyTorch (`entry` of MLIR_TEST_PROGRAMS) are the ones it was exported
    with: ids index tables of their own sizes (BERT's token types, two)."""
    recorded = {}
    if entry and entry.startswith("torch/"):
        npz = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test",
                           "python", "programs", entry[:-5] + ".npz")
        with np.load(npz) as data:
            recorded = {i: data[f"in{i}"] for i in range(len(cpu.inputs))
                        if f"in{i}" in data.files}

    def one(i, s):
        if s.dtype.name == "i64":
            if i in recorded and recorded[i].shape == tuple(s.shape):
                return recorded[i].astype(np.int64)
            return rng.integers(0, cpu.inputs[0].shape[-1], s.shape).astype(np.int64)
        if s.dtype.name == "i1":
            return rng.random(s.shape) < 0.6
        return rng.standard_normal(s.shape).astype(np.float32)
    return [one(i, s) for i, s in enumerate(cpu.inputs)]


def occupancy_programs():
    """Softmaxes over 256 rows whose rows take clusters of 2, 4, 8 and 16
    blocks, each block as the 262144-wide softmax's without shared memory
    (row_smem=0: 1024 threads x 8 vectors, the 262144-wide softmax's
    default; 16: 512 threads), and the 262144 softmax with row_cluster=4 (as
    with cluster barriers by default; `occupancy_smem_c4`: clusters of 4
    blocks, each with 176 KB of dynamic shared memory; `occupancy_smem_c8_occ2`:
    row_occupancy=2, clusters of 8 blocks of 512 threads with 88 KB
    each, two an SM): for
    bench/cluster_occupancy.py, which asks the driver how many such clusters
    the GPU holds at once."""
    from kfuse import builder as kb
    out = []
    for name, width, cluster, opts in (
            ("occupancy_c2", 65536, 2, dict(row_chunks=8, row_smem=0)),
            ("occupancy_c4", 131072, 4, dict(row_chunks=8, row_smem=0)),
            ("occupancy_c8", 262144, 8, dict(row_chunks=8, row_smem=0)),
            ("occupancy_c16", 262144, 16, dict(row_chunks=8, row_smem=0, row_cluster=16)),
            ("occupancy_smem_c4", 262144, 4, dict(row_cluster=4)),
            ("occupancy_smem_c8_occ2", 262144, 8, dict(row_occupancy=2))):
        p = kb.Program(name)
        x = p.input("x", (256, width), "f32")
        e = kb.exp(x - x.max(axis=-1, keepdims=True))
        p.output(e / e.sum(axis=-1, keepdims=True), name="y")
        out.append((p, cluster, opts))
    return out


def _lighter_cluster_fence(src: str, dst: str):
    """An experiment, not a compiler feature: the cluster kernel of `src` with
    its cluster-scope fence (fence.acq_rel.cluster, ordering the block total's
    store before the relaxed cluster arrival) replaced by the lighter
    fence.release.sync_restrict::shared::cta.cluster, which orders only
    shared::cta stores (all the combine needs) and wants PTX ISA 8.6. Written
    beside the workload as `name__srfence` to measure before codegen adopts
    it (nvvm.fence.sync_restrict and the +ptx86 feature)."""
    import shutil
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    path = os.path.join(dst, "kernels.ptx")
    with open(path) as fh:
        ptx = fh.read()
    version = re.search(r"^\.version 8\.[0-5]$", ptx, re.M)
    if "fence.acq_rel.cluster;" not in ptx or not version:
        raise SystemExit(f"{src}: no cluster fence or PTX version below 8.6 to rewrite")
    ptx = ptx.replace("fence.acq_rel.cluster;",
                      "fence.release.sync_restrict::shared::cta.cluster;")
    with open(path, "w") as fh:
        fh.write(ptx[:version.start()] + ".version 8.6" + ptx[version.end():])


def _late_trigger(src: str, dst: str):
    """An experiment, not a compiler feature: the program of `src` with each
    kernel followed by a programmatic launch signalling its dependents
    (griddepcontrol.launch_dependents) just before it returns instead of
    first thing, so that the next kernel's blocks become resident only as
    this one's blocks end. Written beside the workload as `name__pdllate`."""
    import shutil
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    path = os.path.join(dst, "kernels.ptx")
    with open(path) as fh:
        ptx = fh.read()
    trigger = "\tgriddepcontrol.launch_dependents;\n"
    if trigger not in ptx:
        raise SystemExit(f"{src}: no griddepcontrol.launch_dependents to move")
    out = []
    # (an entry runs from `.entry` to the `}` that closes it at column 0)
    for part in re.split(r"(?m)(?=^\.visible \.entry )", ptx):
        if trigger in part:
            part = part.replace(trigger, "")
            part = re.sub(r"(?m)^(\s*)ret;", lambda m: f"{m.group(1)}griddepcontrol.launch_dependents;\n"
                          f"{m.group(1)}ret;", part)
        out.append(part)
    with open(path, "w") as fh:
        fh.write("".join(out))


def _streaming_hints(src: str, dst: str, loads: bool):
    """An experiment, not a compiler feature: the program of `src` with its
    global vector stores (and, with `loads`, its global vector loads, weights
    read by every row included) marked .cs, cache streaming: evict first,
    the data are not read again. Written beside the workload as `name__stcs`
    (stores) and `name__cs` (both)."""
    import shutil
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    path = os.path.join(dst, "kernels.ptx")
    with open(path) as fh:
        ptx = fh.read()
    new = re.sub(r"\bst\.global\.v", "st.global.cs.v", ptx)
    if loads:
        new = re.sub(r"\bld\.global\.v", "ld.global.cs.v", new)
    if new == ptx:
        raise SystemExit(f"{src}: no global vector access to mark")
    with open(path, "w") as fh:
        fh.write(new)


def _l2_order(src: str, dst: str):
    """An experiment, not a compiler feature: a split's store kernel, which
    reads its input again, takes its blocks in the order that finds most of
    what the partials kernel read last still in L2. The partials kernel
    runs its S slices at once (one wave), each from its first position on,
    so what is left in L2 when it ends is the end of every slice; the store
    kernel's blocks, B a slice in position order, are taken here the last of
    every slice first, then the one before: block j runs the original block
    (j % S) * B + (B - 1 - j / S) (a permutation of the blocks, whose
    results do not depend on their order). S is the partials' slice count
    (the largest leading extent of the temporaries the first launch, the
    partials kernel, is given: a full reduction's partials are [S], its total
    [1]; the kernel is named `_partial`, or the group's own name where its
    last block finishes, as l2_normalize's). Written beside the workload as
    `name__l2order`."""
    import json
    with open(os.path.join(src, "plan.json")) as fh:
        plan = json.load(fh)
    launches = [s for s in plan["steps"] if s["op"] == "launch"]
    store = launches[-1]
    partial = launches[0] if len(launches) > 1 else None
    if partial is None or not store["kernel"].endswith("_store") or store["grid"][1:] != [1, 1]:
        raise SystemExit(f"{src}: no partials kernel and one-dimensional store to reorder")
    temps = [plan["buffers"][a["buffer"]] for a in partial["args"] if "buffer" in a]
    slices = {b["shape"][0] for b in temps if b["kind"] == "temp" and b["shape"]}
    blocks = store["grid"][0]
    if not slices or blocks % max(slices) or blocks == max(slices):
        raise SystemExit(f"{src}: the store's {blocks} blocks are not whole slices of "
                         f"the partials' {sorted(slices)}")
    s = max(slices)
    b = blocks // s
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    path = os.path.join(dst, "kernels.ptx")
    with open(path) as fh:
        ptx = fh.read()
    out = []
    declared = done = 0
    for part in re.split(r"(?m)(?=^\.visible \.entry )", ptx):
        if part.startswith(f".visible .entry {store['kernel']}("):
            part, declared = re.subn(r"(?m)^\{$", "{\n\t.reg .b32 \t%kfl<2>;", part,
                                     count=1)
            part, done = re.subn(
                r"(?m)^(\s*)mov\.u32 \t(%r\d+), %ctaid\.x;$",
                lambda m: "\n".join(m.group(1) + line for line in (
                    "mov.u32 \t%kfl0, %ctaid.x;", f"rem.u32 \t%kfl1, %kfl0, {s};",
                    f"div.u32 \t%kfl0, %kfl0, {s};", f"mul.lo.u32 \t%kfl1, %kfl1, {b};",
                    f"add.u32 \t%kfl1, %kfl1, {b - 1};",
                    f"sub.u32 \t{m.group(2)}, %kfl1, %kfl0;")), part)
        out.append(part)
    if not (declared and done):
        raise SystemExit(f"{src}: no %ctaid.x read in {store['kernel']} to reorder")
    with open(path, "w") as fh:
        fh.write("".join(out))


# The workloads also saved as name__tuned (kfuse.autotune): those still
# short of their targets, or of torch.compile, on an H100 or an H200.
TUNED_WORKLOADS = ("softmax_w262144", "softmax_w32768", "softmax_xent_v50257", "layernorm",
                   "rmsnorm_silu", "relu_bn_add_relu", "bias_gelu", "softmax_xent",
                   "bn_train_nhwc", "softmax")
# Those tuned with pairs of options too (autotune's pairs=True: the
# cross-entropy's trips with two blocks an SM, the clusters' exchanges with
# their occupancy); the others' pairs would take the owed device call past
# the 64 MiB it carries.
TUNED_PAIRS = ("softmax_xent_v50257", "softmax_w262144")


def _min_blocks(src: str, dst: str, blocks: int):
    """An experiment, not a compiler feature: the program of `src` with each
    kernel asking ptxas for `blocks` resident blocks an SM (.minnctapersm),
    which caps its registers: layernorm's 40 registers a thread (3 blocks of
    512 an SM) become 32 with 8 bytes spilled (4 blocks), cross-entropy's 49
    become 40 with 16 (3 blocks, not 2). Written beside the workload as
    `name__mncN`, to time before codegen sets nvvm.minctasm itself."""
    import shutil
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    path = os.path.join(dst, "kernels.ptx")
    with open(path) as fh:
        ptx = fh.read()
    new = re.sub(r"(?m)^(\.maxntid \d+, \d+, \d+)$",
                 lambda m: f"{m.group(1)}\n.minnctapersm {blocks}", ptx)
    if new == ptx or ".minnctapersm" in ptx:
        raise SystemExit(f"{src}: no .maxntid to add .minnctapersm after")
    with open(path, "w") as fh:
        fh.write(new)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--chip", default="sm_90")
    ap.add_argument("--suite", action="store_true",
                    help="also compile the issue-4 workload suite (bench/suite.py)")
    ap.add_argument("--row-variants", action="store_true",
                    help="with --suite: also row kernels streaming and with 8 and 16 "
                         "chunks per thread, the 262144-wide softmax without clusters "
                         "and over clusters of 16 blocks of 512 threads, and every "
                         "workload of several kernels with plain launches (pdl=False)")
    ap.add_argument("--variants", action="store_true",
                    help="also compile a sweep of strategies for the bench programs")
    ap.add_argument("--keep-stages", action="store_true",
                    help="keep each program's stages/ (the IR after each stage: about "
                         "20 MB over tests, tests_wide and suite, which the GPU machine "
                         "does not read and a device call's 64 MiB must carry)")
    ap.add_argument("--row-chunks", type=int, default=None,
                    help="compile the test programs with this row_chunks (default: kfuse's; "
                         "0 streams every row)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    test_opts = {} if args.row_chunks is None else {"row_chunks": args.row_chunks}
    for prog, extra in builder_test_programs():
        # (the programs over rows of 262144, whose inputs are the largest,
        # go to tests_wide/: a device call carries 64 MiB with the tree;
        # the --row-chunks sets, with fewer programs, keep them)
        wide = args.row_chunks is None and prog.name.startswith(("cluster_", "softmax_wide",
                                                                 "split_tail_", "occupancy2_"))
        folder = ("tests_new" if prog.name in NEW_ON_HARDWARE
                  else "tests_wide" if wide else "tests")
        d = os.path.join(args.out, folder, prog.name)
        t0 = time.perf_counter()
        opts = dict(test_opts, **extra)
        f = kfuse.compile(prog, target="cuda", chip=args.chip, **opts)
        ins = _inputs(prog, rng)  # (drawn for every program: same inputs either way)
        if test_opts and (not _has_row_kernel(f)
                          or prog.name.startswith(("cluster_", "occupancy2_"))):
            continue  # --row-chunks changes only (register-mode) row kernels
        f.save(d)
        exps, tol = expected_and_tolerance(prog, ins)
        arrays = {}
        for i, a in enumerate(ins):
            arrays[f"in{i}"] = a.view(np.uint16) if a.dtype.name == "bfloat16" else a
        for i, a in enumerate(exps):
            arrays[f"expected{i}"] = a.view(np.uint16) if a.dtype.name == "bfloat16" else a
        np.savez(os.path.join(d, "check.npz"), tol=np.array(tol), **arrays)
        print(f"{d}: {f.report.after.kernels} kernel(s), {time.perf_counter() - t0:.2f} s")
    if args.row_chunks is None:
        # kfuse.autotune's variants of a softmax over rows of 65536 (a split
        # by default; a cluster of 16 blocks, two blocks an SM, ...), timed
        # by the runtime on the GPU at the first call (test_gpu.py)
        prog = kb.Program("tuned_softmax_f32")
        x = prog.input("x", (2, 65536), "f32")
        e = kb.exp(x - x.max(axis=1, keepdims=True))
        prog.output(e / e.sum(axis=1, keepdims=True), name="y")
        d = os.path.join(args.out, "tests_new", prog.name)
        t = kfuse.autotune(prog, chip=args.chip)
        shutil.rmtree(d, ignore_errors=True)
        t.save(d)
        ins = _inputs(prog, rng)
        exps, tol = expected_and_tolerance(prog, ins)
        np.savez(os.path.join(d, "check.npz"), tol=np.array(tol), in0=ins[0],
                 expected0=exps[0])
        print(f"{d}: {len(t.labels)} variants, compiled in {t.compile_seconds:.2f} s")
    if args.suite:
        from suite import programs
        for name, prog in programs().items():
            d = os.path.join(args.out, "suite", name)
            t0 = time.perf_counter()
            f = kfuse.compile(prog, target="cuda", chip=args.chip)
            compile_s = time.perf_counter() - t0
            f.save(d)
            with open(os.path.join(d, "compile_seconds.txt"), "w") as fh:
                fh.write(f"{compile_s:.4f}\n")
            print(f"{d}: {f.report.after.kernels} kernel(s), compiled in {compile_s:.2f} s")
            variants = {}
            pf_variants = {}
            late = False
            if args.row_variants and name == "softmax_w256":
                # a block per row (32 threads; default: 4 rows a block, a warp each)
                variants = {"pack1": dict(row_pack=1), "pack2": dict(row_pack=2),
                            "pack8": dict(row_pack=8), "pack32": dict(row_pack=32)}
            if args.row_variants and name == "softmax_w262144":
                variants = {"cl0": dict(row_cluster=0),  # one block per row, streaming
                            # 512 threads x 8, two blocks an SM
                            "cl16": dict(row_cluster=16, row_chunks=8),
                            # clusters of 8 blocks of 512 threads, two an SM:
                            # 5 vectors a thread in registers, 11 in 88 KB of
                            # shared memory
                            "occ2": dict(row_occupancy=2),
                            "occ2_barrier": dict(row_occupancy=2,
                                                 row_exchange="barrier"),
                            # (default: clusters of 8 in registers only, totals
                            # sent with st.async, awaited on mbarriers)
                            # clusters of 4 with 11 of each thread's 16 vectors
                            # in shared memory
                            "cl4": dict(row_cluster=4),
                            # totals published, a cluster barrier per exchange
                            # (then clusters of 4 with shared memory, as cl4)
                            "barrier": dict(row_exchange="barrier"),
                            "barrier_nosmem": dict(row_exchange="barrier", row_smem=0),
                            # an exchange per reduction (the max's, then the sum's)
                            "nojoint": dict(row_joint=False),
                            "barrier_nojoint": dict(row_exchange="barrier",
                                                    row_joint=False)}
            if args.row_variants and name in ("softmax", "layernorm", "rmsnorm_silu",
                                              "softmax_xent", "softmax_w32768", "l2norm",
                                              "layernorm_bwd"):
                # (0: streaming, one pass per dependency level)
                variants = {f"c{chunks}": dict(row_chunks=chunks) for chunks in (0, 2, 8, 16)}
            if args.row_variants and name == "softmax_w32768":
                # two blocks an SM (default: one block of 1024 threads a row,
                # 8 vectors a thread in registers, one an SM): a block of 512
                # threads a row, 6 vectors a thread in registers and 10 in
                # 80 KB of shared memory; in registers only, clusters of 4
                # blocks of 512 threads (4 vectors a thread), or of 2 (8)
                variants.update({"occ2": dict(row_occupancy=2),
                                 "occ2_nosmem": dict(row_occupancy=2, row_smem=0),
                                 "occ2_c8_nosmem": dict(row_occupancy=2, row_smem=0,
                                                        row_chunks=8)})
            if args.row_variants:
                # each block asks L2 for its share of the row this many rows
                # on once its own has landed (row_prefetch; default: none):
                # about the rows the GPU runs at once, or twice that (132
                # SMs: 132 blocks of 1024 threads, or 528 of 512, a row each;
                # 15 or 16 clusters of 8)
                pf = {"softmax_w262144": (16, 32), "softmax_w32768": (132, 264),
                      "softmax": (528, 1056), "layernorm": (528, 1056),
                      "rmsnorm_silu": (528, 1056), "group_norm_silu": (132, 264),
                      "group_norm_silu_b1": (16,)}.get(name, ())
                pf_variants = {f"pf{n}": dict(row_prefetch=n) for n in pf}
                # a persistent kernel of at most 15 or 16 clusters, or as many
                # as the GPU holds ("auto"), each block's share of its next
                # row copied into shared memory meanwhile (row_persist; an
                # H100 holds 15 clusters of 8 at once)
                # (rows a block holds: persistent blocks, at most 132, or as
                # many as the GPU holds)
                ps = {"softmax_w262144": (15, 16, "auto"),
                      "group_norm_silu_b1": (15, "auto"),
                      "softmax_w32768": (132, "auto"), "softmax": ("auto",),
                      "layernorm": ("auto",), "rmsnorm_silu": ("auto",)}.get(name, ())
                pf_variants.update({f"ps{n}": dict(row_persist=n) for n in ps})
            if args.row_variants and name == "l2_normalize":
                # its store over the partials' slices, a block of 512 threads
                # x 8 vectors each (default: over pieces of them, 2048
                # floats a block of 256 threads)
                variants = {"slicestore": dict(row_store_transposed=False)}
            if args.row_variants and name == "bn_train_nchw":
                # clusters of 16 blocks of 512 threads, two blocks an SM
                # (default: clusters of 8 blocks of 1024 threads, one an SM,
                # each loading, combining and storing in turn)
                variants = {"cl16": dict(row_cluster=16)}
            if args.row_variants and name in ("softmax_nchw", "softmax_dim0"):
                # row tiles of 16 and 32 rows (default: 8 of f32, a 32-byte
                # sector of each column; 32: whole 128-byte lines)
                variants = {f"tile{n}": dict(row_tile=n) for n in (16, 32)}
                if name == "softmax_dim0":
                    # (its split's store over the slices, scalars; default:
                    # over (rows, columns), vectors along the columns)
                    variants["slicestore"] = dict(row_store_transposed=False)
            if args.row_variants and name in ("ew_chain", "bias_gelu", "relu_bn_add_relu"):
                # 2 or 4 vectors a thread in one trip, loaded first (default: a
                # vector a thread over the whole space): grids of a half or a
                # quarter of the blocks, capped by sm_count=1 x blocks_per_sm
                grid = f.plan.steps[0].grid[0]
                variants = {f"v{v}": dict(sm_count=1, blocks_per_sm=grid // v, unroll=v)
                            for v in (2, 4) if len(f.plan.steps) == 1 and grid % v == 0}
            if args.row_variants and name == "bn_train_nhwc":
                # the store over the slices, a thread a slice and channel,
                # scalars (row_store_transposed=False; default: over
                # (positions, channels), 16-byte vectors along the channels,
                # mean and 1 / sqrt(var + eps) from the finishing kernel);
                # 1024 slices of 196 rows (sm_count=264; default: 512 of 392,
                # 3.9 blocks of 256 threads an SM for the partials, a thread
                # a channel with scalar loads): twice the blocks and loads in
                # flight
                variants = {"slicestore": dict(row_store_transposed=False),
                            "sm264": dict(sm_count=264)}
            if args.row_variants and name == "bn_train_nhwc_c64":
                # the store over the slices, scalars (row_store_transposed=
                # False; default: over (positions, channels), 16 lanes a
                # position, one vector a thread)
                variants = {"slicestore": dict(row_store_transposed=False)}
            if args.row_variants and name == "softmax_w4096":
                variants = {"c2": dict(row_chunks=2), "c8": dict(row_chunks=8)}
            if args.row_variants and name == "group_norm_silu":
                # rows of 40960 in registers only: clusters of 4 blocks of
                # 640 threads (default: one block of 1024, 64 KB of each
                # row in shared memory)
                variants = {"nosmem": dict(row_smem=0)}
            if args.row_variants and name == "group_norm_silu_b1":
                # an exchange for the mean, another for the variance (default:
                # both in one, each block's squares around its own mean)
                variants = {"nojoint": dict(row_joint=False),
                            # totals published, a cluster barrier per exchange
                            # (default: sent with st.async)
                            "barrier": dict(row_exchange="barrier"),
                            # blocks of 512 threads, two an SM
                            "occ2": dict(row_occupancy=2)}
            if args.row_variants and name == "l2norm_prime":
                # one block over the whole row (default: 1056 slices of 63544
                # columns and a tail of 6395, 1057 blocks)
                variants = {"notail": dict(row_split_tail=False)}
            if args.row_variants and name == "colsum_prime":
                # unsplit: 64 blocks of 1024 threads (default: 263 slices of
                # 380 rows and a tail of 63, 528 blocks, then a finish)
                variants = {"notail": dict(row_split_tail=False)}
            if args.row_variants and name == "softmax_xent_v50257":
                # shifted chunks (default: streamed rows of an odd width in single floats)
                variants = {"shift": dict(row_shift=True)}
                # 16 single floats a thread each trip, 64 bytes as aligned
                # rows' 4 vectors (default: 4; ptxas on sm_90: 30 registers,
                # blocks of 1024 threads, 2 an SM, 32 KB in flight an SM):
                # 47 registers, one block of 1024 an SM, 64 KB; with
                # row_occupancy=2 blocks of 512 threads, 48 registers, 2 an
                # SM, 64 KB (an aligned cross-entropy's shape, 0.948 of the
                # copy bandwidth on an H200, against this one's 0.69); 8 a
                # trip, blocks of 512: 35 registers, 3 an SM, 48 KB
                variants.update({"trip16": dict(row_trip=16),
                                 "trip16_occ2": dict(row_trip=16, row_occupancy=2),
                                 "trip8_occ2": dict(row_trip=8, row_occupancy=2)})
            if args.row_variants and name == "layernorm_bwd":
                # rows each block folds into the column sums' partials (default:
                # 64 here, 32 before 2026-11-28; 1: every term stored)
                variants.update({f"fold{n}": dict(row_fold=n) for n in (1, 8, 16, 32)})
            if args.row_variants and name in ("layernorm_bwd_h768", "layernorm_bwd_h1024",
                                              "layernorm_mean_pool"):
                # a block a row, its runs of rows folded into partials (default:
                # a warp a row, 8 rows a block, the warps' partials added in
                # shared memory); 4 rows a block
                variants = {"pack1": dict(row_pack=1), "pack4": dict(row_pack=4)}
            if args.row_variants and name == "layernorm_bwd_h2048":
                # a block of 128 threads a row, runs of 8 rows (default: 4
                # rows a block, a group of 4 warps each, the groups' partials
                # added in shared memory); 2 rows a block
                variants = {"pack1": dict(row_pack=1), "pack2": dict(row_pack=2)}
            if args.row_variants and any(getattr(s, "programmatic", False)
                                         for s in f.plan.steps):
                # kernels after the first launched plainly, once the one before
                # has ended (default: programmatically, waiting on the GPU)
                variants["nopdl"] = dict(pdl=False)
                late = True
            if args.row_variants and name == "lamb_bert":
                # the matrices' partials and store kernels (fewer blocks than
                # SMs, more than 1 MiB of buffers) packed too
                variants["packbig"] = dict(pack_bytes=1 << 30)
                # the matrices' partials kernels (144 blocks or fewer) as
                # before the underfilled streamed rows took more threads: 64
                # threads a block, 4 vectors a trip (default: 128, each
                # thread's 8 in one trip); the same grids and blocks as
                # before, though kernels whose share took one trip now take
                # trips of 4 as well
                variants["trip4"] = dict(row_trip=4)
            if args.row_variants and any(getattr(s, "packs", ()) for s in f.plan.steps):
                # a launch a kernel (default: small independent kernels
                # packed into shared launches, fusion-pack-launches)
                variants["nopack"] = dict(multi_tensor=False)
            if args.row_variants and name in ("softmax_xent_v50257", "softmax_xent",
                                              "argmax_v128256", "l2norm_prime", "lm_loss",
                                              "bn_var_nhwc", "bn_train_nhwc",
                                              "colsum_prime"):
                # every trip of the streamed rows tests its chunks against the
                # row's end (default: the trips wholly in the row untested, the
                # last one tested; bench/issue_counts.py: 13.0 against 19.3
                # PTX warp-instructions per 128 B for softmax_xent_v50257;
                # a thread per row, the NHWC statistics' and colsum_prime's
                # split partials: 8.2 against 13.5 for bn_var_nhwc)
                variants["nopeel"] = dict(row_peel=False)
                if name == "softmax_xent_v50257":
                    variants["trip16_nopeel"] = dict(row_trip=16, row_peel=False)
            if args.row_variants and name in ("layernorm", "rmsnorm_silu", "gelu_bwd_bias"):
                # the program's inputs loaded with ld.global.nc (readonly_inputs,
                # fusion-readonly-inputs): ptxas issues the weights' loads of
                # later chunks before the output's earlier stores (default:
                # after each, a round trip to L2 a chunk), with more registers
                # (layernorm 40 -> 44, rmsnorm_silu 32 -> 39: a block of 512
                # fewer an SM; __nc_mncN below keeps the default's blocks);
                # gelu_bwd_bias's kernel 40 -> 32 (8 blocks of 256 an SM, not 6)
                variants["nc"] = dict(readonly_inputs=True)
            if args.row_variants and any(b.kind == "counter" for b in f.plan.buffers):
                # the split row's finish as a kernel of its own (default: the
                # partials kernel's last block to count finishes)
                variants["split2"] = dict(row_last_block=False)
            variants.update(pf_variants)
            for suffix, opts in variants.items():
                t0 = time.perf_counter()
                f = kfuse.compile(prog, target="cuda", chip=args.chip, **opts)
                dv = f"{d}__{suffix}"
                f.save(dv)
                with open(os.path.join(dv, "compile_seconds.txt"), "w") as fh:
                    fh.write(f"{time.perf_counter() - t0:.4f}\n")
            if args.row_variants and name in TUNED_WORKLOADS:
                # kfuse.autotune's variants (and their pairs, TUNED_PAIRS),
                # the runtime choosing on the GPU at the first call
                # (bench_suite.py: tuned_choice, tuned_us)
                t = kfuse.autotune(prog, chip=args.chip, pairs=name in TUNED_PAIRS)
                dv = f"{d}__tuned"
                shutil.rmtree(dv, ignore_errors=True)
                t.save(dv)
                with open(os.path.join(dv, "compile_seconds.txt"), "w") as fh:
                    fh.write(f"{t.compile_seconds:.4f}\n")
            if args.row_variants and name == "softmax_w262144":
                _lighter_cluster_fence(f"{d}__barrier", f"{d}__srfence")
            if late:
                _late_trigger(d, f"{d}__pdllate")
            if args.row_variants and name in ("bn_train_nhwc", "bn_train_nhwc_c64",
                                              "softmax_dim0", "l2_normalize"):
                _l2_order(d, f"{d}__l2order")
            if args.row_variants and name in ("softmax", "layernorm", "rmsnorm_silu",
                                              "bias_gelu", "softmax_w4096",
                                              "softmax_w32768"):
                _streaming_hints(d, f"{d}__stcs", loads=False)
                _streaming_hints(d, f"{d}__cs", loads=True)
            if args.row_variants and name in ("layernorm", "rmsnorm_silu"):
                # (__nc with .minnctapersm: the default's blocks an SM;
                # rmsnorm_silu 32 registers, no spill; layernorm 40, 8 bytes
                # spilled)
                keep = {"layernorm": 3, "rmsnorm_silu": 4}[name]
                _min_blocks(f"{d}__nc", f"{d}__nc_mnc{keep}", keep)
            # (register caps with few bytes spilled, per ptxas -v on sm_90)
            blocks = {"layernorm": 4, "softmax_xent": 3, "lm_loss": 3}.get(name)
            if args.row_variants and blocks:
                _min_blocks(d, f"{d}__mnc{blocks}", blocks)
        from kfuse.runtime.ptx import cluster_shapes
        for prog, cluster, opts in occupancy_programs():
            f = kfuse.compile(prog, target="cuda", chip=args.chip, **opts)
            shape = cluster_shapes(f.ptx).get(f"{prog.name}_g0")
            if shape != (cluster, 1, 1):
                raise SystemExit(f"{prog.name}: clusters of {shape}, expected {cluster}")
            f.save(os.path.join(args.out, "suite", prog.name))
    for entry in MLIR_TEST_PROGRAMS:
        name, text = mlir_test_program(entry)
        cpu = kfuse.compile(text, target="cpu")
        f = kfuse.compile(text, target="cuda", chip=args.chip, **test_opts)
        d = os.path.join(args.out, "tests", name)
        if test_opts and not _has_row_kernel(f):
            continue
        f.save(d)
        ins = mlir_inputs(cpu, rng, entry)
        exps = cpu(*ins)
        exps = exps if isinstance(exps, tuple) else (exps,)
        arrays = {f"in{i}": a for i, a in enumerate(ins)}
        arrays.update({f"expected{i}": a for i, a in enumerate(exps)})
        np.savez(os.path.join(d, "check.npz"), tol=np.array((1e-4, 1e-5)), **arrays)
        print(f"{d}: {f.report.after.kernels} kernel(s)")
    variants = [dict()]
    if args.variants:  # strategy sweep: (threads, unroll, blocks_per_sm)
        variants += [dict(threads=t, unroll=u, blocks_per_sm=b) for t, u, b in
                     [(256, 1, 8), (256, 2, 16), (512, 4, 4), (256, 1, 100000),
                      (128, 4, 16), (1024, 2, 2), (256, 8, 8)]]
    for prog, strategy in [(p, v) for p in bench_programs() for v in variants]:
        suffix = "".join(f"_{k[0]}{v}" for k, v in strategy.items())
        d = os.path.join(args.out, "bench", prog.name + suffix)
        t0 = time.perf_counter()
        f = kfuse.compile(prog, target="cuda", chip=args.chip, **strategy)
        compile_s = time.perf_counter() - t0
        f.save(d)
        with open(os.path.join(d, "compile_seconds.txt"), "w") as fh:
            fh.write(f"{compile_s:.4f}\n")
        print(f"{d}: compiled in {compile_s:.2f} s")
    if not args.keep_stages:
        for root, dirs, _ in os.walk(args.out):
            if "stages" in dirs and os.path.isfile(os.path.join(root, "plan.json")):
                shutil.rmtree(os.path.join(root, "stages"))
                dirs.remove("stages")


if __name__ == "__main__":
    main()
