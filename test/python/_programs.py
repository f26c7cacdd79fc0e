"""Shared test programs: the .mlir files under test/python/programs/, by file
name, and the row programs, batch norms and stacks of normalizations several
tests (and bench/) build."""
import os

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


def program_text(name: str) -> str:
    with open(os.path.join(PROGRAMS, name)) as f:
        return f.read()


def stacked_layers(text: str, n: int) -> str:
    """The MLIR text of a one-function program whose function maps its one
    argument to a result of the same type (an exported transformer block)
    with its body repeated `n` times, each copy reading the one before it:
    a model of `n` such layers (the same weights in each). Every SSA name
    of copy k is renamed %l<k>_<name>."""
    import re
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if l.strip().startswith("func.func"))
    ret = next(i for i, l in enumerate(lines) if l.strip().startswith("return "))
    value, type_ = re.match(r"\s*return %(\w+) : (.*)$", lines[ret]).groups()
    body, prev = [], "%arg0"
    for k in range(n):
        def rename(m, k=k, prev=prev):
            return prev if m.group(1) == "arg0" else f"%l{k}_{m.group(1)}"
        body += [re.sub(r"%([A-Za-z0-9_]+)", rename, line) for line in lines[start + 1:ret]]
        prev = f"%l{k}_{value}"
    return "\n".join(lines[:start + 1] + body + [f"    return {prev} : {type_}"]
                     + lines[ret + 1:])


def norm_stack(name: str, n: int, rows: int, cols: int, every: bool = False):
    """A builder program of `n` pre-norm residual blocks over the same rows
    of an f32 input `x` [rows, cols], h = h + gelu(layernorm(h) * w + b): 2n
    row reductions in one row group (`every`: each block's h an output too,
    h0 ... h{n-2}, before the last block's `y`)."""
    from kfuse import builder as kb
    p = kb.Program(name)
    h = p.input("x", (rows, cols), "f32")
    w = p.input("w", (cols,), "f32")
    b = p.input("b", (cols,), "f32")
    for i in range(n):
        d = h - kb.mean(h, axis=1, keepdims=True)
        y = d * kb.rsqrt(kb.mean(d * d, axis=1, keepdims=True) + 1e-5) * w + b
        h = h + kb.gelu(y)
        if every and i < n - 1:
            p.output(h, name=f"h{i}")
    p.output(h, name="y")
    return p


def batch_norm(name: str, shape, axes):
    """A builder program of batch normalization in training (no affine) of an
    f32 input `x` of `shape` over `axes`: y = (x - mean) * rsqrt(var + 1e-5)."""
    from kfuse import builder as kb
    p = kb.Program(name)
    x = p.input("x", shape, "f32")
    m = kb.mean(x, axis=axes, keepdims=True)
    v = kb.mean((x - m) * (x - m), axis=axes, keepdims=True)
    p.output((x - m) * kb.rsqrt(v + 1e-5), name="y")
    return p


def row_program(name: str, kind: str, shape, dtype: str = "f32"):
    """A builder program of row program `kind` (see row_programs) over an
    input `x` of `shape` [rows, width]."""
    from kfuse import builder as kb
    p = kb.Program(name)
    x = p.input("x", shape, dtype)
    p.output(row_programs()[kind][0](x), name="y")
    return p


def row_programs():
    """Row programs over axis 1 of a [rows, width] input, by kind: (build,
    the kfuse builder expression of x; reference, numpy on x)."""
    import numpy as np
    from kfuse import builder as kb

    def softmax(x):
        e = kb.exp(x - kb.max(x, axis=1, keepdims=True))
        return e / kb.sum(e, axis=1, keepdims=True)

    def layernorm(x):
        d = x - kb.mean(x, axis=1, keepdims=True)
        return d * kb.rsqrt(kb.mean(d * d, axis=1, keepdims=True) + 1e-5)

    def logsumexp(x):
        m = kb.max(x, axis=1, keepdims=True)
        return kb.log(kb.sum(kb.exp(x - m), axis=1)) + kb.max(x, axis=1)

    def argmax(x):
        return kb.cast(kb.argmax(x, axis=1), "f32")

    def np_softmax(x):
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    def np_layernorm(x):
        d = x - x.mean(1, keepdims=True)
        return d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5)

    def np_logsumexp(x):
        return np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1)

    return {"softmax": (softmax, np_softmax), "layernorm": (layernorm, np_layernorm),
            "logsumexp": (logsumexp, np_logsumexp),
            "argmax": (argmax, lambda x: x.argmax(1).astype(np.float32))}
