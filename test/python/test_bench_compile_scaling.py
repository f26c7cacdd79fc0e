"""bench/compile_scaling.py: its program families compile to the kernels they
are meant to exercise (one kernel for a chain and for a stack of row-wise
layers; multi-tensor launches for an optimizer's update), and its report
parses fuse-opt's pass timings. Times are not asserted (bench/ measures
them)."""

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

import compile_scaling  # noqa: E402


def test_families_compile_to_the_kernels_they_measure(tmp_path, capsys):
    out = tmp_path / "scaling.json"
    rows = compile_scaling.main(["--sizes", "chain=3", "update=20", "layers=3", "blocks=2",
                                 "--passes", "--out", str(out)])
    by = {r["family"]: r for r in rows}
    assert by["chain"]["kernels"] == 1
    assert by["layers"]["kernels"] == 1     # 6 row reductions over the same rows
    # 20 parameters over 20 spaces: multi-tensor groups of at most 16
    # spaces, whose two small launches then pack into one
    assert by["update"]["kernels"] == 1
    # two transformer blocks: 18 launches of 10 kernels (fusion-dedup-kernels)
    assert by["blocks"]["kernels"] == 18 and by["blocks"]["compiled"] == 10
    for r in rows:
        assert r["compile_s"] > 0
        names = [name for _, name in r["passes"]]
        assert len(names) == 5 and "GpuModuleToBinaryPass" in names
        assert not any(n.endswith("Pipeline") for n in names)
    assert json.loads(out.read_text())["rows"] == rows
    table = capsys.readouterr().out
    assert "| layers | 3 |" in table


def test_bad_sizes_are_refused():
    with pytest.raises(SystemExit, match="FAMILY=N"):
        compile_scaling.main(["--sizes", "chains=3"])
