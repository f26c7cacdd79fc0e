"""The issue-4 workloads as kfuse programs, with their torch definitions.

Imported on the compile side (`make_artifacts.py --suite`, needs MLIR) for the
programs and on the GPU machine (`bench_suite.py`, needs torch) for the
references; each side imports only what it has."""

SOFTMAX_WIDTHS = [256, 1024, 4096, 32768, 262144]  # rows of 2^26 floats in all
WORKLOADS = (["ew_chain", "bias_gelu", "relu_bn_add_relu", "l2norm", "softmax",
              "layernorm", "rmsnorm_silu", "softmax_xent"] +
             [f"softmax_w{w}" for w in SOFTMAX_WIDTHS] +
             # beyond the issue's table: reductions over leading dimensions
             ["colsum", "bn_var_nhwc", "gemv", "bn_train_nchw", "softmax_nchw",
              "bn_train_nhwc",
              # the same over a ResNet's first feature map, [64, 112, 112,
              # 64]: 64 channels, half a warp's vectors, so the store's
              # lanes go 16 a position, 2 positions a warp
              "bn_train_nhwc_c64",
              # a row kernel with column sums: layer norm's backward pass
              "layernorm_bwd",
              # the same over BERT's hidden sizes, 16384 tokens: rows a warp
              # holds, 8 a block, the warps' partials added in shared memory
              # (`__pack1`: a block a row)
              "layernorm_bwd_h768", "layernorm_bwd_h1024",
              # 4096 rows of 2048: a group of 4 warps a row, 4 rows a
              # block, the groups' partials added in shared memory
              # (`__pack1`: a block a row, `__pack2`: 2 rows a block)
              "layernorm_bwd_h2048",
              # a final layer norm and mean pooling over the tokens [32, 512,
              # 768]: the pooling a batched column sum beside the rows, y
              # never stored
              "layernorm_mean_pool",
              # a linear layer's GELU backward and bias gradient [8192, 3072]:
              # dx stored by the split column sum's partials kernel
              "gelu_bwd_bias",
              # softmax over a long leading axis: split, max and sum in one pass
              "softmax_dim0",
              # a diffusion UNet's GroupNorm(32, 320) + SiLU: statistics over
              # a view of x, the affine weights per channel of another view
              "group_norm_silu",
              # the same at batch 1 (inference; a 1024-pixel image's latent):
              # 32 rows of 163840
              "group_norm_silu_b1",
              # cross-entropy over GPT-2's vocabulary: rows of an odd width
              # (shifted chunks: 16-byte loads though rows start off 16-byte
              # boundaries)
              "softmax_xent_v50257",
              # x / |x| over 2^24: one row with a stored result, split into
              # slices (partials, finish, a kernel storing y: x read twice)
              "l2_normalize",
              # l2norm over a prime length, 2^26 - 5: slices of a multiple of
              # 8 and a tail (row_split_tail; `__notail`: one block)
              "l2norm_prime",
              # a bias gradient over a prime count of rows: slices of rows
              # and a shorter tail (`__notail`: unsplit, 64 blocks)
              "colsum_prime",
              # a causal language model's mean loss over logits [8, 1025,
              # 32000]: rows of logits[:, :-1] read in place (a reshape of a
              # view), the mean in the row kernel's last block (`__split2`:
              # the mean a kernel of its own)
              "lm_loss",
              # a sentence embedding's masked mean over [64, 512, 1024] with
              # a boolean mask [64, 512] (torch-mlir's export): the count
              # recomputed beside the sum, one kernel
              "masked_mean_pool",
              # greedy decoding: the first maximum of each of 256 rows of
              # Llama 3's 128256 logits, one maximum of (value, column) keys
              # over row slices
              "argmax_v128256",
              # LAMB's step over BERT-base's 120 one-dimensional parameters
              # (biases and layer norm weights, 768 or 3072 floats): a trust
              # ratio |w| / |r| each, 120 one-block row kernels packed into
              # two launches (at most 256 buffers each), the kernels of each
              # size sharing their code (fusion-pack-launches; `__nopack`:
              # a launch each)
              "lamb_bert_vectors",
              # the same over all of BERT-base's 199 parameters (110M
              # floats): the matrices' norms split into partials kernels of
              # fewer blocks than SMs, each with a store kernel (`__packbig`:
              # those packed too, pack_bytes=2^30; `__nopack`: a launch a
              # kernel)
              "lamb_bert"])


def _xent_text(rows, cols):
    """Softmax cross-entropy as linalg (the builder has no gather): the test
    program test/python/programs/softmax_xent.mlir at another size."""
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python",
                        "programs", "softmax_xent.mlir")
    with open(path) as f:
        return f.read().replace("256x1000", f"{rows}x{cols}").replace("256x", f"{rows}x") \
            .replace("<256x", f"<{rows}x").replace("tensor<256xf32>", f"tensor<{rows}xf32>") \
            .replace("tensor<256xi64>", f"tensor<{rows}xi64>")


def _group_norm_text(n, c, h, w, groups, eps=1e-5):
    """silu(group_norm(x, groups, weight, bias)) as linalg the way a front
    end writes it (the builder has no reshape): the statistics over x viewed
    as [N, G, C/G, H*W], the normalized values viewed back as [N, C, H, W]
    for the per-channel weight and bias."""
    k, hw = c // groups, h * w
    t = lambda *s: "tensor<" + "x".join(map(str, s)) + "xf32>"  # noqa: E731
    X, V, S, Y = t(n, c, h, w), t(n, groups, k, hw), t(n, groups), t(n, c, hw)
    m4 = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
    r4 = "affine_map<(d0, d1, d2, d3) -> (d0, d1)>"
    m2 = "affine_map<(d0, d1) -> (d0, d1)>"
    c4 = "affine_map<(d0, d1, d2, d3) -> (d1)>"
    par4 = '["parallel", "parallel", "parallel", "parallel"]'
    red4 = '["parallel", "parallel", "reduction", "reduction"]'
    return f"""func.func @group_norm_silu(%x: {X}, %w: tensor<{c}xf32>, %b: tensor<{c}xf32>) -> {X} {{
  %zero = arith.constant 0.0 : f32
  %cnt = arith.constant {float(k * hw):e} : f32
  %eps = arith.constant {eps:e} : f32
  %one = arith.constant 1.0 : f32
  %xc = tensor.collapse_shape %x [[0], [1], [2, 3]] : {X} into {Y}
  %v = tensor.expand_shape %xc [[0], [1, 2], [3]] output_shape [{n}, {groups}, {k}, {hw}] : {Y} into {V}
  %es = tensor.empty() : {S}
  %f = linalg.fill ins(%zero : f32) outs(%es : {S}) -> {S}
  %sum = linalg.generic {{indexing_maps = [{m4}, {r4}], iterator_types = {red4}}} ins(%v : {V}) outs(%f : {S}) {{
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }} -> {S}
  %mean = linalg.generic {{indexing_maps = [{m2}, {m2}], iterator_types = ["parallel", "parallel"]}} ins(%sum : {S}) outs(%es : {S}) {{
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %cnt : f32
    linalg.yield %d : f32
  }} -> {S}
  %sq = linalg.generic {{indexing_maps = [{m4}, {r4}, {r4}], iterator_types = {red4}}} ins(%v, %mean : {V}, {S}) outs(%f : {S}) {{
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %p = arith.mulf %d, %d : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }} -> {S}
  %rstd = linalg.generic {{indexing_maps = [{m2}, {m2}], iterator_types = ["parallel", "parallel"]}} ins(%sq : {S}) outs(%es : {S}) {{
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %cnt : f32
    %e = arith.addf %d, %eps : f32
    %r = math.rsqrt %e : f32
    linalg.yield %r : f32
  }} -> {S}
  %ev = tensor.empty() : {V}
  %yn = linalg.generic {{indexing_maps = [{m4}, {r4}, {r4}, {m4}], iterator_types = {par4}}} ins(%v, %mean, %rstd : {V}, {S}, {S}) outs(%ev : {V}) {{
  ^bb0(%a: f32, %m: f32, %r: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %p = arith.mulf %d, %r : f32
    linalg.yield %p : f32
  }} -> {V}
  %yc = tensor.collapse_shape %yn [[0], [1, 2], [3]] : {V} into {Y}
  %y4 = tensor.expand_shape %yc [[0], [1], [2, 3]] output_shape [{n}, {c}, {h}, {w}] : {Y} into {X}
  %ex = tensor.empty() : {X}
  %out = linalg.generic {{indexing_maps = [{m4}, {c4}, {c4}, {m4}], iterator_types = {par4}}} ins(%y4, %w, %b : {X}, tensor<{c}xf32>, tensor<{c}xf32>) outs(%ex : {X}) {{
  ^bb0(%a: f32, %ww: f32, %bb: f32, %o: f32):
    %s = arith.mulf %a, %ww : f32
    %t = arith.addf %s, %bb : f32
    %ng = arith.negf %t : f32
    %en = math.exp %ng : f32
    %den = arith.addf %en, %one : f32
    %y = arith.divf %t, %den : f32
    linalg.yield %y : f32
  }} -> {X}
  return %out : {X}
}}
"""


def programs(rows=None):
    """The workloads by name. `rows` (tests) keeps every row width and kernel
    strategy but runs that many rows (and 2^16-element / 1x256x8x8 tensors for
    the elementwise and full reductions), small enough for the PTX emulator."""
    from kfuse import builder as kb

    def r(n):
        return n if rows is None else min(n, rows)
    flat = 1 << 26 if rows is None else 1 << 16
    progs = {}
    p = kb.Program("ew_chain")
    x = p.input("x", (flat,), "f32")
    p.output(kb.log(kb.exp(x) + 1.0), name="y")
    progs["ew_chain"] = p
    p = kb.Program("bias_gelu")
    x = p.input("x", (r(8192), 8192), "f32")
    b = p.input("bias", (8192,), "f32")
    p.output(kb.gelu(x + b), name="y")
    progs["bias_gelu"] = p
    p = kb.Program("relu_bn_add_relu")
    shape = (64, 256, 56, 56) if rows is None else (1, 256, 8, 8)
    x = p.input("x", shape, "f32")
    r_ = p.input("r", shape, "f32")
    scale = p.input("scale", (256, 1, 1), "f32")
    shift = p.input("shift", (256, 1, 1), "f32")
    p.output(kb.relu(kb.relu(x) * scale + shift + r_), name="y")
    progs["relu_bn_add_relu"] = p
    p = kb.Program("l2norm")
    x = p.input("x", (flat,), "f32")
    p.output(kb.sqrt((x * x).sum()), name="y")
    progs["l2norm"] = p
    p = kb.Program("softmax")
    x = p.input("x", (r(8192), 8192), "f32")
    e = kb.exp(x - x.max(axis=-1, keepdims=True))
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    progs["softmax"] = p
    p = kb.Program("layernorm")
    x = p.input("x", (r(8192), 8192), "f32")
    w = p.input("w", (8192,), "f32")
    b = p.input("b", (8192,), "f32")
    c = x - x.mean(axis=-1, keepdims=True)
    p.output(c * kb.rsqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5) * w + b, name="y")
    progs["layernorm"] = p
    p = kb.Program("rmsnorm_silu")
    x = p.input("x", (r(8192), 8192), "f32")
    w = p.input("w", (8192,), "f32")
    p.output(kb.silu(x * kb.rsqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * w), name="y")
    progs["rmsnorm_silu"] = p
    progs["softmax_xent"] = _xent_text(r(8192), 32000)
    for w in SOFTMAX_WIDTHS:
        p = kb.Program(f"softmax_w{w}")
        x = p.input("x", (r((1 << 26) // w), w), "f32")
        e = kb.exp(x - x.max(axis=-1, keepdims=True))
        p.output(e / e.sum(axis=-1, keepdims=True), name="y")
        progs[f"softmax_w{w}"] = p
    # A bias gradient (a sum over the leading dimension) and the variance of
    # batch normalization over an NHWC tensor: inputs contiguous along the
    # outputs (tests: shapes that keep the split into slices).
    p = kb.Program("colsum")
    x = p.input("x", (16384, 4096) if rows is None else (512, 1024), "f32")
    p.output(x.sum(axis=0), name="y")
    progs["colsum"] = p
    p = kb.Program("bn_var_nhwc")
    x = p.input("x", (64, 56, 56, 256) if rows is None else (8, 8, 8, 256), "f32")
    c = x - x.mean(axis=(0, 1, 2), keepdims=True)
    p.output((c * c).mean(axis=(0, 1, 2)), name="y")
    progs["bn_var_nhwc"] = p
    # A matrix-vector product (a row reduction: x streamed, v from cache).
    p = kb.Program("gemv")
    x = p.input("x", (r(8192), 8192), "f32")
    v = p.input("v", (8192,), "f32")
    p.output((x * v).sum(axis=-1), name="y")
    progs["gemv"] = p
    def batch_norm(name, shape, axes):
        # statistics per channel over `axes`, then the normalized tensor
        # (no affine)
        p = kb.Program(name)
        x = p.input("x", shape, "f32")
        c = x - x.mean(axis=axes, keepdims=True)
        p.output(c * kb.rsqrt((c * c).mean(axis=axes, keepdims=True) + 1e-5), name="y")
        progs[name] = p
    # Batch normalization in training, NCHW.
    batch_norm("bn_train_nchw", (64, 256, 56, 56) if rows is None else (2, 256, 8, 8),
               (0, 2, 3))
    # Softmax over the channels of NCHW (segmentation heads, attention over
    # channels): rows of 256 values, 12544 bytes apart.
    p = kb.Program("softmax_nchw")
    x = p.input("x", (64, 256, 56, 56) if rows is None else (2, 256, 8, 8), "f32")
    e = kb.exp(x - x.max(axis=1, keepdims=True))
    p.output(e / e.sum(axis=1, keepdims=True), name="y")
    progs["softmax_nchw"] = p
    # The same channels last (NHWC): statistics split into slices, then a
    # kernel storing y (x read twice).
    batch_norm("bn_train_nhwc", (64, 56, 56, 256) if rows is None else (16, 16, 32, 64),
               (0, 1, 2))
    batch_norm("bn_train_nhwc_c64", (64, 112, 112, 64) if rows is None else (8, 32, 32, 64),
               (0, 1, 2))
    progs["layernorm_bwd"] = layernorm_backward("layernorm_bwd", r(8192), 8192)
    p = kb.Program("layernorm_mean_pool")
    x = p.input("x", (32 if rows is None else 2, 512 if rows is None else 4, 768), "f32")
    w = p.input("w", (768,), "f32")
    c = x - x.mean(axis=-1, keepdims=True)
    p.output((c * kb.rsqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5) * w).mean(axis=1),
             name="y")
    progs["layernorm_mean_pool"] = p
    p = kb.Program("gelu_bwd_bias")
    x = p.input("x", (r(8192), 3072), "f32")
    dy = p.input("dy", (r(8192), 3072), "f32")
    t = kb.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))
    dx = dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * 0.7978845608028654
               * (1.0 + 3 * 0.044715 * x * x))
    p.output(dx, name="dx")
    p.output(dx.sum(axis=0), name="db")
    progs["gelu_bwd_bias"] = p
    for hidden in (768, 1024):
        progs[f"layernorm_bwd_h{hidden}"] = layernorm_backward(
            f"layernorm_bwd_h{hidden}", r(16384), hidden)
    progs["layernorm_bwd_h2048"] = layernorm_backward("layernorm_bwd_h2048", r(4096), 2048)
    p = kb.Program("softmax_dim0")
    x = p.input("x", (r(32768), 2048), "f32")
    e = kb.exp(x - x.max(axis=0, keepdims=True))
    p.output(e / e.sum(axis=0, keepdims=True), name="y")
    progs["softmax_dim0"] = p
    progs["group_norm_silu"] = _group_norm_text(
        *((16, 320, 64, 64) if rows is None else (2, 64, 8, 8)), 32)
    # (small: 14 x 14 images, whose rows load 128 bits at a time only with
    # (h, w) merged)
    progs["group_norm_silu_b1"] = _group_norm_text(
        *((1, 320, 128, 128) if rows is None else (1, 64, 14, 14)), 32)
    progs["softmax_xent_v50257"] = _xent_text(r(1280), 50257)  # 257 MB of logits
    progs["lm_loss"] = _lm_loss_text(*((8, 1025) if rows is None else (2, 3)), 32000)
    progs["masked_mean_pool"] = _masked_mean_pool_text(
        *((64, 512, 1024) if rows is None else (2, 64, 1024)))
    p = kb.Program("argmax_v128256")
    x = p.input("x", (r(256), 128256), "f32")
    p.output(kb.argmax(x, axis=-1), name="i")
    progs["argmax_v128256"] = p
    progs["lamb_bert_vectors"] = lamb_program("lamb_bert_vectors", _bert_vector_sizes())
    # (the emulator's: every matrix 64 times smaller)
    progs["lamb_bert"] = lamb_program(
        "lamb_bert", _bert_sizes() if rows is None else [max(n // 64, 64) for n in _bert_sizes()])
    p = kb.Program("l2_normalize")
    x = p.input("x", (1 << 24 if rows is None else 1 << 16,), "f32")
    p.output(x / kb.sqrt((x * x).sum()), name="y")
    progs["l2_normalize"] = p
    p = kb.Program("l2norm_prime")
    # (primes: 2^26 - 5, and 2^16 + 1 for the emulator: 16 slices of 4096
    # and a tail of 1)
    x = p.input("x", (67108859 if rows is None else 65537,), "f32")
    p.output(kb.sqrt((x * x).sum()), name="y")
    progs["l2norm_prime"] = p
    p = kb.Program("colsum_prime")
    # (100003 x 512: 263 slices of 380 rows and a tail of 63; the
    # emulator's 2053 x 64: 120 slices of 17 and a tail of 13)
    x = p.input("x", (100003, 512) if rows is None else (2053, 64), "f32")
    p.output(x.sum(axis=0), name="y")
    progs["colsum_prime"] = p
    return progs


def layernorm_backward(name, rows, cols):
    """Layer norm's backward pass from x, dy and the weight (statistics
    recomputed): dx per row, dw and db summed over the rows."""
    from kfuse import builder as kb
    p = kb.Program(name)
    x = p.input("x", (rows, cols), "f32")
    dy = p.input("dy", (rows, cols), "f32")
    w = p.input("w", (cols,), "f32")
    c = x - x.mean(axis=-1, keepdims=True)
    rstd = kb.rsqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5)
    xhat = c * rstd
    g = dy * w
    p.output(rstd * (g - g.mean(axis=-1, keepdims=True)
                     - xhat * (g * xhat).mean(axis=-1, keepdims=True)), name="dx")
    p.output((dy * xhat).sum(axis=0), name="dw")
    p.output(dy.sum(axis=0), name="db")
    return p


def _gelu_bwd_bias(x, dy):
    import torch
    dx = torch.ops.aten.gelu_backward(dy, x, approximate="tanh")
    return dx, dx.sum(0)


def _layernorm_bwd(x, dy, w):
    import torch
    c = x - x.mean(-1, keepdim=True)
    rstd = torch.rsqrt((c * c).mean(-1, keepdim=True) + 1e-5)
    xhat = c * rstd
    g = dy * w
    dx = rstd * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    return dx, (dy * xhat).sum(0), dy.sum(0)


def _masked_mean_pool_text(batch, positions, width):
    """(x * m[..., None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1) for a
    boolean mask m, as torch-mlir exports it (the test program
    test/python/programs/torch/torch_masked_mean_pool.mlir at another size)."""
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python",
                        "programs", "torch", "torch_masked_mean_pool.mlir")
    with open(path) as f:
        text = f.read()
    import re
    dims = {"4": batch, "50": positions, "96": width, "1": 1}
    # (every static shape of the text: tensor<AxBx...xT> and output_shape)
    text = re.sub(r"tensor<((?:\d+x)+)", lambda m: "tensor<" + "".join(
        f"{dims[d]}x" for d in m.group(1).split("x")[:-1]), text)
    text = text.replace("output_shape [4, 50, 1]", f"output_shape [{batch}, {positions}, 1]")
    return text.replace("@torch_masked_mean_pool", "@masked_mean_pool")


def _lm_loss_text(batch, positions, vocab):
    """A causal language model's mean cross-entropy: logits [batch, positions,
    vocab] predict the next token, so logits[:, :-1] and labels[:, 1:],
    each flattened over (batch, position), as torch writes it (the per-row
    terms as in softmax_xent.mlir, then their mean)."""
    rows = batch * (positions - 1)
    text = _xent_text(rows, vocab)
    head = (f"func.func @xent(%x: tensor<{rows}x{vocab}xf32>, %labels: tensor<{rows}xi64>) "
            f"-> tensor<{rows}xf32> {{")
    assert head in text
    L, B = f"{batch}x{positions}x{vocab}xf32", f"{batch}x{positions}xi64"
    S, SB = f"{batch}x{positions - 1}x{vocab}xf32", f"{batch}x{positions - 1}xi64"
    text = text.replace(head, f"""func.func @lm_loss(%lg: tensor<{L}>, %lb: tensor<{B}>) -> tensor<f32> {{
  %xs = tensor.extract_slice %lg[0, 0, 0] [{batch}, {positions - 1}, {vocab}] [1, 1, 1] : tensor<{L}> to tensor<{S}>
  %x = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<{S}> into tensor<{rows}x{vocab}xf32>
  %ls = tensor.extract_slice %lb[0, 1] [{batch}, {positions - 1}] [1, 1] : tensor<{B}> to tensor<{SB}>
  %labels = tensor.collapse_shape %ls [[0, 1]] : tensor<{SB}> into tensor<{rows}xi64>""")
    ret = f"  return %loss : tensor<{rows}xf32>"
    assert ret in text
    return text.replace(ret, f"""  %e0 = tensor.empty() : tensor<f32>
  %z0 = arith.constant 0.0 : f32
  %f0 = linalg.fill ins(%z0 : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %t = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}}
      ins(%loss : tensor<{rows}xf32>) outs(%f0 : tensor<f32>) {{
  ^bb0(%a: f32, %acc: f32):
    %q = arith.addf %a, %acc : f32
    linalg.yield %q : f32
  }} -> tensor<f32>
  %n = arith.constant {float(rows)!r} : f32
  %mean = linalg.generic {{indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}}
      ins(%t : tensor<f32>) outs(%e0 : tensor<f32>) {{
  ^bb0(%a: f32, %o: f32):
    %q = arith.divf %a, %n : f32
    linalg.yield %q : f32
  }} -> tensor<f32>
  return %mean : tensor<f32>""")


def _bn_nhwc(x):
    # batch normalization in training over channels last, no affine
    import torch
    return (x - x.mean((0, 1, 2))) * torch.rsqrt(x.var((0, 1, 2), unbiased=False) + 1e-5)


def _bert_vector_sizes():
    """BERT-base's one-dimensional parameters, a layer's in order (q, k, v
    and output biases, layer norm weight and bias, the feed-forward biases,
    the second layer norm's), for 12 layers."""
    return [768, 768, 768, 768, 768, 768, 3072, 768, 768, 768] * 12


def lamb_program(name, sizes):
    """LAMB's step (its trust ratio; bias corrections and decay folded into
    constants) over parameters of `sizes` floats: u = 0.9 m + 0.1 g +
    0.01 w, w - 0.001 (|w| / |u|) u for each, a norm each."""
    from kfuse import builder as kb
    p = kb.Program(name)
    for i, n in enumerate(sizes):
        w = p.input(f"w{i}", (n,), "f32")
        g = p.input(f"g{i}", (n,), "f32")
        m = p.input(f"m{i}", (n,), "f32")
        u = m * 0.9 + g * 0.1 + w * 0.01
        ratio = kb.sqrt(kb.sum(w * w)) / kb.sqrt(kb.sum(u * u))
        p.output(w - u * ratio * 0.001, name=f"w_out{i}")
    return p


def _bert_sizes():
    """BERT-base's parameters, flattened, in the order of its state dict:
    the embeddings (words, positions, token types, their layer norm), 12
    layers (attention's q, k, v and output projections with their biases,
    a layer norm, the feed-forward pair with biases, a layer norm), the
    pooler."""
    h, f = 768, 3072
    sizes = [30522 * h, 512 * h, 2 * h, h, h]
    for _ in range(12):
        sizes += [h * h, h] * 4 + [h, h, h * f, f, f * h, h, h, h]
    return sizes + [h * h, h]


def _lamb(*args):
    out = []
    for w, g, m in zip(args[0::3], args[1::3], args[2::3]):
        u = m * 0.9 + g * 0.1 + w * 0.01
        out.append(w - u * (w.square().sum().sqrt() / u.square().sum().sqrt()) * 0.001)
    return tuple(out)


def torch_reference(name):
    import torch
    import torch.nn.functional as F
    return {
        "ew_chain": lambda x: torch.log(torch.exp(x) + 1),
        "bias_gelu": lambda x, b: F.gelu(x + b),
        "relu_bn_add_relu": lambda x, r, s, t: torch.relu(torch.relu(x) * s + t + r),
        "l2norm": lambda x: torch.sqrt((x * x).sum()),
        "l2norm_prime": lambda x: torch.sqrt((x * x).sum()),
        "softmax": lambda x: torch.softmax(x, dim=-1),
        "softmax_xent": lambda x, labels: F.cross_entropy(x, labels, reduction="none"),
        "softmax_xent_v50257": lambda x, labels: F.cross_entropy(x, labels, reduction="none"),
        "lm_loss": lambda x, labels: F.cross_entropy(x[:, :-1].reshape(-1, x.shape[-1]),
                                                     labels[:, 1:].reshape(-1)),
        "masked_mean_pool": lambda x, m: (x * m.to(x.dtype)[..., None]).sum(1) / m.to(
            x.dtype).sum(1, keepdim=True).clamp(min=1),
        "l2_normalize": lambda x: x / torch.sqrt((x * x).sum()),
        "lamb_bert_vectors": _lamb,
        "lamb_bert": _lamb,
        "argmax_v128256": lambda x: torch.argmax(x, dim=-1),
        **{f"softmax_w{w}": (lambda x: torch.softmax(x, dim=-1)) for w in SOFTMAX_WIDTHS},
        "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
        "colsum": lambda x: x.sum(0),
        "colsum_prime": lambda x: x.sum(0),
        "bn_var_nhwc": lambda x: x.var(dim=(0, 1, 2), unbiased=False),
        "gemv": lambda x, v: x @ v,
        "bn_train_nchw": lambda x: F.batch_norm(x, None, None, training=True, eps=1e-5),
        "softmax_nchw": lambda x: torch.softmax(x, dim=1),
        "bn_train_nhwc": _bn_nhwc,
        "bn_train_nhwc_c64": _bn_nhwc,
        "layernorm_bwd": _layernorm_bwd,
        "layernorm_mean_pool": lambda x, w: F.layer_norm(x, (x.shape[-1],), w, None,
                                                          1e-5).mean(1),
        "gelu_bwd_bias": _gelu_bwd_bias,
        "layernorm_bwd_h768": _layernorm_bwd,
        "layernorm_bwd_h1024": _layernorm_bwd,
        "layernorm_bwd_h2048": _layernorm_bwd,
        "softmax_dim0": lambda x: torch.softmax(x, dim=0),
        "group_norm_silu": lambda x, w, b: F.silu(F.group_norm(x, 32, w, b, 1e-5)),
        "group_norm_silu_b1": lambda x, w, b: F.silu(F.group_norm(x, 32, w, b, 1e-5)),
        "rmsnorm_silu": lambda x, w: F.silu(
            x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w),
    }[name]


def torch_inputs(exe, device="cuda"):
    """Random torch inputs for a loaded program (kfuse.runtime.load): f32 normal
    values; i64 inputs are class labels below the first input's last dimension,
    i1 inputs masks."""
    import torch
    ins = []
    for spec in exe.plan.inputs:
        if spec.dtype.name == "i64":
            ins.append(torch.randint(0, exe.plan.inputs[0].shape[-1], spec.shape,
                                     device=device))
        elif spec.dtype.name == "i1":  # (a mask, about 60% true)
            ins.append(torch.rand(spec.shape, device=device) < 0.6)
        else:
            ins.append(torch.randn(spec.shape, dtype=torch.float32, device=device))
    return ins
