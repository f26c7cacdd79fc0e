"""Variants of one program, the fastest chosen on the GPU it runs on.

kfuse chooses each kernel's strategy from the group's shapes and the chip;
where the best choice depends on the device (an H100 and an H200 favour
different clusters for rows of 262144), `kfuse.autotune` compiles the program
under several code generation options and this class times them, on the
arguments of its first call, on the GPU that runs them. It needs numpy and
cuda-python only: the variants are compiled elsewhere and saved together
(`TunedProgram.save`), then loaded here with `kfuse.runtime.load`.

A saved tuned program is a directory holding ``tuning.json`` and one saved
program directory a variant::

    {"kfuse_tuning": 1, "name": "softmax",
     "variants": [{"label": "default", "dir": "v0", "options": {}},
                  {"label": "row_chunks=0", "dir": "v1", "options": {"row_chunks": 0}}],
     "dropped": [["row_pack=1", "the same code as default"]],
     "chosen": {"NVIDIA H100 80GB HBM3": {"label": "row_chunks=0",
                                          "us": {"row_chunks=0": 301.2, "default": 305.9}}}}

"chosen" (optional; TunedExecutable.record writes it) keeps each device's
choice: loaded on a device of that name, the program runs it without timing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..errors import ArtifactError, DeviceError, KfuseError
from .plan import HoldsPlan

TUNING_FILE = "tuning.json"
TUNING_VERSION = 1

# Measure(label, run) -> seconds a call: `run(n)` queues n calls of the
# variant back to back and waits for the GPU once they are done.
Measure = Callable[[str, Callable[[int], None]], float]


def wall_seconds(run: Callable[[int], None], budget: float = 0.02) -> float:
    """Seconds a call of a variant: `run(n)` makes n calls back to back and
    waits for the GPU. A first call (which loads the module) is not timed; a
    second sizes the run, as many calls as fill about `budget` seconds (1 to
    1000), timed together: the GPU's time where its kernels are longer than
    the host's work to queue them, the host's where they are shorter."""
    run(1)
    t0 = time.perf_counter()
    run(1)
    once = max(time.perf_counter() - t0, 1e-6)
    reps = max(1, min(1000, int(budget / once)))
    t0 = time.perf_counter()
    run(reps)
    return (time.perf_counter() - t0) / reps


class TunedExecutable(HoldsPlan):
    """Variants of one program (the same inputs and outputs, other kernels);
    call it like the program. The first call times every variant on its
    arguments (calls queued back to back for about `budget` seconds a
    variant, then a wait for the GPU; ROUNDS rounds, the variants taking
    turns, the best of each kept), keeps the fastest and runs it; later
    calls run the one kept. `tune(*args)` times them again; `choose(label)`
    picks one without timing; `timings` holds the seconds a call of each, by
    label. A variant this device cannot run (the driver refuses its
    launches: clusters it does not have) is left out, its error kept in
    `failed`; where none runs, the first's error is raised.

    Timing runs real calls: host arrays are copied in and out each time (the
    copies are the same for every variant, so they only dilute the
    differences); pass device arrays (torch, cupy) to time the kernels.
    Variants' outputs differ only by rounding (other reduction orders)."""

    ROUNDS = 3

    def __init__(self, variants: Sequence[Tuple[str, object]], name: str = "",
                 measure: Optional[Measure] = None, budget: float = 0.02,
                 dropped: Sequence[Tuple[str, str]] = (), path: Optional[str] = None,
                 chosen: Optional[Dict[str, str]] = None):
        if not variants:
            raise KfuseError(f"{name or 'a tuned program'}: no variants to choose from")
        labels = [label for label, _ in variants]
        if len(set(labels)) != len(labels):
            raise KfuseError(f"{name}: variant labels repeat: {labels}")
        sigs = {exe.plan.signature() for _, exe in variants}
        if len(sigs) != 1:
            raise ArtifactError(f"{name}: the variants take different arguments: "
                                f"{sorted(sigs)}")
        self.name = name or variants[0][1].plan.name
        self.variants: Dict[str, object] = dict(variants)
        self.labels: Tuple[str, ...] = tuple(labels)
        self.dropped = list(dropped)
        self.path = path
        self.budget = budget
        self._measure = measure
        self.choice: Optional[str] = None
        self.timings: Dict[str, float] = {}
        self.failed: Dict[str, str] = {}
        self._lock = threading.Lock()   # (one thread times; the others wait for its choice)
        # (choices recorded before, by device name: taken without timing)
        self.chosen = {dev: label for dev, label in (chosen or {}).items()
                       if label in self.variants}

    @property
    def plan(self):
        """The plan of the variant chosen (the first before any is)."""
        return self.variants[self.choice or self.labels[0]].plan

    def __repr__(self) -> str:
        chosen = f" chosen={self.choice}" if self.choice else ""
        return f"<kfuse TunedExecutable {self.name} variants={len(self.labels)}{chosen}>"

    def choose(self, label: str) -> None:
        """Runs variant `label` from now on (no timing)."""
        if label not in self.variants:
            raise KfuseError(f"{self.name}: no variant {label!r}; the variants are "
                             f"{', '.join(self.labels)}")
        self.choice = label

    def tune(self, *args, stream=None, out=None) -> Dict[str, float]:
        """Times every variant on these arguments and keeps the fastest;
        returns the seconds a call of each, by label (fastest first)."""
        failed: Dict[str, KfuseError] = {}
        if out is None:
            # (the outputs of the first variant's call that runs serve every
            # timed call)
            for label in self.labels:
                try:
                    first = self.variants[label](*args, stream=stream)
                except (DeviceError, ArtifactError) as e:
                    failed[label] = e
                    continue
                out = first if isinstance(first, tuple) else (first,)
                break
            else:
                self.failed = {label: str(e) for label, e in failed.items()}
                raise next(iter(failed.values()))
        measure = self._measure or (
            lambda label, run: wall_seconds(run, self.budget))
        best: Dict[str, float] = {}
        for _ in range(1 if self._measure else self.ROUNDS):
            for label in self.labels:
                if label in failed:
                    continue
                exe = self.variants[label]

                def run(n, exe=exe):
                    for _ in range(n):
                        exe(*args, stream=stream, out=out)
                    exe.synchronize()
                try:
                    seconds = float(measure(label, run))
                except (DeviceError, ArtifactError) as e:
                    # (a variant this device does not run: left out)
                    failed[label] = e
                    best.pop(label, None)
                    continue
                best[label] = min(seconds, best.get(label, seconds))
        self.failed = {label: str(e) for label, e in failed.items()}
        if not best:
            raise next(iter(failed.values()))
        self.timings = dict(sorted(best.items(), key=lambda kv: kv[1]))
        self.choice = next(iter(self.timings))
        return dict(self.timings)

    def __call__(self, *args, stream=None, out=None):
        if self.choice is None:
            with self._lock:
                if self.choice is None:
                    recorded = (self.chosen.get(self._device_name()) if self.chosen
                                else None)
                    if recorded is not None:
                        self.choice = recorded
                    else:
                        self.tune(*args, stream=stream, out=out)
        return self.variants[self.choice](*args, stream=stream, out=out)

    def _device_name(self) -> str:
        return self.variants[self.labels[0]].device_name()

    def record(self, path: Optional[str] = None) -> str:
        """Writes the choice made on this device into the tuned program's
        tuning.json (`path`, or the directory it was loaded from), with the
        timings: loaded there again on a device of the same name, the program
        runs that variant without timing. Returns the device's name."""
        path = path or self.path
        if path is None:
            raise KfuseError(f"{self.name}: record() needs the tuned program's directory "
                             f"(it was not loaded from one)")
        if self.choice is None:
            raise KfuseError(f"{self.name}: no variant chosen yet: call the program (or "
                             f"tune() or choose()) first")
        device = self._device_name()
        file = os.path.join(path, TUNING_FILE)
        read_tuning(path)    # (an ArtifactError for a file that is not one)
        with open(file) as f:
            data = json.load(f)
        entry = {"label": self.choice}
        if self.timings:
            entry["us"] = {k: round(v * 1e6, 2) for k, v in self.timings.items()}
        data.setdefault("chosen", {})[device] = entry
        with open(file, "w") as f:
            json.dump(data, f, indent=2)
        self.chosen[device] = self.choice
        return device

    def synchronize(self) -> None:
        for exe in self.variants.values():
            exe.synchronize()

    def launch_grids(self, device: Optional[int] = None):
        """The grids of the chosen variant's launches (the first's before any
        is chosen) as they run on `device`: CudaExecutable.launch_grids."""
        return self.variants[self.choice or self.labels[0]].launch_grids(device)


def write_tuning(path: str, name: str, variants: Sequence[Tuple[str, str, dict]],
                 dropped: Sequence[Tuple[str, str]]) -> None:
    """Writes `path`/tuning.json: `variants` as (label, directory, options)."""
    data = {"kfuse_tuning": TUNING_VERSION, "name": name,
            "variants": [{"label": label, "dir": d, "options": options}
                         for label, d, options in variants],
            "dropped": [list(x) for x in dropped]}
    with open(os.path.join(path, TUNING_FILE), "w") as f:
        json.dump(data, f, indent=2)


def read_tuning(path: str) -> Tuple[str, List[Tuple[str, str]], List[Tuple[str, str]],
                                   Dict[str, str]]:
    """(name, [(label, variant directory)], dropped, {device name: label
    chosen there}) of a saved tuned program; ArtifactError naming what is
    wrong with its tuning.json."""
    file = os.path.join(path, TUNING_FILE)
    try:
        with open(file) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ArtifactError(f"{file}: cannot read it: {e}") from None
    if not isinstance(data, dict) or data.get("kfuse_tuning") != TUNING_VERSION:
        raise ArtifactError(f"{file}: not a kfuse tuning file of version {TUNING_VERSION}")
    variants = data.get("variants")
    if not isinstance(variants, list) or not variants:
        raise ArtifactError(f"{file}: 'variants' must be a non-empty list")
    out = []
    for i, v in enumerate(variants):
        if not (isinstance(v, dict) and isinstance(v.get("label"), str)
                and isinstance(v.get("dir"), str)):
            raise ArtifactError(f"{file}: variant {i} needs a 'label' and a 'dir' (strings)")
        d = v["dir"]
        if os.path.isabs(d) or os.path.normpath(d).startswith(".."):
            raise ArtifactError(f"{file}: variant {v['label']!r}: its dir {d!r} is not "
                                f"inside the tuned program's directory")
        out.append((v["label"], os.path.join(path, d)))
    dropped = [tuple(x) for x in data.get("dropped", [])
               if isinstance(x, list) and len(x) == 2]
    chosen = data.get("chosen", {})
    labels = {label for label, _ in out}
    if not isinstance(chosen, dict) or not all(
            isinstance(e, dict) and e.get("label") in labels for e in chosen.values()):
        raise ArtifactError(f"{file}: 'chosen' must map device names to "
                            f"{{\"label\": one of the variants' labels}}")
    return (str(data.get("name", "")), out, dropped,
            {dev: e["label"] for dev, e in chosen.items()})


def is_tuned_dir(path) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, TUNING_FILE))
