"""Prints the pinned requirements of the development environment, one per
line, from pyproject.toml (the single place they are written)."""

import pathlib
import tomllib

root = pathlib.Path(__file__).resolve().parents[1]
meta = tomllib.loads((root / "pyproject.toml").read_text())
reqs = [r for r in meta["build-system"]["requires"] if not r.startswith("scikit-build")]
reqs += meta["project"]["dependencies"] + meta["project"]["optional-dependencies"]["dev"]
print("\n".join(dict.fromkeys(reqs)))
