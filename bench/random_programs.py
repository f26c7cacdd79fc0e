"""Random builder programs (seeded): chains of elementwise ops with
broadcasting, constant pads and reductions over either axis, several outputs.
test/python/test_random_programs.py checks their CPU results against
Program.reference; make_artifacts.py compiles some for the GPU checks."""

import numpy as np

import kfuse
from kfuse import builder as kb

UNARY = ["exp", "tanh", "sigmoid", "relu", "neg", "abs", "silu"]
BINARY = ["add", "sub", "mul", "maximum", "minimum"]
REDUCE = [kb.sum, kb.max, kb.mean]


def random_program(seed: int) -> kb.Program:
    rng = np.random.default_rng(seed)
    p = kb.Program(f"random_{seed}")
    shape = (int(rng.integers(2, 9)), int(rng.integers(2, 33)))
    pool = [p.input(f"x{i}", shape, "f32") for i in range(2)]
    pool.append(p.input("b", (shape[1],), "f32"))
    outputs = 0
    for _ in range(int(rng.integers(3, 9))):
        kind = int(rng.integers(0, 5))
        t = pool[int(rng.integers(0, len(pool)))]
        try:
            if kind == 0:
                t = getattr(kb, UNARY[int(rng.integers(0, len(UNARY)))])(t)
            elif kind == 1:
                u = pool[int(rng.integers(0, len(pool)))]
                t = getattr(kb, BINARY[int(rng.integers(0, len(BINARY)))])(t, u)
            elif kind == 2:
                widths = tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3)))
                               for _ in t.shape)
                t = kb.pad(t, widths, value=float(rng.integers(-2, 3)))
            elif kind == 3 and len(t.shape) == 2:
                t = REDUCE[int(rng.integers(0, len(REDUCE)))](
                    t, axis=int(rng.integers(0, 2)), keepdims=bool(rng.integers(0, 2)))
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
    rng = np.random.default_rng(seed + 1000)
    return [rng.standard_normal(shape).astype(np.float32) for _, shape, _ in prog.inputs]
