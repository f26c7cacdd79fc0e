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
DTYPES = ["f32", "f16", "bf16", "f64"]
# CPU vs reference, relative and absolute, by dtype (both round per op)
TOLERANCE = {"f32": 1e-4, "f16": 2e-2, "bf16": 1e-1, "f64": 1e-9}


def random_program(seed: int) -> kb.Program:
    rng = np.random.default_rng(seed)
    dt = DTYPES[int(rng.integers(0, len(DTYPES)))]
    p = kb.Program(f"random_{seed}")
    shape = tuple(int(rng.integers(1, 9)) for _ in range(int(rng.integers(1, 4))))
    pool = [p.input(f"x{i}", shape, dt) for i in range(2)]
    pool.append(p.input("b", shape[-1:], dt))
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
                t = REDUCE[int(rng.integers(0, len(REDUCE)))](
                    t, axis=int(rng.integers(0, len(t.shape))),
                    keepdims=bool(rng.integers(0, 2)))
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


def random_inputs(prog: kb.Program, seed: int):
    rng = np.random.default_rng(seed + 7)
    return [rng.standard_normal(shape).astype(np.float32).astype(dtypes.to_numpy(dt))
            for _, shape, dt in prog.inputs]
