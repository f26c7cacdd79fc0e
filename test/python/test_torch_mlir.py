"""Programs exported from PyTorch by torch-mlir's FX importer compile unchanged.

test/python/programs/torch/ holds the exported .mlir (generated with
export.py there: torch-mlir 20261001, torch 2.13.0) with the inputs and
PyTorch's outputs. They use what torch-mlir emits: keepdims reductions into
tensor<Nx1xT> through (d0, 0) maps, f64 accumulation, dense_resource weights,
a transposed weight feeding a matmul, tensor.pad before convolutions, cf.assert
in batch norm's arithmetic, views between elementwise ops."""

import os
import re

import numpy as np
import pytest

pytest.importorskip("mlir")
import kfuse  # noqa: E402
from _programs import program_text, stacked_layers  # noqa: E402

HERE = os.path.join(os.path.dirname(__file__), "programs", "torch")
# name -> (kernels after fusion, group kinds)
EXPECTED = {
    "torch_softmax": (1, ["reduction"]),
    "torch_layernorm": (1, ["reduction"]),
    # the weight transpose folds into the matmul's indexing map
    "torch_linear_gelu_residual": (1, ["contraction"]),
    "torch_bias_gelu": (1, ["elementwise"]),
    # tensor.pad -> a gather the convolution evaluates where it reads (the
    # padding is never written); the bias init and relu join the convolution
    "torch_conv_relu": (1, ["contraction"]),
    # batch norm's per-channel math (with its cf.assert) and the residual too
    "torch_residual_conv": (1, ["contraction"]),
    # exp fused through the pad into the multiply
    "torch_pad": (1, ["elementwise"]),
    # sigmoid, view (collapse + expand), tanh, add: one kernel
    "torch_view_chain": (1, ["elementwise"]),
    # 59 ops: layernorm | qkv matmul+bias | q@k^T /8 (the q and k thirds of
    # qkv, k transposed, read in place through views) | softmax | a@v (the v
    # third in place) | proj+bias+residual | layernorm | fc1+bias+gelu |
    # fc2+bias+residual (the view after fc2 is hoisted above the matmul)
    "torch_transformer_block": (9, ["reduction", "contraction", "contraction",
                                    "reduction", "contraction", "contraction",
                                    "reduction", "contraction", "contraction"]),
    # slices of the halves, negf, torch.cat (a gather), * cos + x * sin
    "torch_rotary": (1, ["elementwise"]),
    # 4 heads: qkv matmul+bias | q@k^T /4 (heads viewed, transposed and
    # batched: read in place through floordiv/mod maps) | softmax | a@v |
    # proj+bias+residual reading a@v's heads transposed back in place
    "torch_mha": (5, ["contraction", "contraction", "reduction", "contraction",
                      "contraction"]),
    # scaled_dot_product_attention(is_causal=True): q@k^T reading q and k
    # scaled where it reads them (were two kernels writing them scaled) with
    # the causal mask (iota comparisons) | the safe softmax (torch.max whose
    # unread indices are dropped; an "all scores masked" andi reduction over
    # booleans) | a@v
    "torch_sdpa_causal": (3, ["contraction", "reduction", "contraction"]),
    # greedy decoding: softmax, then torch.max with indices (the maximum and
    # its column from one generic, split into one-result reductions): one
    # row kernel returns the tokens (i64) and their probabilities
    "torch_greedy": (1, ["reduction"]),
    # layer norm's backward pass: the row means for dx and the sums over dim
    # 0 for dw and db (written with the reduced loop first) in one group; on
    # CUDA the row kernel stores the column sums' terms (or per-block
    # partials) and a second kernel adds them up
    "torch_layernorm_bwd": (1, ["reduction"]),
    # per-channel mean and variance over (n, h, w) of NHWC, reduced loops
    # first: one reduction over the channels, a thread per channel
    "torch_batch_stats_nhwc": (1, ["reduction"]),
    # the tanh GELU's backward: x ** 3 and x ** 2 are math.fpowi with i64
    # exponents (multiplications on both targets)
    "torch_gelu_tanh_bwd": (1, ["elementwise"]),
    # cross_entropy's mean loss: per-row log-sum-exp minus the label's logit
    # (a gather), then the batch mean over the kept labels (ignore_index
    # -100: the count is a sum of booleans, popc in the PTX)
    "torch_cross_entropy_loss": (2, ["reduction", "reduction"]),
    # a causal language model's loss, cross_entropy over
    # logits[:, :-1].reshape(-1, V) and labels[:, 1:].reshape(-1): the
    # reshapes of the slices are no views, so the ops reading them run over
    # the slices' own (batch, position) loops and read the logits in place;
    # the same two kernels as above (were four, the first a copy of the
    # sliced logits)
    "torch_causal_lm_loss": (2, ["reduction", "reduction"]),
    # KL divergence (batchmean) of two log-softmaxes: the sum over every
    # element reduces row by row inside the rows' group first, then a
    # second group adds up the 16 row sums
    "torch_kl_div": (2, ["reduction", "reduction"]),
    # a masked mean over the middle axis: the count of kept positions (rows
    # b) is recomputed for every (b, h) beside the sum of x * m (rows
    # (b, h)) from the same mask loads, so one kernel (were two, the mask's
    # floats written by the first)
    "torch_masked_mean_pool": (1, ["reduction"]),
    # sentence-transformers' mean pooling (the int64 mask expanded over the
    # hidden size first): one kernel, a thread per (b, h) at large sizes
    "torch_sentence_mean_pool": (1, ["reduction"]),
    # slices x[:, 1:] and mask[:, 1:] of a float and a boolean argument: the
    # mask's slice is a gather reading the argument's bytes, so one kernel
    # (was two: the booleans narrowed into a tensor of their own first)
    "torch_masked_slice_sum": (1, ["reduction"]),
    # BERT's embeddings: three tables gathered by ids (the positions by
    # torch.arange, a gather over (position, hidden) added over (batch,
    # position, hidden)), summed, layer-normed: one kernel that writes only
    # the result (was an unsupported-op error: the gathers fused into the
    # layer norm's sums kept their full-space results as second outputs)
    "torch_bert_embeddings": (1, ["reduction"]),
    # hidden states plus an embedding looked up by ids, layer-normed: the
    # gather fuses into the norm's sums beside x (one kernel)
    "torch_embedding_add_ln": (1, ["reduction"]),
    # one Adam step over three parameters of three shapes: the three
    # independent updates (each writing p, m and v) share one launch, each
    # over blocks of its own (multi-tensor; were three kernels)
    "torch_adam_step": (1, ["elementwise"]),
    # clip_grad_norm_ over four gradients: a sum of squares each (the last
    # adds them up and takes the scale), then the four scalings in one
    # launch (were four kernels)
    "torch_clip_grad_norm": (5, ["reduction", "reduction", "reduction", "reduction",
                                 "elementwise"]),
    # lerp's 0-d weight and a bias correction 1 - 0.9^step of a 0-d step:
    # the arithmetic on 0-d tensors runs in the elementwise kernel (it was a
    # kernel of its own)
    "torch_scalar_weights": (1, ["elementwise"]),
    # instance norm: the f64 statistics of x viewed as [1, N*C, H, W] (the
    # f64 copy of x, read by both sums, follows the view back to x's shape:
    # one kernel, x read once)
    "torch_instance_norm": (1, ["reduction"]),
    # a stride-2 transposed convolution: the input inserted into zeros with
    # stride 2 is a gather the convolution evaluates where it reads (never
    # written); the flipped weight is a kernel of its own (a contraction's
    # producers stay outside), and so is torch.roll of the result (a gather
    # at shifted positions cannot be the contraction's epilogue)
    "torch_conv_transpose_roll": (3, ["elementwise", "contraction", "elementwise"]),
    # torch.stack along an inner axis is a concat viewed with a new axis: the
    # view of the concat's gather is the gather over the new shape, which
    # the product evaluates (was 2 kernels, the stacked tensor written)
    "torch_stack_mul": (1, ["elementwise"]),
    # group norm with affine weights, then SiLU: torch-mlir reduces over
    # [N, G, C/G * H * W] and gathers the statistics and weights per channel
    # through constant index tensors (c floordiv C/G, c mod C/G): the indices
    # are computed from positions, the channel loop splits into (group,
    # channel in group) and every op runs over [N, G, C/G, H, W] (the views
    # of x and of the result are free): one kernel, x read once (was an
    # unsupported-op error: the weights, resource constants, were reshaped)
    "torch_group_norm_silu": (1, ["reduction"]),
    "torch_group_norm_b1": (1, ["reduction"]),
    # attention's backward pass as autograd computes it (make_fx): the key
    # gradient, a batched contraction written transposed back into k's
    # layout, is one contraction (no transpose kernel); dO * ones (the
    # gradient of a sum) folds to dO, which the contractions read in place
    "torch_attention_bwd": (7, ["contraction", "reduction", "contraction", "contraction",
                                "reduction", "contraction", "contraction"]),
}
# CUDA launches where they differ from the kernels after fusion (a loss's
# mean runs in the last block of its row kernel; small independent kernels
# share a launch, fusion-pack-launches: the three squared norms of the
# gradients, the softmax gradient's reduction beside a contraction and two
# contractions)
CUDA_LAUNCHES = {"torch_layernorm_bwd": 2, "torch_cross_entropy_loss": 1,
                 "torch_causal_lm_loss": 1, "torch_kl_div": 1,
                 "torch_clip_grad_norm": 3, "torch_attention_bwd": 5}
# (the CUDA kernels of these programs run in the PTX emulator in
# test_emulator.py: bench/make_artifacts.py MLIR_TEST_PROGRAMS)


def _exported(name):
    """The exported .mlir text and the .npz of inputs and PyTorch's outputs."""
    return program_text(f"torch/{name}.mlir"), np.load(os.path.join(HERE, f"{name}.npz"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_torch_exported_program(name):
    text, data = _exported(name)
    f = kfuse.compile(text, target="cpu")
    kernels, kinds = EXPECTED[name]
    assert f.report.after.kernels == kernels
    assert [g.kind for g in f.report.groups] == kinds
    ins = [data[f"in{i}"] for i in range(len(f.inputs))]
    got = f(*ins)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len([k for k in data.files if k.startswith("expected")])
    for i, g in enumerate(got):
        want = data[f"expected{i}"]
        assert g.dtype == want.dtype
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=2e-6)
    cuda = kfuse.compile(text, target="cuda")
    launches = CUDA_LAUNCHES.get(name, kernels)
    assert cuda.ptx.count(".entry") == len(cuda.plan.steps) == launches
    # (the plan is named after the entry function, whatever constants
    # (weights) the module holds; its kernels after it)
    assert cuda.plan.name == f.plan.name == name
    assert all(st.kernel.startswith(name + "_") for st in cuda.plan.steps)


def _emulated_on_cuda(name, atol):
    """The exported program's CUDA kernels run in the PTX emulator and
    checked against PyTorch's outputs: (inputs, each launch's memory stats,
    the compiled program)."""
    text, data = _exported(name)
    cuda = kfuse.compile(text, target="cuda")
    ins = [data[f"in{i}"] for i in range(len(cuda.inputs))]
    got = cuda.emulate(*ins)
    for i, g in enumerate(got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(g, data[f"expected{i}"], rtol=1e-5, atol=atol)
    return ins, cuda.emulator.last_stats, cuda


def test_torch_layer_norm_backward_reads_x_and_dy_once_on_cuda():
    # The exported backward pass (64 x 256): one row kernel computes dx and
    # the terms of dw and db; x and dy are each read once, whole, and the
    # column sums' second kernel reads only what the first stored (and dy
    # for db, a sum of an input the row kernel leaves to it).
    ins, (rows, columns), cuda = _emulated_on_cuda("torch_layernorm_bwd", atol=2e-5)
    (group,) = cuda.report.groups
    assert any("column sums" in d for d in group.decisions)
    x_bytes = ins[0].nbytes
    assert rows["read"][0] == rows["read"][1] == x_bytes  # x, dy once
    assert rows["read"][2] == ins[2].nbytes               # w


def test_stacked_transformer_blocks_compile_each_code_once():
    # Three exported transformer blocks, each reading the one before (a
    # small encoder, the same weights in every layer): the kernels of one
    # layer launched in every layer, each code compiled once
    # (fusion-dedup-kernels: later launches of a code run its first kernel
    # under their own names). The emulated program agrees with one layer's
    # program applied three times, whose first application agrees with
    # PyTorch's output.
    text, data = _exported("torch_transformer_block")
    one = kfuse.compile(text, target="cuda", chip="sm_90")
    three = kfuse.compile(stacked_layers(text, 3), target="cuda", chip="sm_90")
    n = len(one.plan.steps)
    assert len(three.plan.steps) == 3 * n
    kernels = set(three.plan.kernels)
    assert len(kernels) <= n + 1
    assert len(re.findall(r"\.entry ", three.ptx)) == len(kernels)
    # (each code's first launch under the kernel's own name, the others
    # under theirs; a layer's first norm reads the residual sum before it,
    # the code of the second norm of the layer before)
    aliased = [s for s in three.plan.steps if s.alias]
    assert len(aliased) == 3 * n - len(kernels)
    assert all(s.kernel != s.alias and s.kernel in kernels for s in aliased)
    h = data["in0"]
    for layer in range(3):
        h = one.emulate(h)
        if layer == 0:
            np.testing.assert_allclose(h, data["expected0"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(three.emulate(data["in0"]), h, rtol=1e-5, atol=1e-5)


def test_demo_runs_and_checks_the_transformer_block():
    # `make demo` (python -m kfuse demo) on the CPU target, small sizes
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "kfuse", "demo", "--target", "cpu",
                        "--size", "4096"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "torch_transformer_block" in r.stdout and "check vs PyTorch" in r.stdout
    # (on the CPU target the CUDA kernels also run in the PTX emulator)
    assert r.stdout.count("emulated in") == 3 and "FAIL" not in r.stdout
    # (and kfuse.autotune's variants of the softmax, each in the emulator)
    assert "softmax_rows under kfuse.autotune:" in r.stdout
    assert "  default: max abs error" in r.stdout
    assert r.stdout.rstrip().endswith("demo passed")


def _temps(cuda, counts):
    """Bytes of `counts` (a launch's read or written, by buffer) in temporaries."""
    return sum(n for b, n in counts.items() if cuda.plan.buffers[b].kind == "temp")


def _finishes_in_last_block(cuda, rows_n):
    """The loss's mean runs in the last block of the row kernel (one launch,
    an atomic counter): the row kernel's blocks write their rows' terms,
    at most two 4-byte values a row (the term and whether its label
    counts), and the last block to end reads them back and writes the
    loss."""
    (launch,) = cuda.emulator.last_stats
    (line,) = cuda.report.launches
    assert "then its last block to end runs group g1" in line, line
    assert [b.kind for b in cuda.plan.buffers].count("counter") == 1
    terms = _temps(cuda, launch["written"])
    assert 0 < terms <= 2 * 4 * rows_n and _temps(cuda, launch["read"]) == terms
    assert launch["written"][len(cuda.plan.inputs)] == 4  # the loss
    return launch


def test_torch_cross_entropy_reads_the_logits_once_on_cuda():
    # torch's cross_entropy gathers the label's entry of a whole log_softmax
    # (x - max - log(sum(exp(x - max)))): the gather recomputes it from x
    # and the two row values inside the row kernel (a value per row, joined
    # once the row group has grown), so the row kernel writes each row's
    # loss term and whether its label counts, and the mean (its last block
    # to end) reads those alone, not the logits again.
    ins, _, cuda = _emulated_on_cuda("torch_cross_entropy_loss", atol=2e-6)
    launch = _finishes_in_last_block(cuda, ins[0].shape[0])
    assert launch["read"][0] == ins[0].nbytes


def test_torch_causal_lm_loss_reads_the_shifted_logits_in_place_on_cuda():
    # logits [2, 9, 1003]: the row kernel reads the 2 x 8 rows that predict
    # a next token, each once, straight from the logits' buffer (the last
    # position's row is never read, and nothing is copied), and each
    # label but the first of a sequence; its last block to end takes the
    # mean of the terms.
    ins, _, cuda = _emulated_on_cuda("torch_causal_lm_loss", atol=2e-6)
    logits, labels = ins
    b, t, v = logits.shape
    launch = _finishes_in_last_block(cuda, b * (t - 1))
    assert {k: n for k, n in launch["read"].items() if k < 2} == \
        {0: b * (t - 1) * v * 4, 1: b * (t - 1) * 8}, launch["read"]
    # (loads: each row once, and the label's logit again, by every thread
    # of the row's block, before the row's loop)
    threads = cuda.plan.steps[0].block[0]
    assert launch["load"]["by_buffer"][0] == b * (t - 1) * (v + threads) * 4
    assert cuda.plan.steps[0].grid[0] == b * (t - 1)  # a block per row
    assert "memref.subview" in cuda.stages["codegen"]


def test_torch_kl_div_never_writes_the_pointwise_terms_on_cuda():
    # The full sum of p * (log p - log q) after two row-wise log-softmaxes:
    # the row kernel reads p and q once and writes one partial sum per row
    # (not the [16, 64] terms); its last block to end reads those 16 values
    # back and adds them up.
    ins, (launch,), cuda = _emulated_on_cuda("torch_kl_div", atol=2e-6)
    assert any("fusion-split-full-reductions" in d for d in cuda.report.groups[0].decisions)
    assert {k: n for k, n in launch["read"].items() if k < 2} == \
        {0: ins[0].nbytes, 1: ins[1].nbytes}
    assert _temps(cuda, launch["written"]) == _temps(cuda, launch["read"]) == \
        4 * ins[0].shape[0]
    assert "then its last block to end runs group g1" in cuda.report.launches[0]


def test_torch_masked_mean_pool_reads_x_and_the_mask_once_on_cuda():
    # x [4, 50, 96], a boolean mask [4, 50] (the last sequence masked out:
    # its count clamps to 1, its mean is 0): one launch reads x and the
    # mask's bytes once and writes the means; the count is folded from the
    # loads of the sum, and nothing passes between kernels.
    ins, (launch,), cuda = _emulated_on_cuda("torch_masked_mean_pool", atol=2e-6)
    x, mask = ins
    assert any("fusion-lift-broadcast-reductions" in d
               for d in cuda.report.groups[0].decisions)
    assert launch["read"] == {0: x.nbytes, 1: mask.nbytes}, launch["read"]
    assert launch["written"] == {2: 4 * x.shape[0] * x.shape[2]}
    assert len(cuda.plan.steps) == 1


def test_torch_bert_embeddings_write_only_the_result_on_cuda():
    # ids [3, 40] into a word table [100, 64], positions 0..39 into a
    # position table [40, 64], token types into [2, 64], summed and
    # layer-normed: one launch reads the ids once and writes the result; no
    # gathered sum is stored anywhere (the tables are read as gathers, each
    # row no more than once per element of the result).
    ins, (launch,), cuda = _emulated_on_cuda("torch_bert_embeddings", atol=2e-6)
    ids, types = ins
    out_bytes = 4 * ids.size * 64
    assert launch["written"] == {2: out_bytes}, launch["written"]
    assert launch["read"][0] == ids.nbytes and launch["read"][1] == types.nbytes
    # word rows (at most 100 distinct), 40 position rows, 2 token-type rows,
    # the layer norm's weight and bias
    tables = sum(v for k, v in launch["read"].items() if k not in (0, 1))
    assert tables <= 4 * 64 * (100 + 40 + 2 + 2), launch["read"]
    assert len(cuda.plan.steps) == 1


def test_torch_embedding_add_ln_reads_each_table_element_once_on_cuda():
    # x [2, 8, 768] + table[ids] ([50, 768]), layer-normed: the gather is
    # part of each of the norm's sums and of the output's body; the row
    # kernel (64 threads a row, 3 chunks of 4 each) evaluates it in each
    # phase, and the loads of the table (nothing in the kernel writes it) are
    # merged, like x's: each element of the result loads its table element
    # once (was once per phase: 4x)
    ins, (launch,), cuda = _emulated_on_cuda("torch_embedding_add_ln", atol=2e-6)
    x, ids = ins
    (table,) = [i for i, b in enumerate(cuda.plan.buffers)
                if b.kind == "const" and b.shape == (50, 768)]
    assert cuda.plan.steps[0].block == (64, 1, 1)
    assert launch["load"]["by_buffer"][table] == x.nbytes
    assert launch["load"]["by_buffer"][0] == x.nbytes
    assert launch["written"] == {2: x.nbytes}


def test_torch_adam_step_is_one_launch_and_as_exact_as_three():
    # The three updates in one launch: its grid is the three kernels' grids
    # end to end (multi_tensor=False), every input is read once and every
    # output written once, and both forms give PyTorch's values.
    text, data = _exported("torch_adam_step")
    ins = [data[f"in{i}"] for i in range(12)]
    one = kfuse.compile(text, target="cuda")
    apart = kfuse.compile(text, target="cuda", multi_tensor=False)
    assert len(one.plan.steps) == 1 and len(apart.plan.steps) == 3
    assert one.plan.steps[0].grid[0] == sum(s.grid[0] for s in apart.plan.steps)
    assert any("shares one launch" in d for d in one.report.groups[0].decisions)
    for f in (one, apart):
        got = f.emulate(*ins)
        for i, g in enumerate(got):
            np.testing.assert_allclose(g, data[f"expected{i}"], rtol=1e-5, atol=2e-6)
    (launch,) = one.emulator.last_stats
    assert sum(launch["read"].values()) == sum(a.nbytes for a in ins)
    assert sum(launch["written"].values()) == sum(data[f"expected{i}"].nbytes for i in range(9))
    # on the CPU target too
    for i, g in enumerate(kfuse.compile(text, target="cpu")(*ins)):
        np.testing.assert_allclose(g, data[f"expected{i}"], rtol=1e-5, atol=2e-6)


def test_finishing_kernels_apart_with_row_last_block_false():
    # row_last_block=False: the loss's mean is a kernel of its own again, and
    # both forms agree with PyTorch in the emulator
    text, data = _exported("torch_cross_entropy_loss")
    apart = kfuse.compile(text, target="cuda", row_last_block=False)
    assert len(apart.plan.steps) == 2 and "counter" not in [b.kind for b in apart.plan.buffers]
    ins = [data[f"in{i}"] for i in range(len(apart.inputs))]
    np.testing.assert_allclose(apart.emulate(*ins), data["expected0"], rtol=1e-5, atol=2e-6)


def test_torch_group_norm_reads_x_once_on_cuda():
    # GroupNorm(4, 16) + SiLU on [2, 16, 8, 8]: one row kernel, a row per
    # (sample, group); x is read once and y written once, and the weights
    # (constants) are read per channel, not per element.
    ins, (rows,), cuda = _emulated_on_cuda("torch_group_norm_silu", atol=2e-6)
    x = ins[0]
    assert sum(rows["read"].values()) == x.nbytes + 2 * 4 * x.shape[1]
    assert sum(rows["written"].values()) == x.nbytes
    assert cuda.plan.steps[0].grid[0] == x.shape[0] * 4  # a block per row
    assert "ld.global.v4.b32" in cuda.ptx  # x read 128 bits at a time


def test_torch_group_norm_at_batch_one_reads_x_once_on_cuda():
    # GroupNorm(5, 10) + SiLU on [1, 10, 14, 14]: the unit batch dropped
    # before torch's channel views met left the statistics and the epilogue
    # reading x through different views (two kernels, x read twice); now one
    # row kernel, a block per group, and the rows' (h, w) columns merged so
    # that x is read 128 bits at a time (14 columns alone take 64).
    ins, (rows,), cuda = _emulated_on_cuda("torch_group_norm_b1", atol=2e-6)
    x = ins[0]
    assert sum(rows["read"].values()) == x.nbytes + 2 * 4 * x.shape[1]
    assert sum(rows["written"].values()) == x.nbytes
    assert cuda.plan.steps[0].grid[0] == 5
    assert "ld.global.v4.b32" in cuda.ptx
