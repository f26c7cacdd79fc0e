"""ptxas for the tests that check what it makes of generated PTX (the same
lookup as bench/sass_loops.find_ptxas: the PATH, else CUDA's usual place)."""

import os
import shutil
import subprocess
import tempfile
from typing import Optional


def find() -> Optional[str]:
    """ptxas's path, or None where it is not installed."""
    path = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    return path if os.path.exists(path) else None


def assemble(ptx: str, chip: str = "sm_90", verbose: bool = False) -> Optional[str]:
    """Assembles `ptx` for `chip`, asserting that ptxas takes it, and returns
    what ptxas printed (with `verbose`, `-v`: registers and spills of each
    kernel); None where ptxas is not installed."""
    ptxas = find()
    if ptxas is None:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as fh:
        fh.write(ptx)
    try:
        r = subprocess.run([ptxas, f"-arch={chip}"] + (["-v"] if verbose else []) +
                           [fh.name, "-o", os.devnull], capture_output=True, text=True)
    finally:
        os.unlink(fh.name)
    assert r.returncode == 0, r.stderr[:2000]
    return r.stderr
