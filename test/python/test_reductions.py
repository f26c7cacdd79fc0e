"""Row-wise groups end to end: each normalization is one kernel, numerics on
the CPU target match the numpy reference, and the CUDA target compiles each to
one row kernel whose PTX assembles."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mlir")
import kfuse  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from make_artifacts import reduction_programs  # noqa: E402

PROGRAMS = {p.name: p for p in reduction_programs(rows=32, cols=200)}
TOL = {"f32": 2e-6, "f16": 2e-3}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cpu_numerics_and_one_group(name):
    prog = PROGRAMS[name]
    f = kfuse.compile(prog, target="cpu")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(kfuse.dtypes.to_numpy(d)) for _, s, d in prog.inputs]
    got = f(*args)
    got = got if isinstance(got, tuple) else (got,)
    for (oname, _, dt), g, w in zip(prog.outputs, got, prog.reference(*args)):
        err = np.max(np.abs(g.astype(np.float64) - w) / (1 + np.abs(w.astype(np.float64))))
        assert err <= 4 * TOL[dt.name], f"{name}:{oname} error {err}"
    kinds = [g.kind for g in f.report.groups]
    expected = 2 if name == "sum_exp_rows_f32" else 1  # two different row shapes
    assert f.report.after.kernels == expected, f.report
    assert "reduction" in kinds


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_row_kernel_assembles(name, tmp_path):
    f = kfuse.compile(PROGRAMS[name], target="cuda", chip="sm_90")
    assert f.ptx.count(".entry") == f.report.after.kernels
    assert "shfl.sync.bfly" in f.ptx  # the block reduction
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not os.path.exists(ptxas):
        pytest.skip("ptxas not installed")
    (tmp_path / "k.ptx").write_text(f.ptx)
    r = subprocess.run([ptxas, "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", os.devnull],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_softmax_from_mlir_text_is_one_group():
    text = open(os.path.join(os.path.dirname(__file__), "programs", "softmax.mlir")).read()
    f = kfuse.compile(text, target="cpu")
    assert f.report.after.kernels == 1 and f.report.groups[0].kind == "reduction"
    assert f.report.before.kernels == 6  # 2 fills, 2 reductions, 2 elementwise
    x = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(f(x), e / e.sum(1, keepdims=True), rtol=1e-6, atol=1e-7)
    cuda = kfuse.compile(text, target="cuda")
    (launch,) = cuda.plan.steps
    assert launch.grid == (64, 1, 1) and launch.block == (128, 1, 1)


def test_matmul_epilogue_is_not_grouped_with_the_matmul():
    text = """
    #id = affine_map<(d0, d1) -> (d0, d1)>
    func.func @mm(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<8x4xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
      %m = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>)
                         outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%m : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
      ^bb0(%in: f32, %o: f32):
        %v = arith.maximumf %in, %z : f32
        linalg.yield %v : f32
      } -> tensor<8x4xf32>
      return %r : tensor<8x4xf32>
    }"""
    with pytest.raises(kfuse.UnsupportedOpError, match="linalg.matmul"):
        kfuse.compile(text, target="cpu")
