"""Exports the PyTorch modules below to linalg on tensors with torch-mlir's FX
importer and records inputs and PyTorch's outputs next to them.

Run by hand (not in CI) with torch-mlir 20261001 and torch 2.13.0 (CPU) from PyPI:
    python export.py [name ...]   # in this directory; all cases by default
"""
import os
import sys
import torch, numpy as np
from torch_mlir import fx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * 4, "bench"))
from suite import _layernorm_bwd  # noqa: E402

class Softmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)

class LayerNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(256)
        torch.manual_seed(0)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5); self.ln.bias.uniform_(-0.5, 0.5)
    def forward(self, x):
        return self.ln(x)

class MLPBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.fc = torch.nn.Linear(64, 32)
    def forward(self, x, r):
        return torch.nn.functional.gelu(self.fc(x)) + r

class BiasGelu(torch.nn.Module):
    def forward(self, x, b):
        return torch.nn.functional.gelu(x + b)

class ConvBlock(torch.nn.Module):
    """3x3 convolution with zero padding (tensor.pad), bias and relu."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.conv = torch.nn.Conv2d(4, 8, 3, padding=1)
    def forward(self, x):
        return torch.relu(self.conv(x))

class ResidualConv(torch.nn.Module):
    """Padded 3x3 convolution, batch norm (eval), residual add and relu."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(8).eval()
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5); self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5); self.bn.bias.uniform_(-0.5, 0.5)
    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)) + x)

class PadRelu(torch.nn.Module):
    """Constant padding of an elementwise result, then an elementwise op."""
    def forward(self, x):
        return torch.nn.functional.pad(torch.exp(x), (2, 1, 0, 3), value=-1.0) * 2.0

class ViewChain(torch.nn.Module):
    """Elementwise ops on both sides of a view (expand/collapse_shape)."""
    def forward(self, x):
        return torch.tanh(torch.sigmoid(x).view(2, 16, 8)) + 1.0

class Block(torch.nn.Module):
    """A pre-norm transformer block: layernorm, single-head attention (fused
    q/k/v projection split into slices, scaled softmax), residual, layernorm,
    MLP with GELU, residual."""
    def __init__(self, d=64, h=128):
        super().__init__()
        torch.manual_seed(4)
        self.ln1 = torch.nn.LayerNorm(d); self.ln2 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d); self.proj = torch.nn.Linear(d, d)
        self.fc1 = torch.nn.Linear(d, h); self.fc2 = torch.nn.Linear(h, d)
        self.d = d
    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).split(self.d, dim=-1)
        a = torch.softmax(q @ k.transpose(-1, -2) / self.d ** 0.5, dim=-1)
        x = x + self.proj(a @ v)
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

class MultiHeadAttention(torch.nn.Module):
    """Self-attention with 4 heads: fused q/k/v projection split into thirds,
    each viewed as heads, transposed to (batch, head, seq, dim) and batched;
    the heads' outputs transposed back and merged; projection + residual."""
    def __init__(self, d=64, heads=4):
        super().__init__()
        torch.manual_seed(5)
        self.qkv = torch.nn.Linear(d, 3 * d); self.proj = torch.nn.Linear(d, d)
        self.d, self.h = d, heads
    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (t.view(b, s, self.h, -1).transpose(1, 2)
                   for t in self.qkv(x).split(self.d, dim=-1))
        a = torch.softmax(q @ k.transpose(-1, -2) / (self.d // self.h) ** 0.5, dim=-1)
        return x + self.proj((a @ v).transpose(1, 2).reshape(b, s, self.d))

class CausalAttention(torch.nn.Module):
    """torch's scaled_dot_product_attention with a causal mask: the mask
    from iota comparisons, a safe softmax (rows that are all masked give 0:
    a boolean `all` reduction) and torch.max with indices."""
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

class Greedy(torch.nn.Module):
    """Greedy decoding: each row's top token (torch.max with indices: a
    generic with a running maximum and its column) and its probability."""
    def forward(self, logits):
        conf, tok = torch.max(torch.softmax(logits, dim=-1), dim=-1)
        return tok, conf

class Rotary(torch.nn.Module):
    """Rotary position embedding: the halves of the last dimension (slices),
    one negated, concatenated (torch.cat), times cos and sin."""
    def forward(self, x, cos, sin):
        h = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., h:], x[..., :h]), dim=-1) * sin

class LayerNormBackward(torch.nn.Module):
    """Layer norm's backward pass written out as a training step computes it
    (the bench suite's formula): dx from row means, and the weight and bias
    gradients, sums over dim 0 (torch-mlir writes those with the reduced loop
    first)."""
    def forward(self, x, dy, w):
        return _layernorm_bwd(x, dy, w)

class BatchStatsNHWC(torch.nn.Module):
    """Per-channel mean and variance of a channels-last batch: reductions over
    (n, h, w), the channel innermost."""
    def forward(self, x):
        return x.mean(dim=(0, 1, 2)), x.var(dim=(0, 1, 2), unbiased=False)

class GeluTanhBackward(torch.nn.Module):
    """The tanh GELU's derivative times the incoming gradient, written out:
    torch-mlir writes x ** 3 as math.fpowi with an i64 exponent."""
    def forward(self, x, dy):
        c = 0.7978845608028654
        t = torch.tanh(c * (x + 0.044715 * x ** 3))
        return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x ** 2))

class CrossEntropyLoss(torch.nn.Module):
    """The mean cross-entropy loss over a batch (labels may be ignore_index:
    the count of kept labels is a sum of booleans)."""
    def forward(self, logits, labels):
        return torch.nn.functional.cross_entropy(logits, labels)

class CausalLMLoss(torch.nn.Module):
    """A causal language model's loss: each position's logits predict the
    next token, so the logits drop the last position and the labels the
    first, and both are flattened over (batch, position) before the mean
    cross-entropy (a reshape of a slice: no view of the logits' buffer)."""
    def forward(self, logits, labels):
        v = logits.shape[-1]
        return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, v),
                                                 labels[:, 1:].reshape(-1))

class KLDivLoss(torch.nn.Module):
    """KL divergence between two rows of logits, summed over the batch and
    divided by the rows (reduction="batchmean") after two log-softmaxes."""
    def forward(self, p, q):
        return torch.nn.functional.kl_div(torch.log_softmax(q, -1), torch.log_softmax(p, -1),
                                          reduction="batchmean", log_target=True)

class MaskedMeanPool(torch.nn.Module):
    """A sentence embedding: the mean of the token vectors a boolean mask
    keeps (a sum over the middle axis), each row's count clamped to 1 (a
    row the mask keeps nothing of gives zeros)."""
    def forward(self, x, mask):
        m = mask.to(x.dtype)
        return (x * m[..., None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1)

class SentenceMeanPool(torch.nn.Module):
    """sentence-transformers' mean pooling: an int64 attention mask expanded
    over the hidden size, so the count is summed for every (b, h) already."""
    def forward(self, token_embeddings, attention_mask):
        expanded = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).float()
        summed = torch.sum(token_embeddings * expanded, 1)
        return summed / torch.clamp(expanded.sum(1), min=1e-9)

class MaskedSliceSum(torch.nn.Module):
    """Per-sequence sums over every position but the first (a BOS token),
    kept by a boolean mask: slices of a float and of a boolean tensor."""
    def forward(self, x, mask):
        return (x[:, 1:] * mask[:, 1:]).sum(-1)

class BertEmbeddings(torch.nn.Module):
    """BERT's embeddings: word, position (looked up by torch.arange) and
    token-type tables summed, then a layer norm. Every value over (batch,
    position, hidden) is a gather indexed by ids over (batch, position)."""
    def __init__(self, vocab=100, positions=40, hidden=64):
        super().__init__()
        torch.manual_seed(2)
        self.word = torch.nn.Embedding(vocab, hidden)
        self.position = torch.nn.Embedding(positions, hidden)
        self.token_type = torch.nn.Embedding(2, hidden)
        self.ln = torch.nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5); self.ln.bias.uniform_(-0.5, 0.5)
    def forward(self, ids, token_types):
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        return self.ln(self.word(ids) + self.position(positions)
                       + self.token_type(token_types))

class EmbeddingAddLayerNorm(torch.nn.Module):
    """Hidden states plus an embedding looked up by ids, then a layer norm:
    the gather fuses into each of the norm's sums beside x, so every phase
    of the row kernel evaluates it."""
    def __init__(self, vocab=50, hidden=768):
        super().__init__()
        torch.manual_seed(3)
        self.table = torch.nn.Embedding(vocab, hidden)
        self.ln = torch.nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5); self.ln.bias.uniform_(-0.5, 0.5)
    def forward(self, x, ids):
        return self.ln(x + self.table(ids))

class AdamStep(torch.nn.Module):
    """One Adam step over three parameters of different shapes (each with
    its gradient and moments), as a hand-written optimizer loop does: an
    independent elementwise update per parameter."""
    def forward(self, *tensors):
        outs = []
        for i in range(0, len(tensors), 4):
            p, g, m, v = tensors[i:i + 4]
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            outs += [p - 1e-3 * (m / 0.1) / (torch.sqrt(v / 0.001) + 1e-8), m, v]
        return tuple(outs)

class ClipGradNorm(torch.nn.Module):
    """clip_grad_norm_ written out: the global norm of four gradients, then
    every gradient scaled by min(1, max_norm / norm)."""
    def forward(self, a, b, c, d):
        grads = (a, b, c, d)
        norm = torch.sqrt(sum((g * g).sum() for g in grads))
        scale = torch.clamp(1.0 / (norm + 1e-6), max=1.0)
        return tuple(g * scale for g in grads)

class ScalarWeights(torch.nn.Module):
    """torch.lerp with a 0-d weight, divided by a bias correction of a 0-d
    step count (arithmetic on 0-d tensors, as optimizers and schedules do)."""
    def forward(self, x, y, w, step):
        return torch.lerp(x, y, w) / (1 - 0.9 ** step)

class InstanceNorm(torch.nn.Module):
    """Instance norm: torch reshapes the batch into channels and runs batch
    norm's statistics in f64."""
    def forward(self, x):
        return torch.nn.functional.instance_norm(x)

class ConvTransposeRoll(torch.nn.Module):
    """A stride-2 transposed convolution (torch-mlir inserts the input into
    zeros with stride 2, then convolves with the flipped weight) whose result
    is rolled along the width (two slices concatenated)."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.up = torch.nn.ConvTranspose2d(4, 3, 2, stride=2)
    def forward(self, x):
        return torch.roll(self.up(x), 3, -1)

class StackMul(torch.nn.Module):
    """torch.stack along an inner axis (a concat viewed with a new axis),
    then an elementwise product."""
    def forward(self, a, b, c):
        return torch.stack([a, b], 1) * c

class GroupNormSilu(torch.nn.Module):
    """Group norm with affine weights, then SiLU (a diffusion UNet's ResNet
    block): torch-mlir computes the statistics over [N, G, C/G * H * W] and
    gathers them per channel through constant index tensors."""
    def __init__(self, groups=4, channels=16):
        super().__init__()
        torch.manual_seed(6)
        self.norm = torch.nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)
    def forward(self, x):
        return torch.nn.functional.silu(self.norm(x))

cases = {
    "torch_softmax": (Softmax(), (torch.randn(32, 128),)),
    "torch_layernorm": (LayerNorm(), (torch.randn(16, 256),)),
    "torch_linear_gelu_residual": (MLPBlock(), (torch.randn(8, 64), torch.randn(8, 32))),
    "torch_bias_gelu": (BiasGelu(), (torch.randn(16, 128), torch.randn(128))),
    "torch_conv_relu": (ConvBlock(), (torch.randn(2, 4, 10, 12),)),
    "torch_residual_conv": (ResidualConv(), (torch.randn(2, 8, 9, 9),)),
    "torch_pad": (PadRelu(), (torch.randn(3, 5, 7),)),
    "torch_view_chain": (ViewChain(), (torch.randn(4, 8, 8),)),
    "torch_transformer_block": (Block().eval(), (torch.randn(2, 16, 64),)),
    "torch_mha": (MultiHeadAttention().eval(), (torch.randn(2, 16, 64),)),
    "torch_sdpa_causal": (CausalAttention(), tuple(torch.randn(2, 4, 16, 16) for _ in range(3))),
    "torch_rotary": (Rotary(), (torch.randn(2, 8, 16, 32), torch.randn(16, 32), torch.randn(16, 32))),
    "torch_greedy": (Greedy(), (torch.randn(16, 1000),)),
    "torch_layernorm_bwd": (LayerNormBackward(), (torch.randn(64, 256), torch.randn(64, 256),
                                                  torch.rand(256) + 0.5)),
    "torch_batch_stats_nhwc": (BatchStatsNHWC(), (torch.randn(4, 6, 6, 32) * 2 + 1,)),
    "torch_gelu_tanh_bwd": (GeluTanhBackward(), (torch.randn(32, 64) * 2, torch.randn(32, 64))),
    "torch_cross_entropy_loss": (CrossEntropyLoss(), (torch.randn(16, 50),
                                                      torch.randint(0, 50, (16,)))),
    # (rows of 1003 logits: each row starts 4 * 1003 bytes after the last,
    # off 16-byte boundaries; 2 x 8 rows after the shift)
    "torch_causal_lm_loss": (CausalLMLoss(), (torch.randn(2, 9, 1003) * 2,
                                              torch.randint(0, 1003, (2, 9)))),
    "torch_kl_div": (KLDivLoss(), (torch.randn(16, 64), torch.randn(16, 64))),
    # (the last sequence masked out entirely)
    "torch_masked_mean_pool": (MaskedMeanPool(), (torch.randn(4, 50, 96),
                                                  torch.rand(4, 50) < torch.tensor(
                                                      [[0.7], [0.3], [1.0], [0.0]]))),
    "torch_sentence_mean_pool": (SentenceMeanPool(), (torch.randn(4, 50, 96),
                                                      (torch.rand(4, 50) < 0.7).long())),
    "torch_masked_slice_sum": (MaskedSliceSum(), (torch.randn(8, 65), torch.rand(8, 65) < 0.5)),
    "torch_bert_embeddings": (BertEmbeddings(), (torch.randint(0, 100, (3, 40)),
                                                 torch.randint(0, 2, (3, 40)))),
    "torch_embedding_add_ln": (EmbeddingAddLayerNorm(), (torch.randn(2, 8, 768),
                                                         torch.randint(0, 50, (2, 8)))),
    "torch_adam_step": (AdamStep(), tuple(
        t for shape in ((64, 33), (100,), (8, 3, 5))
        for t in (torch.randn(shape), torch.randn(shape), torch.randn(shape) * 0.1,
                  torch.rand(shape) * 0.01))),
    "torch_clip_grad_norm": (ClipGradNorm(), (torch.randn(33, 17), torch.randn(100),
                                              torch.randn(8, 8, 3), torch.randn(1000))),
    "torch_scalar_weights": (ScalarWeights(), (torch.randn(64, 128), torch.randn(64, 128),
                                               torch.tensor(0.3), torch.tensor(3.0))),
    "torch_instance_norm": (InstanceNorm(), (torch.randn(2, 4, 8, 8) * 3 + 1,)),
    "torch_conv_transpose_roll": (ConvTransposeRoll(), (torch.randn(2, 4, 6, 6),)),
    "torch_stack_mul": (StackMul(), (torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 2, 8))),
    "torch_group_norm_silu": (GroupNormSilu(), (torch.randn(2, 16, 8, 8) * 2 + 0.5,)),
    # (batch 1, as in inference; 14 x 14 images)
    "torch_group_norm_b1": (GroupNormSilu(5, 10), (torch.randn(1, 10, 14, 14) * 2 + 0.5,)),
}


def attention_backward(q, k, v, do):
    """The gradients of softmax(q k^T / 8) v with respect to q, k and v, as
    autograd computes them (traced with make_fx: the key gradient is a
    batched contraction written transposed back into k's layout)."""
    ps = [p.detach().requires_grad_(True) for p in (q, k, v)]
    q, k, v = ps
    o = torch.softmax(q @ k.transpose(-1, -2) * 0.125, -1) @ v
    return tuple(torch.autograd.grad((o * do).sum(), ps))

# functions traced through autograd (make_fx, then torch-mlir's stateless
# importer): training graphs
traced = {
    "torch_attention_bwd": (attention_backward, tuple(torch.randn(2, 16, 32) for _ in range(4))),
}


def _traced(fn, args, name):
    from torch._decomp import core_aten_decompositions
    from torch.fx.experimental.proxy_tensor import make_fx
    gm = make_fx(fn, decomposition_table=core_aten_decompositions())(*args)
    return fx.stateless_fx_import(gm, output_type="linalg-on-tensors", model_name=name)


# python export.py [name ...]: only the cases named (all by default)
for name, (m, args) in {**cases, **traced}.items():
    if sys.argv[1:] and name not in sys.argv[1:]:
        continue
    if name in traced:
        mod = _traced(m, args, name)
    else:
        mod = fx.export_and_import(m, *args, output_type="linalg-on-tensors", func_name=name)
    open(f"{name}.mlir", "w").write(str(mod))
    with torch.set_grad_enabled(name in traced):
        out = m(*args)
    outs = out if isinstance(out, tuple) else (out,)
    np.savez(f"{name}.npz", **{f"in{i}": a.numpy() for i, a in enumerate(args)},
             **{f"expected{i}": o.detach().numpy() for i, o in enumerate(outs)})
    print(name, "ok")
