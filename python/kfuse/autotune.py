"""kfuse.autotune: a program compiled under several code generation options,
the fastest chosen on the GPU that runs it.

kfuse's strategy for each kernel follows from the group's shapes and the
chip. Where the best one depends on the device itself (its memory, its L2,
how many clusters it holds at once) and not only on its chip, the choice is
left to a measurement: `autotune` compiles the variants, keeps those whose
code differs, and the runtime's TunedExecutable times them on the first
call's arguments and keeps the fastest."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Dict, List, Optional, Sequence, Tuple, Union

from .api import (CompiledProgram, _build, _program_text, _resolve_options, _same_code,
                  STRATEGY_OPTIONS)
from .builder import Program
from .errors import CompileError, KfuseError
from .runtime.tune import TunedExecutable, write_tuning

# The variants tried where none are given: one option each, away from its
# default. Options for row kernels are tried only in programs that have a
# reduction, the unrolling of elementwise kernels only in programs of one
# elementwise launch. A variant a chip refuses (clusters before sm_90) is
# dropped with the reason; so is one whose code is the same as a variant
# kept before it. (row_prefetch is not among them: its distance, the rows
# the GPU runs at once, is the caller's to give.)
ROW_VARIANTS = (
    {"row_chunks": 0}, {"row_chunks": 2}, {"row_chunks": 8}, {"row_chunks": 16},
    {"row_occupancy": 2},
    {"row_cluster": 0}, {"row_cluster": 4}, {"row_cluster": 16},
    {"row_persist": "auto"},
    {"row_smem": 0},
    {"row_exchange": "barrier"},
    {"row_joint": False},
    {"row_trip": 8}, {"row_trip": 16}, {"row_peel": False},
    {"row_pack": 1}, {"row_pack": 8},
    {"row_shift": True},
    {"row_store_transposed": False},
)
# (an elementwise kernel's grid covers its space once, a vector a thread, by
# default; these give each thread 2 or 4 vectors, loaded first, over a half or a
# quarter of the blocks)
ELEMENTWISE_UNROLLS = (2, 4)
COMMON_VARIANTS = ({"readonly_inputs": True},)


def label_of(options: Dict[str, object]) -> str:
    """A variant's name: its options as k=v, in the order given ('default'
    for none)."""
    return ",".join(f"{k}={v}" for k, v in options.items()) or "default"


def auto_variants(default: CompiledProgram) -> List[Dict[str, object]]:
    """The variants `autotune` tries for a program whose default compile is
    `default`: see ROW_VARIANTS."""
    kinds = {g.kind for g in default.report.groups}
    out: List[Dict[str, object]] = []
    if kinds - {"elementwise"}:
        out += ROW_VARIANTS
    launches = [s for s in default.plan.steps if s.op == "launch"]
    if kinds == {"elementwise"} and len(launches) == 1:
        grid = launches[0].grid[0]
        # (sm_count=1: the grid is blocks_per_sm blocks)
        out += [{"sm_count": 1, "blocks_per_sm": grid // v, "unroll": v}
                for v in ELEMENTWISE_UNROLLS if grid % v == 0 and grid // v > 0]
    return [dict(v) for v in out + list(COMMON_VARIANTS)]


class TunedProgram:
    """The variants of a program that `autotune` kept, by label ('default'
    first: the options given to autotune alone). Call it like a compiled
    program: the first call on a GPU times every variant and keeps the
    fastest (`choice`, `timings`); `save(path)` writes a directory that
    `kfuse.runtime.load` turns into the same TunedExecutable on a machine
    with only numpy and cuda-python. `dropped` says, for each variant not
    kept, why: the same code as a kept one, or refused (an option the chip
    does not have)."""

    def __init__(self, name: str, variants: Sequence[Tuple[str, Dict[str, object],
                                                           CompiledProgram]],
                 dropped: Sequence[Tuple[str, str]], compile_seconds: float):
        self.name = name
        self.variants: Dict[str, CompiledProgram] = {label: c for label, _, c in variants}
        self.variant_options: Dict[str, Dict[str, object]] = {
            label: dict(o) for label, o, _ in variants}
        self.dropped = list(dropped)
        self.compile_seconds = compile_seconds
        self._exe: Optional[TunedExecutable] = None

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.variants)

    @property
    def default(self) -> CompiledProgram:
        return self.variants[self.labels[0]]

    @property
    def report(self):
        """The default variant's fusion report (the variants plan the same
        groups; their kernels differ)."""
        return self.default.report

    @property
    def current(self) -> CompiledProgram:
        """The variant chosen (the default before any is)."""
        return self.variants[self.choice or self.labels[0]]

    @property
    def plan(self):
        return self.current.plan

    @property
    def ptx(self) -> str:
        return self.current.ptx

    @property
    def stages(self):
        return self.current.stages

    def emulate(self, *args):
        """Runs the current variant (the chosen one, else the default) in the
        PTX emulator; `variants[label].emulate` runs another."""
        return self.current.emulate(*args)

    @property
    def choice(self) -> Optional[str]:
        return self._exe.choice if self._exe else None

    @property
    def timings(self) -> Dict[str, float]:
        return dict(self._exe.timings) if self._exe else {}

    def executable(self) -> TunedExecutable:
        """The runtime's TunedExecutable over the variants (built once)."""
        if self._exe is None:
            self._exe = TunedExecutable(
                [(label, c._executable()) for label, c in self.variants.items()],
                name=self.name, dropped=self.dropped)
        return self._exe

    def __call__(self, *args, **kwargs):
        return self.executable()(*args, **kwargs)

    def tune(self, *args, **kwargs) -> Dict[str, float]:
        return self.executable().tune(*args, **kwargs)

    def choose(self, label: str) -> None:
        self.executable().choose(label)

    def summary(self) -> str:
        """The variants kept and dropped, one a line (with the seconds a call
        of each once timed)."""
        lines = [f"{self.name}: {len(self.variants)} variant(s) of distinct code, "
                 f"compiled in {self.compile_seconds:.2f} s"]
        timings = self.timings
        for label, c in self.variants.items():
            t = f", {timings[label] * 1e6:.1f} us a call" if label in timings else ""
            mark = " (chosen)" if label == self.choice else ""
            lines.append(f"  {label}: {len(c.plan.kernels)} kernel(s), "
                         f"{len(c.plan.steps)} step(s){t}{mark}")
        for label, why in self.dropped:
            lines.append(f"  dropped {label}: {why}")
        for label, why in (self._exe.failed if self._exe else {}).items():
            lines.append(f"  not run on this device, {label}: {why}")
        return "\n".join(lines)

    def save(self, path: Union[str, os.PathLike]) -> str:
        """Writes each variant (CompiledProgram.save) under `path`/v<i> and
        tuning.json, which names them."""
        path = os.fspath(path)
        os.makedirs(path, exist_ok=True)
        entries = []
        for i, (label, c) in enumerate(self.variants.items()):
            d = f"v{i}"
            c.save(os.path.join(path, d))
            entries.append((label, d, dict(self.variant_options[label])))
        write_tuning(path, self.name, entries, self.dropped)
        return path

    def __repr__(self):
        return (f"<kfuse.TunedProgram {self.name} variants={len(self.variants)}"
                + (f" chosen={self.choice}" if self.choice else "") + ">")


def autotune(program: Union[Program, str], target: str = "cuda", *,
             variants: Optional[Sequence[Dict[str, object]]] = None, pairs: bool = False,
             chip: Optional[str] = None, recompute: str = "auto", numerics: str = "fast",
             filename: str = "<input>", **strategy) -> TunedProgram:
    """Compiles `program` for CUDA as kfuse.compile does with `strategy`
    (the 'default' variant), then once more for each of `variants` (dicts of
    strategy options, each applied over `strategy`; None: auto_variants, one
    option at a time away from its default, those of row kernels where the
    program has a reduction), and keeps the variants whose PTX or launch plan
    differ. With `pairs`, also each pair of the variants kept (their options
    together, where they set different options). Returns a TunedProgram:
    the first call on a GPU times them and runs the fastest from then on.
    Compiling needs no GPU; `chip` and the SM count are those of the GPU
    here, or sm_90 with 132 SMs without one, as for kfuse.compile."""
    if target not in ("cuda", "auto"):
        raise CompileError(f"kfuse.autotune times CUDA kernels; target {target!r} has "
                           f"no variants to choose between (use target='cuda')")
    t0 = time.perf_counter()
    given = [] if variants is None else list(variants)
    for v in given:
        if not isinstance(v, dict):
            raise CompileError(f"kfuse.autotune: each variant is a dict of options, got "
                               f"{type(v).__name__}")
        unknown = set(v) - STRATEGY_OPTIONS
        if unknown:
            raise CompileError(f"kfuse.autotune: unknown options {sorted(unknown)} in "
                               f"variant {v}")
    text, filename, guard = _program_text(program, filename)
    options, _, _ = _resolve_options("cuda", chip, recompute, numerics, True, strategy)
    default = _build(text, filename, guard, options)
    # (the text parsed once in a child without aborting it: the variants
    # parse it in this process)
    guard = False
    kept: List[Tuple[str, Dict[str, object], CompiledProgram]] = [
        ("default", {}, default)]
    seen = {options}
    dropped: List[Tuple[str, str]] = []

    def attempt(v: Dict[str, object]) -> None:
        label = label_of(v)
        if any(label == k for k, _, _ in kept) or any(label == d for d, _ in dropped):
            return
        try:
            opts = replace(options, **v)
        except KfuseError as e:
            dropped.append((label, f"refused: {e}"))
            return
        if opts in seen:
            dropped.append((label, "the same options as a variant kept"))
            return
        seen.add(opts)
        try:
            compiled = _build(text, filename, guard, opts)
        except KfuseError as e:
            dropped.append((label, f"refused: {str(e).splitlines()[0]}"))
            return
        twin = next((k for k, _, c in kept if _same_code(c, compiled)), None)
        if twin is not None:
            dropped.append((label, f"the same code as {twin}"))
            return
        kept.append((label, v, compiled))

    for v in auto_variants(default) if variants is None else given:
        attempt(v)
    if pairs:
        singles = [v for _, v, _ in kept[1:]]
        for i, a in enumerate(singles):
            for b in singles[i + 1:]:
                if not set(a) & set(b):
                    attempt({**a, **b})
    return TunedProgram(default.name, kept, dropped, time.perf_counter() - t0)
