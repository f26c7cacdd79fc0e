"""kfuse.compile end to end on the CPU target: numerics against numpy, the
fusion report, the stages, save/load, and every error a user can cause."""

import math
import os
import re

import numpy as np
import pytest

pytest.importorskip("mlir")
import kfuse  # noqa: E402
from _programs import batch_norm, norm_stack, program_text, row_program  # noqa: E402
from kfuse import builder as kb  # noqa: E402
from kfuse import dtypes  # noqa: E402

# Per-dtype tolerances (relative to 1 + |reference|): the CPU target rounds
# per op like the numpy reference; libm vs numpy transcendental differ in ulps.
TOL = {"f32": 2e-6, "f16": 2e-3, "bf16": 1.6e-2}

UNARY = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "gelu",
         "silu", "erf"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]


def _inputs(prog, rng, positive=False):
    out = []
    for _, shape, dt in prog.inputs:
        if dt.name == "i1":
            out.append(rng.random(shape) > 0.5)
            continue
        a = rng.standard_normal(shape)
        if positive:
            a = np.abs(a) + 0.1
        out.append(a.astype(dtypes.to_numpy(dt)))
    return out


def _check(prog, args, target="cpu", **kw):
    f = kfuse.compile(prog, target=target, **kw)
    got = f(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = prog.reference(*args)
    assert len(got) == len(want)
    for (name, shape, dt), g, w in zip(prog.outputs, got, want):
        assert g.shape == tuple(shape) and g.dtype == w.dtype, name
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        err = np.max(np.abs(g64 - w64) / (1 + np.abs(w64)), initial=0.0)
        assert err <= TOL.get(dt.name, 0), f"{prog.name}:{name} error {err}"
    return f


def _dt_params():
    params = ["f32", "f16"]
    try:
        import ml_dtypes  # noqa: F401
        params.append("bf16")
    except ImportError:
        pass
    return params


@pytest.mark.parametrize("dt", _dt_params())
@pytest.mark.parametrize("op", UNARY)
def test_unary_numerics(op, dt):
    p = kb.Program(f"u_{op}")
    x = p.input("x", (4, 96), dt)
    p.output(getattr(kb, op)(x), name="y")
    positive = op in ("log", "sqrt", "rsqrt")
    _check(p, _inputs(p, np.random.default_rng(1), positive))


@pytest.mark.parametrize("dt", _dt_params())
@pytest.mark.parametrize("op", BINARY)
def test_binary_numerics_with_broadcast(op, dt):
    p = kb.Program(f"b_{op}")
    x = p.input("x", (8, 64), dt)
    y = p.input("y", (64,), dt)
    p.output(getattr(kb, op)(x, y), name="z")
    _check(p, _inputs(p, np.random.default_rng(2), positive=(op == "pow")))


def test_chain_scalars_where_cast_and_size1_broadcast():
    p = kb.Program("mixed")
    x = p.input("x", (16, 1), "f32")
    y = p.input("y", (1, 32), "f32")
    h = p.input("h", (16, 32), "f16")
    s = kb.tanh(x * 2.0 - y) + 1.0
    m = kb.where(s > 1.0, s, -s)
    p.output(m + kb.cast(h, "f32"), name="out")
    p.output(kb.cast(m, "f16"), name="half")
    _check(p, _inputs(p, np.random.default_rng(3)))


def test_softplus_fuses_into_one_kernel_and_reports_bytes():
    n = 1 << 12
    p = kb.Program("softplus")
    x = p.input("x", (n,), "f32")
    p.output(kb.log(kb.exp(x) + 1.0), name="y")
    f = _check(p, _inputs(p, np.random.default_rng(4)))
    r = f.report
    assert (r.before.kernels, r.after.kernels) == (3, 1)
    assert r.before.bytes == 3 * 2 * 4 * n and r.after.bytes == 2 * 4 * n
    assert [g.ops for g in r.groups] == [["math.exp", "arith.addf", "math.log"]]
    assert "1 kernels" in str(r) and "3.00x" in str(r)
    assert list(f.stages) == ["input", "normalize", "plan", "codegen", "target"]
    assert f.stages["plan"].count("fusion.group") == 1
    assert "llvm.func @_mlir_ciface_softplus" in f.stages["target"]


def test_multi_consumer_producer_is_computed_once_per_kernel():
    p = kb.Program("multi")
    x = p.input("x", (64, 32), "f32")
    t = kb.exp(x)
    p.output(t + 1.0, name="a")
    p.output(t * t, name="b")
    p.output(t, name="t")
    f = _check(p, _inputs(p, np.random.default_rng(5)))
    assert f.report.after.kernels == 1
    assert f.report.after.bytes_written == 3 * 64 * 32 * 4


def test_mlir_text_input_and_same_pipelines_as_fuse_opt():
    text = """
    func.func @axpy(%x: tensor<256xf32>, %y: tensor<256xf32>) -> tensor<256xf32> {
      %e = tensor.empty() : tensor<256xf32>
      %r = linalg.add ins(%x, %y : tensor<256xf32>, tensor<256xf32>)
                      outs(%e : tensor<256xf32>) -> tensor<256xf32>
      return %r : tensor<256xf32>
    }"""
    f = kfuse.compile(text, target="cpu")
    a, b = np.arange(256, dtype=np.float32), np.ones(256, dtype=np.float32)
    np.testing.assert_array_equal(f(a, b), a + b)
    assert [s.name for s in f.inputs] == ["arg0", "arg1"]
    assert "linalg.generic" in f.stages["normalize"]


@pytest.mark.parametrize("recompute", ["auto", "never", "always"])
def test_recompute_option_reaches_the_plan_pipeline(recompute):
    p = kb.Program("rc")
    x = p.input("x", (32,), "f32")
    p.output(kb.exp(x), name="y")
    f = kfuse.compile(p, target="cpu", recompute=recompute)
    assert f.options.recompute == recompute
    with pytest.raises(kfuse.CompileError, match="recompute must be one of"):
        kfuse.compile(p, target="cpu", recompute="sometimes")


def test_cuda_compiles_without_a_gpu_to_one_vectorized_kernel():
    p = kb.Program("softplus")
    x = p.input("x", (1 << 16,), "f32")
    p.output(kb.log(kb.exp(x) + 1.0), name="y")
    f = kfuse.compile(p, target="cuda", chip="sm_90")
    assert f.ptx.count(".entry") == 1
    assert "ld.global.v4" in f.ptx and "st.global.v4" in f.ptx
    assert ".target sm_90" in f.ptx
    (launch,) = f.plan.steps
    assert launch.block == (256, 1, 1) and launch.align == 16
    f80 = kfuse.compile(p, target="cuda", chip="sm_80", threads=128)
    assert ".target sm_80" in f80.ptx and f80.plan.steps[0].block == (128, 1, 1)


def test_save_and_load_cpu(tmp_path):
    p = kb.Program("saved")
    x = p.input("x", (8, 8), "f32")
    p.output(kb.sigmoid(x), name="y")
    f = kfuse.compile(p, target="cpu")
    f.save(tmp_path / "prog")
    assert sorted(os.listdir(tmp_path / "prog" / "stages"))[0].startswith("0-input")
    g = kfuse.load(tmp_path / "prog")
    a = np.random.default_rng(6).standard_normal((8, 8)).astype(np.float32)
    np.testing.assert_array_equal(g(a), f(a))


def test_cpu_program_saved_with_a_pointer_an_argument_still_runs(tmp_path):
    # Programs saved before fusion-cpu-argv-entries: a C interface taking one
    # descriptor pointer an argument, and a plan without extra["args"].
    import json
    import subprocess
    from kfuse.pipeline import fuse_opt_path
    p = kb.Program("older")
    x = p.input("x", (8, 8), "f32")
    p.output(kb.sigmoid(x) * 2.0, name="y")
    f = kfuse.compile(p, target="cpu")
    assert "llvm.func @_mlir_ciface_older(%arg0: !llvm.ptr)" in f.llvm
    path = tmp_path / "prog"
    f.save(path)
    older = subprocess.run(
        [fuse_opt_path(), str(path / "stages" / "3-codegen.mlir"), "--pass-pipeline=builtin.module("
         "func.func(fusion-cpu-bf16-casts,arith-expand{include-bf16=1},fusion-expand-powi),"
         "expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-math-to-llvm,"
         "convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)"],
        check=True, capture_output=True, text=True).stdout
    assert "llvm.call @older(" in older
    (path / "program.llvm.mlir").write_text(older)
    plan = json.loads((path / "plan.json").read_text())
    del plan["args"]
    (path / "plan.json").write_text(json.dumps(plan))
    a = np.random.default_rng(7).standard_normal((8, 8)).astype(np.float32)
    np.testing.assert_array_equal(kfuse.load(path)(a), f(a))


def test_save_cuda_artifact_loads_with_runtime_only(tmp_path):
    p = kb.Program("art")
    x = p.input("x", (1024,), "f16")
    p.output(kb.relu(x), name="y")
    f = kfuse.compile(p, target="cuda")
    f.save(tmp_path / "a")
    exe = kfuse.runtime.load(tmp_path / "a")
    assert exe.plan.steps == f.plan.steps
    assert open(tmp_path / "a" / "kernels.ptx").read() == f.ptx


# ----------------------------------------------------------------- bad input

def test_malformed_mlir_is_a_located_parse_error():
    with pytest.raises(kfuse.ParseError) as e:
        kfuse.compile("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %y\n}")
    msg = str(e.value)
    assert "<input>:2:12: expected ':'" in msg and "  return %y" in msg and "^" in msg


def test_op_of_a_dialect_kfuse_does_not_load_is_named():
    # torch-mlir lowers torch.cumsum to tm_tensor.scan, outside linalg
    text = """
func.func @cumsum(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %e = tensor.empty() : tensor<8x100xf32>
  %a = tensor.empty() : tensor<8xf32>
  %r:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<8x100xf32>)
      outs(%e, %a : tensor<8x100xf32>, tensor<8xf32>) {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tm_tensor.yield %s : f32
  } -> tensor<8x100xf32>, tensor<8xf32>
  return %r#0 : tensor<8x100xf32>
}"""
    with pytest.raises(kfuse.ParseError) as e:
        kfuse.compile(text, target="cpu")
    msg = str(e.value)
    assert "<input>:5:10: Dialect `tm_tensor' not found" in msg
    assert "kfuse does not support the 'tm_tensor' dialect" in msg


def test_input_on_which_mlirs_parser_aborts_is_a_parse_error():
    # found by mutating the test programs: a value used in one region and
    # defined in a later one that fails to parse makes MLIR's parser abort the
    # process ("operation destroyed but still has uses"); kfuse parses in a
    # forked child first and reports it
    text = """
#map = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %u = arith.mulf %v, %in : f32
    linalg.yield %u : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%r : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %in : f32
  ^bb0(%in2: f32, %out2: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
"""
    if not hasattr(os, "fork"):
        pytest.skip("the guard needs fork")
    with pytest.raises(kfuse.ParseError) as e:
        kfuse.compile(text, target="cpu")
    msg = str(e.value)
    assert "parser aborts" in msg and "<input>:15:3: redefinition of block '^bb0'" in msg


def test_unsupported_op_names_the_op_and_gives_a_repro():
    text = """
    func.func @mm(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %e = tensor.empty() : tensor<4x4xf32>
      %r = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                         outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
      return %r : tensor<4x4xf32>
    }"""
    # (a matmul is a contraction group now; see test_reductions.py)
    assert kfuse.compile(text, target="cpu").report.groups[0].kind == "contraction"
    generate = """
    func.func @gen(%a: tensor<8xf32>) -> tensor<8xf32> {
      %c = arith.constant 0.0 : f32
      %r = tensor.generate {
      ^bb0(%i: index):
        tensor.yield %c : f32
      } : tensor<8xf32>
      return %r : tensor<8xf32>
    }"""
    with pytest.raises(kfuse.UnsupportedOpError, match="'tensor.generate'") as e:
        kfuse.compile(generate, target="cuda")
    assert e.value.op == "tensor.generate"
    # an insert at an offset read from a tensor: the error names the insert,
    # not the tensor.extract that reads the offset
    insert = """
    func.func @ins(%a: tensor<4xf32>, %b: tensor<8xf32>, %o: tensor<i64>) -> tensor<8xf32> {
      %x = tensor.extract %o[] : tensor<i64>
      %i = arith.index_cast %x : i64 to index
      %r = tensor.insert_slice %a into %b[%i] [4] [1] : tensor<4xf32> into tensor<8xf32>
      return %r : tensor<8xf32>
    }"""
    for target in ("cpu", "cuda"):
        with pytest.raises(kfuse.UnsupportedOpError, match="'tensor.insert_slice'") as e:
            kfuse.compile(insert, target=target)
        assert e.value.op == "tensor.insert_slice"
    repro = e.value.repro.split()[1].strip("'")
    assert "fuse-opt" in e.value.repro and os.path.exists(repro)
    # (the failing stage's input, printed from its bytecode snapshot)
    with open(repro) as fh:
        assert "tensor.insert_slice" in fh.read()


def test_dynamic_shapes_and_bad_dtypes_are_rejected():
    dyn = "func.func @d(%x: tensor<?xf32>) -> tensor<?xf32> { return %x : tensor<?xf32> }"
    with pytest.raises(kfuse.CompileError, match="dynamic shapes"):
        kfuse.compile(dyn, target="cpu")
    cplx = ("func.func @c(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> "
            "{ return %x : tensor<4xcomplex<f32>> }")
    with pytest.raises(kfuse.CompileError, match="element type"):
        kfuse.compile(cplx, target="cpu")


def test_builder_shape_and_dtype_mismatch():
    p = kb.Program("bad")
    x = p.input("x", (4, 3), "f32")
    y = p.input("y", (4, 5), "f32")
    h = p.input("h", (4, 3), "f16")
    with pytest.raises(kfuse.BuilderError, match=r"\(4, 3\).*\(4, 5\)"):
        x + y
    with pytest.raises(kfuse.BuilderError, match="cast"):
        x + h


@pytest.fixture(scope="module")
def small():
    p = kb.Program("small")
    x = p.input("x", (4,), "f32")
    p.output(x * 2.0, name="y")
    return kfuse.compile(p, target="cpu")


def test_call_with_wrong_argument_count(small):
    with pytest.raises(kfuse.CallError, match=r"takes 1 input \(x\) but got 2"):
        small(np.zeros(4, np.float32), np.zeros(4, np.float32))


def test_call_with_wrong_shape(small):
    with pytest.raises(kfuse.CallError, match=r"shape \(5,\)"):
        small(np.zeros(5, np.float32))


def test_call_with_wrong_dtype(small):
    with pytest.raises(kfuse.CallError, match="float64"):
        small(np.zeros(4, np.float64))


def test_out_must_not_share_memory_with_inputs_or_outputs():
    # kernels read their inputs while they write outputs: out= must not alias
    p = kb.Program("rows")
    a = p.input("a", (16, 16), "f32")
    p.output(a - a.max(axis=-1, keepdims=True), name="y")
    p.output(a * 2.0, name="z")
    f = kfuse.compile(p, target="cpu")
    x = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    with pytest.raises(kfuse.CallError, match="output 'y' .* shares memory with input 'a'"):
        f(x, out=(x, np.empty_like(x)))
    both = np.empty((2, 16, 16), np.float32)
    with pytest.raises(kfuse.CallError, match="output 'z' .* shares memory with output 'y'"):
        f(x, out=(both[0], both[0]))
    y, z = f(x, out=(both[0], both[1]))  # adjacent, not overlapping
    assert y.base is both and z.base is both
    np.testing.assert_array_equal(y, x - x.max(axis=-1, keepdims=True))
    np.testing.assert_array_equal(z, x * 2)
    # the same check on device pointers (the CUDA runtime's spans), no GPU needed
    plan = kfuse.compile(p, target="cuda").plan
    plan.check_disjoint_outputs([("device", 4096)], [("device", 8192), ("device", 4096 + 1024)])
    with pytest.raises(kfuse.CallError, match="output 'z'.*input 'a'"):
        plan.check_disjoint_outputs([("device", 4096)],
                                    [("device", 8192), ("device", 4096 + 1020)])
    plan.check_disjoint_outputs([None], [("device", 0), None])  # staged host arrays


def test_unknown_target_and_option():
    p = kb.Program("t")
    x = p.input("x", (4,), "f32")
    p.output(x + 1.0)
    with pytest.raises(kfuse.CompileError, match="unknown target"):
        kfuse.compile(p, target="tpu")
    with pytest.raises(kfuse.CompileError, match="unknown options"):
        kfuse.compile(p, target="cpu", tile=3)
    with pytest.raises(kfuse.CompileError, match="chip"):
        kfuse.compile(p, target="cuda", chip="bogus")


def test_cuda_call_without_gpu_is_a_device_error():
    if kfuse.runtime.cuda_available():
        pytest.skip("a GPU is present")
    p = kb.Program("nogpu")
    x = p.input("x", (4,), "f32")
    p.output(x + 1.0)
    f = kfuse.compile(p, target="cuda")
    with pytest.raises(kfuse.DeviceError, match="no CUDA device"):
        f(np.zeros(4, np.float32))
    assert kfuse.compile(p).target == "cpu"  # auto picks the CPU without a GPU


def test_importing_kfuse_registers_the_dialect_in_new_contexts():
    from mlir import ir
    with ir.Context():
        m = ir.Module.parse("""
          func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
            %r = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>) {
            ^bb0(%a: tensor<4xf32>):
              fusion.yield %a : tensor<4xf32>
            } -> tensor<4xf32>
            return %r : tensor<4xf32>
          }""")
        assert "fusion.group" in str(m)


def test_cli_compile_reports_and_fails_cleanly(tmp_path, capsys):
    from kfuse.__main__ import main
    good = tmp_path / "good.mlir"
    good.write_text("""
    func.func @neg(%x: tensor<64xf32>) -> tensor<64xf32> {
      %e = tensor.empty() : tensor<64xf32>
      %r = linalg.negf ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
      return %r : tensor<64xf32>
    }""")
    assert main(["compile", str(good), "--target", "cpu", "-o", str(tmp_path / "o")]) == 0
    assert "1 kernels" in capsys.readouterr().out
    assert (tmp_path / "o" / "plan.json").exists()
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( {\n")
    assert main(["compile", str(bad), "--target", "cpu"]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:1:" in err and "kfuse: error:" in err
    assert main(["compile", str(tmp_path / "missing.mlir")]) == 1
    # (a file that is not text: a kfuse error naming the byte, not a traceback)
    binary = tmp_path / "binary.mlir"
    binary.write_bytes(b"func\x00\xff\xfe")
    capsys.readouterr()
    assert main(["compile", str(binary), "--target", "cpu"]) == 1
    assert "is not MLIR text: byte 0xff at offset 5" in capsys.readouterr().err


def test_cli_compile_takes_strategy_options(tmp_path, capsys):
    from kfuse.__main__ import main, strategy_value
    assert [strategy_value(v) for v in ("8", "0x10", "true", "False", "none", "auto")] == \
        [8, 16, True, False, None, "auto"]
    prog = tmp_path / "softmax.mlir"
    prog.write_text(row_program("softmax", "softmax", (64, 1024)).to_mlir())
    out = tmp_path / "o"
    assert main(["compile", str(prog), "--target", "cuda", "--chip", "sm_90", "--set",
                 "row_chunks=2", "--set", "row_cluster=4", "--set", "pdl=false",
                 "--numerics", "strict", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    # (rows of 1024 in one block: no cluster; one kernel: no launch to make
    # programmatic; two chunks a thread do change the kernel)
    assert "options that change nothing here: row_cluster=4, pdl=False (the same " \
        "kernels without each)" in text
    import json
    opts = json.load(open(out / "options.json"))
    assert (opts["row_chunks"], opts["row_cluster"], opts["pdl"], opts["numerics"]) == \
        (2, 4, False, "strict")
    assert main(["compile", str(prog), "--target", "cuda", "--chip", "sm_90", "--set",
                 "row_persist=auto"]) == 0
    assert "change nothing" not in capsys.readouterr().out
    for bad in ("row_chunks", "=3"):
        assert main(["compile", str(prog), "--target", "cpu", "--set", bad]) == 1
        assert "--set takes NAME=VALUE" in capsys.readouterr().err
    assert main(["compile", str(prog), "--target", "cpu", "--set", "row_chunk=8"]) == 1
    assert "unknown options ['row_chunk']" in capsys.readouterr().err


def test_boolean_inputs_and_outputs_cross_the_boundary_as_bytes():
    p = kb.Program("masked")
    m = p.input("m", (8, 32), "i1")
    x = p.input("x", (8, 32), "f32")
    y = kb.where(m, x, -x)
    p.output(y, name="y")
    p.output(y > 0.5, name="big")
    f = _check(p, _inputs(p, np.random.default_rng(7)))
    assert f.report.after.kernels == 1
    out = f(np.ones((8, 32), bool), np.full((8, 32), 2.0, np.float32))
    assert out[1].dtype == np.bool_ and out[1].all()
    assert "memref<8x32xi8>" in f.stages["codegen"]


def test_broadcast_producer_that_is_also_an_output():
    p = kb.Program("bcast_out")
    x = p.input("x", (16, 64), "f32")
    b = p.input("b", (64,), "f32")
    e = kb.exp(b)
    p.output(e, name="e")
    p.output(x + e, name="z")
    f = _check(p, _inputs(p, np.random.default_rng(8)))
    assert f.report.after.kernels == 2  # two iteration spaces: two kernels
    assert any("another iteration space" in d for g in f.report.groups for d in g.decisions)


def test_materialize_directive_splits_the_kernel_and_is_reported():
    p = kb.Program("forced")
    x = p.input("x", (32, 32), "f32")
    t = kb.materialize(kb.exp(x))
    p.output(kb.log(t + 1.0), name="y")
    f = _check(p, _inputs(p, np.random.default_rng(9)))
    assert f.report.after.kernels == 2
    text = str(f.report)
    assert "fusion.materialize directive" in text
    assert "fusion.materialize" in f.stages["input"]
    with pytest.raises(kfuse.BuilderError, match="already in memory"):
        kb.materialize(x)


@pytest.mark.parametrize("shape", [(6, 8), (1024, 1024)])
def test_sibling_beside_a_sum_of_column_sums_runs_on_cuda(shape):
    # (a random program, seed 1580) x * 3 + 0.5 beside x.sum(0).sum() / 8:
    # merged, the two sums were one reduction over x's (columns, rows), whose
    # loops the sibling's (rows, columns) did not match; the CUDA target
    # refused the group ("runs over neither the rows nor ..."). Now one
    # kernel, on both targets, reading x once.
    p = kb.Program("sibling_total")
    x = p.input("x", shape, "f32")
    p.output(x * 3.0 + 0.5, name="y")
    p.output(x.sum(axis=0).sum() / 8.0, name="t")
    xs = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    want = (xs * 3 + 0.5, xs.astype(np.float64).sum() / 8)
    cuda = kfuse.compile(p, target="cuda", chip="sm_90")
    assert cuda.report.after.kernels == 1
    assert cuda.report.after.bytes_read == xs.nbytes
    for got in (cuda.emulate(xs), kfuse.compile(p, target="cpu")(xs)):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)  # (an fma)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-4)


def test_report_counts_linalg_ops_apart_from_what_they_compute():
    # gelu(x + b) is two linalg ops whose bodies take six arith/math ops:
    # the report said "2 ops:" and then named six
    p = kb.Program("bias_gelu")
    x = p.input("x", (16, 64), "f32")
    b = p.input("b", (64,), "f32")
    p.output(kb.gelu(x + b), name="y")
    f = kfuse.compile(p, target="cpu")
    g = f.report.groups[0]
    line = next(ln for ln in str(f.report).splitlines() if ln.startswith(f"  group {g.name} "))
    assert f"{g.num_ops} linalg ops computing {', '.join(g.ops)}):" in line, line
    assert g.num_ops < len(g.ops)
    p = kb.Program("one")
    x = p.input("x", (16,), "f32")
    p.output(kb.exp(x), name="y")
    line = [ln for ln in str(kfuse.compile(p, target="cpu").report).splitlines()
            if ln.startswith("  group ")]
    assert len(line) == 1 and "1 linalg op computing math.exp):" in line[0], line


def test_independent_chains_reading_one_input_fuse_horizontally():
    p = kb.Program("siblings")
    x = p.input("x", (64, 64), "f32")
    p.output(kb.exp(x), name="a")
    p.output(kb.tanh(x) * 2.0, name="b")
    f = _check(p, _inputs(p, np.random.default_rng(10)))
    assert f.report.after.kernels == 1
    assert f.report.after.bytes_read == 64 * 64 * 4  # x read once
    assert "horizontally" in str(f.report)


def test_named_data_movement_and_f64_index_programs_run_on_cpu():
    x = np.random.default_rng(11).standard_normal((16, 32)).astype(np.float32)
    np.testing.assert_allclose(kfuse.compile(program_text("transpose.mlir"), target="cpu")(x),
                               np.exp(x.T), rtol=1e-6)
    a, b = np.arange(8, dtype=np.float32), np.ones((4, 8), np.float32)
    f = kfuse.compile(program_text("bcast.mlir"), target="cpu")
    np.testing.assert_array_equal(f(a, b), a + b)
    assert f.report.after.kernels == 1  # the broadcast folds into the add
    d = np.linspace(0, 1, 16)
    np.testing.assert_array_equal(kfuse.compile(program_text("f64.mlir"), target="cpu")(d),
                                  d + np.arange(16))
    c = np.ones(4, np.float32)
    np.testing.assert_array_equal(kfuse.compile(program_text("const.mlir"), target="cpu")(c),
                                  c + np.array([1, 2, 3, 4], np.float32))


def test_reshapes_are_views_on_both_targets():
    x = np.random.default_rng(12).standard_normal((4, 8)).astype(np.float32)
    y = np.random.default_rng(13).standard_normal(32).astype(np.float32)
    r, t = kfuse.compile(program_text("reshape.mlir"), target="cpu")(x, y)
    np.testing.assert_array_equal(r, x.ravel() + y)
    np.testing.assert_allclose(t, -np.exp(x.ravel() + y).reshape(2, 16), rtol=1e-6)
    plan = kfuse.compile(program_text("reshape.mlir"), target="cuda").plan
    assert [s.op for s in plan.steps] == ["launch", "launch"]  # no copies for views


def test_results_with_unit_dims_are_written_in_place():
    # batch 1: the unit dims are folded away before planning and restored by
    # reshapes of the results; the kernels write the outputs themselves (no
    # buffer of their own copied into each output afterwards)
    p = kb.Program("batch1")
    x = p.input("x", (1, 128, 768), "f32")
    p.output(x.sum(axis=-1, keepdims=True), name="s")
    p.output(kb.exp(x) * 2.0, name="e")
    a = np.random.default_rng(3).standard_normal((1, 128, 768)).astype(np.float32)
    s, e = kfuse.compile(p, target="cpu")(a)
    np.testing.assert_allclose(s, a.sum(-1, keepdims=True), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(e, np.exp(a) * 2.0, rtol=1e-6)
    plan = kfuse.compile(p, target="cuda").plan
    assert [st.op for st in plan.steps] == ["launch"]
    assert {plan.buffers[a.buffer].kind for a in plan.steps[0].args} == {"input", "output"}
    # the same from torch-mlir-style text: keepdims (d0, d1, 0) maps
    text = program_text("batch1_rows.mlir")
    x = a[:, :64, :256].copy()
    mean, centred = kfuse.compile(text, target="cpu")(x)
    np.testing.assert_allclose(mean, x.mean(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(centred, x - x.mean(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    plan = kfuse.compile(text, target="cuda").plan
    assert [st.op for st in plan.steps] == ["launch"]


def test_tensor_constants_become_constant_buffers_on_cuda(tmp_path):
    f = kfuse.compile(program_text("const.mlir"), target="cuda")
    (const,) = [b for b in f.plan.buffers if b.kind == "const"]
    np.testing.assert_array_equal(f.constants[const.file], [1, 2, 3, 4])
    f.save(tmp_path / "c")
    np.testing.assert_array_equal(np.load(tmp_path / "c" / const.file), [1, 2, 3, 4])
    exe = kfuse.runtime.load(tmp_path / "c")  # the runtime reads the .npy back
    assert exe.plan.buffers == f.plan.buffers


def test_dense_resource_constants_on_both_targets():
    text = program_text("dense_resource.mlir")
    x = np.ones(4, np.float32)
    np.testing.assert_array_equal(kfuse.compile(text, target="cpu")(x), [2, 3, 4, 5])
    f = kfuse.compile(text, target="cuda")
    (data,) = f.constants.values()
    np.testing.assert_array_equal(data, [1, 2, 3, 4])


@pytest.mark.parametrize("target", ["cpu", "cuda"])
@pytest.mark.parametrize("program", ["dense_resource.mlir", "softmax.mlir"])
def test_stage_texts_are_the_ir_each_stage_left(target, program):
    # (stages are kept as bytecode and printed when read: each must read as
    # the live module printed right after its stage, resources included)
    from mlir import ir
    from kfuse.pipeline import Options, run_stages
    printed = {}
    with ir.Context():
        module = ir.Module.parse(program_text(program))
        printed["input"] = str(module)
        texts = run_stages(module, Options(target=target),
                           lambda name, mod: printed.__setitem__(name, str(mod)))
    assert list(texts) == ["input", "normalize", "plan", "codegen", "target"] == list(printed)
    assert len(texts) == 5 and "fusion" not in texts
    for name, text in printed.items():
        assert texts[name] == text, name
    assert "dense_resource" not in program or "dialect_resources" in texts["input"]


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_dense_resource_of_the_wrong_size_is_a_located_parse_error(target):
    # found by mutating the test programs: MLIR's parser takes a blob that
    # does not hold its type's elements; the CPU target then failed at the
    # first call with a bare RuntimeError from the ExecutionEngine
    text = program_text("dense_resource.mlir").replace("tensor<4xf32>", "tensor<7xf32>")
    with pytest.raises(kfuse.ParseError) as e:
        kfuse.compile(text, target=target)
    msg = str(e.value)
    assert "dense_resource<w> holds 16 bytes, but tensor<7xf32> needs 28" in msg
    assert "<input>:2:" in msg and "arith.constant dense_resource<w>" in msg
    missing = text.replace("w: \"0x", "v: \"0x")
    with pytest.raises(kfuse.ParseError, match="dense_resource<w> has no data"):
        kfuse.compile(missing, target=target)
    # (a key that needs quotes is found under its name)
    quoted = program_text("dense_resource.mlir").replace("dense_resource<w>",
                                                         'dense_resource<"w 1">')
    quoted = quoted.replace('w: "0x', '"w 1": "0x')
    f = kfuse.compile(quoted, target=target)
    if target == "cpu":
        np.testing.assert_array_equal(f(np.ones(4, np.float32)), [2, 3, 4, 5])
    else:
        np.testing.assert_array_equal(next(iter(f.constants.values())), [1, 2, 3, 4])


# Found by mutating the test programs; each was taken by MLIR's verifier:
# - a column sum whose row loop is marked "parallel": the CPU ran it as a
#   reduction, the GPU's threads raced adding into the same 96 sums (a wrong
#   answer, no error);
# - a keepdims mean written at index 0 of a dimension of 100: the other
#   elements came back uninitialized (garbage on the CPU, NaN emulated);
# - a gather's loop marked "reduction" though the output varies along it:
#   an error about an arith.constant outside the fusion groups.
_MISLABELLED = [
    ("column_mean.mlir", ('["reduction", "parallel"]', '["parallel", "parallel"]'),
     'loop d0 of this linalg.generic is "parallel", but output #0 '
     "(affine_map<(d0, d1) -> (d1)>) does not vary along it"),
    ("batch1_rows.mlir", ("tensor<1x64x1xf32>", "tensor<1x64x100xf32>"),
     "output #0 of this linalg.generic is written through affine_map<(d0, d1, d2) -> "
     "(d0, d1, 0)>, which reaches only part of 'tensor<1x64x100xf32>' (dimension 2 of "
     "size 100 at index 0 only): the rest would keep the init's values"),
    ("torch/torch_bert_embeddings.mlir",
     ('iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<3x40xi64>)',
      'iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : tensor<3x40xi64>)'),
     'loop d1 of this linalg.generic is "reduction", but every output varies along it'),
    # (a size changed everywhere but in an expand_shape's output_shape: the
    # CPU's codegen stopped at the bufferized memref.expand_shape, naming
    # neither the op the program wrote nor the sizes)
    ("torch/torch_sdpa_causal.mlir",
     ("output_shape [1, 16] : tensor<16xi64> into tensor<1x16xi64>",
      "output_shape [1, 8] : tensor<16xi64> into tensor<1x16xi64>"),
     "output_shape gives dimension 1 of this tensor.expand_shape as 8, but its result "
     "type 'tensor<1x16xi64>' has 16 there"),
]


@pytest.mark.parametrize("target", ["cpu", "cuda"])
@pytest.mark.parametrize("name,change,words", _MISLABELLED, ids=[m[0] for m in _MISLABELLED])
def test_generics_kfuse_would_run_otherwise_are_refused(name, change, words, target):
    text = program_text(name)
    assert change[0] in text
    text = text.replace(change[0], change[1])
    with pytest.raises(kfuse.CompileError) as e:
        kfuse.compile(text, target=target)
    assert words in str(e.value)


def test_cpu_program_llvm_refuses_is_a_compile_error():
    # what LLVM's translation refuses (here a blob shortened behind the
    # parser's back) is a CompileError naming it, not a bare RuntimeError
    from kfuse.targets.cpu import CpuExecutable
    f = kfuse.compile(program_text("dense_resource.mlir"), target="cpu")
    short = re.sub(r'("0x[0-9A-F]{8})[0-9A-F]{8}', r"\1", f.llvm, count=1)
    assert short != f.llvm
    with pytest.raises(kfuse.CompileError, match="could not be built: .*raw data size"):
        CpuExecutable(f.plan, short)

def test_cuda_compiles_data_movement_and_index_programs():
    for name in ("transpose.mlir", "bcast.mlir", "f64.mlir"):
        assert kfuse.compile(program_text(name), target="cuda").ptx.count(".entry") == 1


def test_strict_numerics_fused_is_bit_identical_to_unfused_on_cpu():
    p = kb.Program("fma_chain")
    x = p.input("x", (64, 256), "f32")
    y = p.input("y", (64, 256), "f32")
    z = p.input("z", (256,), "f32")
    t = x * y + z
    p.output(kb.tanh(t * t + x) * 0.5 + t, name="o")
    p.output((t * 3.0 + y).sum(axis=-1), name="s")
    args = _inputs(p, np.random.default_rng(14))
    strict = kfuse.compile(p, target="cpu", numerics="strict")
    unfused = kfuse.compile(p, target="cpu", numerics="strict", fuse=False)
    assert strict.report.after.kernels == 1
    assert unfused.report.after.kernels == unfused.report.before.kernels
    for a, b in zip(strict(*args), unfused(*args)):
        assert np.array_equal(a, b)  # bits, not tolerance
    fast = kfuse.compile(p, target="cpu")
    assert "contract" in fast.stages["codegen"] and "contract" not in strict.stages["codegen"]
    for a, b in zip(fast(*args), unfused(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    with pytest.raises(kfuse.CompileError, match="numerics"):
        kfuse.compile(p, target="cpu", numerics="loose")


def test_cuda_without_chip_targets_the_device_that_is_here(monkeypatch):
    # The chip and SM count come from the device (queried through cuda-python);
    # grids capped per SM (blocks_per_sm) follow the SM count.
    import kfuse.api as api
    p = kb.Program("dev")
    x = p.input("x", (1 << 24,), "f32")
    p.output(kb.exp(x), name="y")
    monkeypatch.setattr(api, "_detect_device", lambda: ("sm_80", 108))
    a100 = kfuse.compile(p, target="cuda", blocks_per_sm=4)
    assert a100.options.chip == "sm_80" and a100.options.sm_count == 108
    assert ".target sm_80" in a100.ptx
    auto = kfuse.compile(p)  # target="auto" with a GPU here: CUDA
    assert auto.target == "cuda" and auto.options.sm_count == 108
    explicit = kfuse.compile(p, target="cuda", chip="sm_90", blocks_per_sm=4)
    assert explicit.options.chip == "sm_90" and explicit.options.sm_count == 0
    assert a100.plan.steps[0].grid[0] == 108 * 4
    assert explicit.plan.steps[0].grid[0] == 132 * 4
    monkeypatch.setattr(api, "_detect_device", lambda: None)
    none = kfuse.compile(p, target="cuda")
    assert none.options.chip == "sm_90" and none.options.sm_count == 0
    assert kfuse.compile(p).target == "cpu"


def test_integers_convert_to_bf16_on_the_cpu():
    # found by random programs with argmax: an integer-to-bf16 cast needed
    # __truncsfbf2, which the JIT lacks ("could not be linked"); it now goes
    # through f32 and an expanded truncation, bit-equal to the reference
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from kfuse import builder as kb
    p = kb.Program("to_bf16")
    x = p.input("x", (8,), "bf16")
    n = p.input("n", (6,), "i64")
    p.output(kb.cast(kb.cast(x, "i64"), "bf16"), "y")
    p.output(kb.cast(n, "bf16"), "z")
    f = kfuse.compile(p, target="cpu")
    xs = (np.arange(8) * 3.3 - 9).astype(ml_dtypes.bfloat16)
    ns = np.array([0, 1, -7, 257, 2**24 + 1, 2**40 + 12345], np.int64)
    for got, want in zip(f(xs, ns), p.reference(xs, ns)):
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


_POWERS = """
#map = affine_map<(d0) -> (d0)>
func.func @powers(%x: tensor<64xf32>, %n: tensor<64xi64>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %r:3 = linalg.generic {indexing_maps = [#map, #map, #map, #map, #map],
                         iterator_types = ["parallel"]}
      ins(%x, %n : tensor<64xf32>, tensor<64xi64>) outs(%e, %e, %e : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: f32, %k: i64, %o0: f32, %o1: f32, %o2: f32):
    %c3 = arith.constant 3 : i64
    %cm3 = arith.constant -3 : i64
    %cube = math.fpowi %a, %c3 : f32, i64
    %inv = math.fpowi %a, %cm3 : f32, i64
    %var = math.fpowi %a, %k : f32, i64
    linalg.yield %cube, %inv, %var : f32, f32, f32
  } -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %r#0, %r#1, %r#2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}
"""


def test_integer_powers_on_both_targets():
    # torch-mlir writes x ** 3 as math.fpowi with an i64 exponent; on CUDA the
    # NVVM lowering called libdevice's __nv_powif (an i32 exponent) through a
    # pointer with an i64 argument (the PTX emulator refused the call). Now
    # constant powers multiply and others are powf of the converted exponent:
    # negative bases keep their sign, zero to a negative power is +-inf.
    x = np.array([0.0, -0.0, 1.5, -1.5, -2.0, 3.0, 0.5, -0.25] * 8, np.float32)
    n = np.array([3, -3, 2, -2, 0, 1, 5, -1] * 8, np.int64)
    with np.errstate(divide="ignore"):
        want = [x.astype(np.float64) ** 3, x.astype(np.float64) ** -3.0,
                x.astype(np.float64) ** n.astype(np.float64)]
    cpu = kfuse.compile(_POWERS, target="cpu")
    cuda = kfuse.compile(_POWERS, target="cuda")
    assert "__nv_powif" not in cuda.ptx and "call" not in cuda.ptx
    for got in (cpu(x, n), cuda.emulate(x, n)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.astype(np.float32), rtol=2e-6)
            # (the sign of an infinity or a zero)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w.astype(np.float32)))


def test_ptx_calls_that_cannot_work_are_found():
    from kfuse.api import ptx_call_problems
    declared = (".func  (.param .b32 func_retval0) __nv_powif\n(\n\t.param .b32 a,\n"
                "\t.param .b32 b\n)\n;\n")
    body = ".visible .entry k(\n\t.param .u64 p\n)\n{\n\tret;\n}\n"
    pointer = ("\tmov.b64 \t%rd10, __nv_powif;\n"
               "\tcall (retval0), %rd10, (param0, param1), prototype_0;\n")
    direct = "\tcall.uni (retval0), __nv_expf, (param0);\n"
    defined = (".func  (.param .b32 func_retval0) __nv_powif(\n\t.param .b32 a,\n"
               "\t.param .b32 b\n)\n{\n\tret;\n}\n")
    assert ptx_call_problems(body) == []
    assert ptx_call_problems(declared + body + defined + direct) == []
    assert ptx_call_problems(declared + body) == [
        "calls __nv_powif without defining it"]
    assert ptx_call_problems(declared + body + pointer + defined) == [
        "calls __nv_powif through a pointer (its arguments differ from its declaration)"]


def test_explicit_rounding_through_bf16_is_kept_with_fast_numerics():
    # x.to(bfloat16).float() * 2 (found in an exported bf16 layer norm): fast
    # numerics let ops contract, and MLIR folds extf(truncf(x)) to x when both
    # casts allow contraction, so the rounding the program asks for vanished
    # (results not representable in bf16). Casts keep their flags now.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    p = kb.Program("bf16_round_trip")
    x = p.input("x", (256,), "f32")
    p.output(kb.cast(kb.cast(x, "bf16"), "f32") * 2.0, "y")
    xs = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    want = xs.astype(ml_dtypes.bfloat16).astype(np.float32) * 2
    assert not np.array_equal(want, xs * 2)
    for numerics in ("fast", "strict"):
        cpu = kfuse.compile(p, target="cpu", numerics=numerics)
        cuda = kfuse.compile(p, target="cuda", numerics=numerics)
        np.testing.assert_array_equal(cpu(xs), want)
        np.testing.assert_array_equal(cuda.emulate(xs), want)


# Every float op of the math dialect, as a front end writes it (torch-mlir:
# trunc for div(rounding_mode="trunc"), expm1, log1p, atan2, ...): the same
# answers on the CPU and in the CUDA kernels (PTX emulator) as numpy in
# float64, rounded to the element type, on normal values, +-0, +-inf and NaN.
# (Found this way: a vector math.trunc was left unconverted by the NVVM
# lowering, see fusion-gpu-intrinsics.)
_MATH = {
    "absf": np.abs, "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin,
    "asinh": np.arcsinh, "atan": np.arctan, "atanh": np.arctanh, "cbrt": np.cbrt,
    "ceil": np.ceil, "cos": np.cos, "cosh": np.cosh, "erf": np.vectorize(math.erf),
    "erfc": np.vectorize(math.erfc), "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1,
    "floor": np.floor, "log": np.log, "log10": np.log10, "log1p": np.log1p, "log2": np.log2,
    "round": lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x), "roundeven": np.round,
    "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "sinh": np.sinh, "sqrt": np.sqrt,
    "tan": np.tan, "tanh": np.tanh, "trunc": np.trunc,
    "atan2": np.arctan2, "copysign": np.copysign, "powf": np.power}
def _math_program(op, t):
    binary = op in ("atan2", "copysign", "powf")
    ty = f"tensor<64x{t}>"
    args = f"%x: {ty}, %y: {ty}" if binary else f"%x: {ty}"
    maps = ", ".join(["affine_map<(d0) -> (d0)>"] * (3 if binary else 2))
    call = f"math.{op} %a, %b : {t}" if binary else f"math.{op} %a : {t}"
    return f"""func.func @m({args}) -> {ty} {{
  %e = tensor.empty() : {ty}
  %r = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}}
      ins({"%x, %y" if binary else "%x"} : {", ".join([ty] * (2 if binary else 1))}) outs(%e : {ty}) {{
  ^bb0(%a: {t}, {"%b: " + t + ", " if binary else ""}%o: {t}):
    %v = {call}
    linalg.yield %v : {t}
  }} -> {ty}
  return %r : {ty}
}}""", binary


@pytest.mark.parametrize("dt", ["f32", "bf16"])
@pytest.mark.parametrize("op", sorted(_MATH))
def test_math_dialect_ops_on_both_targets(op, dt):
    text, binary = _math_program(op, dt)
    npdt = dtypes.to_numpy(dtypes.get(dt))
    rng = np.random.default_rng(5)
    x = rng.standard_normal(64) * 3
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5]
    if op in ("sin", "cos", "tan"):
        # libdevice reduces these in thread-local memory with a table of
        # 2/pi's bits (a module variable) and carry arithmetic
        x[8:14] = [1e4, -1e5, 3.0e38, 1e30, -2.5e7, 123456.789]
    y = rng.standard_normal(64) * 2
    args = [x.astype(npdt), y.astype(npdt)][: 2 if binary else 1]
    with np.errstate(all="ignore"):
        want = _MATH[op](*[a.astype(np.float64) for a in args])
    want = np.asarray(want).astype(npdt).astype(np.float64)
    tol = 4 * {"f32": 1e-5, "bf16": 1.6e-2}[dt]

    def check(got):
        got = np.asarray(got).astype(np.float64)
        same = (np.isnan(got) & np.isnan(want)) | (got == want)
        with np.errstate(invalid="ignore"):
            close = np.abs(got - want) <= tol * (1 + np.abs(want))
        assert np.all(same | close), (got[~(same | close)], want[~(same | close)])

    check(kfuse.compile(text, target="cpu")(*args))
    check(kfuse.compile(text, target="cuda").emulate(*args))


@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_f64_trigonometry_calls_are_emulated(fn):
    # libdevice's f64 sin and cos reduce large arguments in a .func they
    # call (a 16-byte aggregate result, borrow chains: sub.cc, subc): the
    # CPU target computes them, and the emulator inlines the call
    text, _ = _math_program(fn, "f64")
    x = np.linspace(-1e6, 1e6, 64)
    x[:6] = [1e300, -1e22, 0.0, np.pi, 2.0 ** 1000, 123456789.0]
    want = getattr(np, fn)(x)
    np.testing.assert_allclose(kfuse.compile(text, target="cpu")(x), want, rtol=1e-12,
                               atol=1e-12)
    cuda = kfuse.compile(text, target="cuda")
    assert "func_retval0[16]" in cuda.ptx and "sub.cc" in cuda.ptx
    np.testing.assert_allclose(cuda.emulate(x), want, rtol=1e-15, atol=1e-15)


def _wrap(v, bits):
    return ((int(v) + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))


def _tdiv(p, q):
    r = abs(p) // abs(q)
    return r if (p < 0) == (q < 0) else -r


_INT_UNARY = {
    "math.ctlz": lambda v, w: w - (v % (1 << w)).bit_length(),
    "math.cttz": lambda v, w: w if v % (1 << w) == 0 else ((v & -v).bit_length() - 1),
    "math.ctpop": lambda v, w: bin(v % (1 << w)).count("1"),
    "math.absi": lambda v, w: abs(v)}
_INT_BINARY = {
    "arith.divsi": _tdiv,
    "arith.remsi": lambda p, q: p - _tdiv(p, q) * q,
    "arith.floordivsi": lambda p, q: p // q,
    "arith.ceildivsi": lambda p, q: -((-p) // q),
    "math.ipowi": lambda p, q: (p ** q if q >= 0 else
                                1 if p == 1 else (-1) ** q if p == -1 else 0)}


@pytest.mark.parametrize("dt", ["i8", "i32", "i64"])
@pytest.mark.parametrize("op", sorted(_INT_UNARY) + sorted(_INT_BINARY))
def test_integer_ops_on_both_targets(op, dt):
    # Bit counts, absolute values, the four signed divisions and integer
    # powers, wrapping like two's complement, on the extremes (the minimum
    # divided by negatives) and random values, against Python's integers.
    # (Found this way: the NVVM lowering left vector ctlz/cttz/ctpop/absi
    # unconverted, ipowi had no lowering on either target, and the emulator
    # divided INT64_MIN wrongly.)
    binary = op in _INT_BINARY
    w = int(dt[1:])
    ty = f"tensor<64x{dt}>"
    maps = ", ".join(["affine_map<(d0) -> (d0)>"] * (3 if binary else 2))
    text = f"""func.func @i({"%x: " + ty + ", %y: " + ty if binary else "%x: " + ty}) -> {ty} {{
  %e = tensor.empty() : {ty}
  %r = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}}
      ins({"%x, %y" if binary else "%x"} : {", ".join([ty] * (2 if binary else 1))}) outs(%e : {ty}) {{
  ^bb0(%a: {dt}, {"%b: " + dt + ", " if binary else ""}%o: {dt}):
    %v = {op} %a{", %b" if binary else ""} : {dt}
    linalg.yield %v : {dt}
  }} -> {ty}
  return %r : {ty}
}}"""
    npdt = np.dtype(f"int{w}")
    info = np.iinfo(npdt)
    rng = np.random.default_rng(7)
    x = rng.integers(info.min, info.max, 64, dtype=np.int64, endpoint=True)
    x[:6] = [0, -1, 1, info.min, info.max, info.min]
    if op == "math.ipowi":
        y = rng.integers(-3, 7, 64)
    else:
        y = rng.integers(-20, 20, 64)
        y[y == 0] = 3
        y[5] = -7    # (the minimum divided by a negative)
    args = [x.astype(npdt), y.astype(npdt)][: 2 if binary else 1]
    if binary:
        want = [_wrap(_INT_BINARY[op](int(p), int(q)), w) for p, q in zip(*args)]
    else:
        want = [_wrap(_INT_UNARY[op](int(p), w), w) for p in args[0]]
    for got in (kfuse.compile(text, target="cpu")(*args),
                kfuse.compile(text, target="cuda").emulate(*args)):
        assert got.astype(np.int64).tolist() == want


def test_contraction_written_transposed_on_both_targets():
    # A batched contraction that writes its result transposed ((b, i, j, k)
    # -> (b, j, i): attention's key gradient, dS^T Q, as a front end may
    # write it): fusion-normalize interchanges its loops into the result's
    # order. On CUDA this was "an op runs over neither the rows nor ...".
    text = """func.func @dk(%q: tensor<2x16x32xf32>, %ds: tensor<2x16x16xf32>) -> tensor<2x16x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, k, i)>,
      affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (b, j, i)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %ds : tensor<2x16x32xf32>, tensor<2x16x16xf32>) outs(%f : tensor<2x16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  return %r : tensor<2x16x32xf32>
}"""
    # The same written the way autograd does: the contraction into
    # [b, i, j], then a transpose copy; the copy folds into it (one kernel,
    # no intermediate).
    transposed = """func.func @dk(%q: tensor<2x16x32xf32>, %ds: tensor<2x16x16xf32>) -> tensor<2x16x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x16xf32>
  %qt = linalg.transpose ins(%q : tensor<2x16x32xf32>) outs(%e : tensor<2x32x16xf32>)
      permutation = [0, 2, 1]
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x32x16xf32>) -> tensor<2x32x16xf32>
  %t = linalg.batch_matmul ins(%qt, %ds : tensor<2x32x16xf32>, tensor<2x16x16xf32>)
      outs(%f : tensor<2x32x16xf32>) -> tensor<2x32x16xf32>
  %e2 = tensor.empty() : tensor<2x16x32xf32>
  %r = linalg.transpose ins(%t : tensor<2x32x16xf32>) outs(%e2 : tensor<2x16x32xf32>)
      permutation = [0, 2, 1]
  return %r : tensor<2x16x32xf32>
}"""
    rng = np.random.default_rng(8)
    q = rng.standard_normal((2, 16, 32)).astype(np.float32)
    ds = rng.standard_normal((2, 16, 16)).astype(np.float32)
    want = np.einsum("bki,bkj->bji", q.astype(np.float64), ds)
    for src in (text, transposed):
        cuda = kfuse.compile(src, target="cuda")
        assert [g.kind for g in cuda.report.groups] == ["contraction"]
        assert len(cuda.plan.steps) == 1
        for got in (kfuse.compile(src, target="cpu")(q, ds), cuda.emulate(q, ds)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)



# A 0-d tensor's element filled into a returned tensor, negated into a
# reduction's initial value, used in a body (captured) and filled into an
# operand of a reduction; and dO * ones (a splat) read by a contraction.
_SCALAR_OPERANDS = """
func.func @scalar_operands(%t: tensor<f32>, %x: tensor<4x8xf32>, %w: tensor<8x3xf32>)
    -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x3xf32>) {
  %s = tensor.extract %t[] : tensor<f32>
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%s : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %n = arith.negf %s : f32
  %i = linalg.fill ins(%n : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%i : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %q = arith.addf %o, %m : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %zi = linalg.fill ins(%z : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                         affine_map<(i, j) -> (i)>],
                        iterator_types = ["parallel", "reduction"]}
      ins(%x, %f : tensor<4x8xf32>, tensor<4x8xf32>) outs(%zi : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %q = arith.maximumf %o, %m : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %ones = arith.constant dense<1.0> : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %ones : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %c0 = linalg.fill ins(%z : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %mm = linalg.matmul ins(%g, %w : tensor<4x8xf32>, tensor<8x3xf32>)
                      outs(%c0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %f, %r, %r2, %mm : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x3xf32>
}
"""


def test_scalar_and_splat_operands_on_both_targets():
    # A scalar computed outside a body (a fill of it, a use inside one) was
    # a verifier error in planning ("fusion.group operand must be a ranked
    # tensor"); the 0-d tensor is now an input of the groups that read it.
    # The splat of ones folds away: the contraction reads x in place.
    rng = np.random.default_rng(3)
    t = np.array(1.5, np.float32)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    x64 = x.astype(np.float64)
    want = [np.full((4, 8), 1.5), -1.5 + (x64 * 1.5).sum(1),
            np.maximum(0.0, (x64 * 1.5).max(1)), x64 @ w.astype(np.float64)]
    cpu = kfuse.compile(_SCALAR_OPERANDS, target="cpu")
    cuda = kfuse.compile(_SCALAR_OPERANDS, target="cuda")
    for f in (cpu, cuda):
        # the contraction multiplies x by w and nothing else (no group
        # multiplies by ones); the negated scalar initializes the sums from a
        # group of its own (a reduction's initial value is not recomputed)
        (mm,) = [g for g in f.report.groups if g.kind == "contraction"]
        assert mm.ops == ["arith.mulf", "arith.addf"]
        assert f.report.after.kernels == 3
    for got in (cpu(t, x, w), cuda.emulate(t, x, w)):
        for g, wv in zip(got, want):
            np.testing.assert_allclose(g, wv, rtol=2e-6, atol=2e-6)


def test_report_baseline_reads_accumulators():
    # c + a @ b with the caller's c as the matmul's outs: the unfused matmul
    # reads c too (its body accumulates into it), as the fused kernel does.
    # The baseline had counted only a and b: "traffic saved 0.64x" for a
    # plan that moves exactly what the unfused program moves.
    f = kfuse.compile(program_text("accumulate_into_arg.mlir"), target="cpu")
    a, b, c = 64 * 32 * 4, 32 * 128 * 4, 64 * 128 * 4
    assert f.report.before.bytes_read == a + b + c, str(f.report)
    assert f.report.after.bytes_read == a + b + c, str(f.report)
    # an elementwise op's outs (from tensor.empty) are not read
    p = kb.Program("ew")
    x = p.input("x", (1024,), "f32")
    p.output(kb.exp(x), name="y")
    g = kfuse.compile(p, target="cpu")
    assert g.report.before.bytes_read == 1024 * 4, str(g.report)


def test_float_to_int_conversions_saturate_on_both_targets():
    # fptosi / fptoui out of range or of NaN: upstream poison (the CPU gave the
    # most negative integer, a GPU's cvt saturates). kfuse saturates on both
    # targets, NaN giving 0 (fusion-saturate-conversions), f16 infinities too.
    conv = lambda src, dst, op: f'''  %{dst}{src} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}} ins(%x{src} : tensor<12x{src}>) outs(%e{dst} : tensor<12x{dst}>) {{
  ^bb0(%v: {src}, %o: {dst}):
    %r = arith.{op} %v : {src} to {dst}
    linalg.yield %r : {dst}
  }} -> tensor<12x{dst}>
'''
    text = ("#id = affine_map<(d0) -> (d0)>\n"
            "func.func @f(%xf32: tensor<12xf32>, %xf16: tensor<12xf16>) -> "
            "(tensor<12xi32>, tensor<12xi8>, tensor<12xi32>, tensor<12xi32>) {\n"
            "  %ei32 = tensor.empty() : tensor<12xi32>\n  %ei8 = tensor.empty() : tensor<12xi8>\n"
            + conv("f32", "i32", "fptosi").replace("%i32f32", "%a")
            + conv("f32", "i8", "fptosi").replace("%i8f32", "%b")
            + conv("f32", "i32", "fptoui").replace("%i32f32", "%c")
            + conv("f16", "i32", "fptosi").replace("%i32f16", "%d")
            + "  return %a, %b, %c, %d : tensor<12xi32>, tensor<12xi8>, tensor<12xi32>, "
              "tensor<12xi32>\n}\n")
    x = np.array([np.inf, -np.inf, np.nan, 3e9, -3e9, 2.7, -2.7, 127.9, 128.0, -128.9,
                  -129.0, 4.5e9], np.float32)
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)       # (3e9 and 4.5e9 become inf)
    i32, i8 = np.iinfo(np.int32), np.iinfo(np.int8)
    want_i32 = [i32.max, i32.min, 0, i32.max, i32.min, 2, -2, 127, 128, -128, -129, i32.max]
    want_i8 = [127, -128, 0, 127, -128, 2, -2, 127, 127, -128, -128, 127]
    want_u32 = np.array([2**32 - 1, 0, 0, 3_000_000_000, 0, 2, 0, 127, 128, 0, 0, 2**32 - 1],
                        np.uint64).astype(np.uint32).view(np.int32)
    want_h = [i32.max, i32.min, 0, i32.max, i32.min, 2, -2, 127, 128, -128, -129, i32.max]
    cpu = kfuse.compile(text, target="cpu")(x, h)
    cuda = kfuse.compile(text, target="cuda").emulate(x, h)
    for got in (cpu, cuda):
        np.testing.assert_array_equal(got[0], want_i32)
        np.testing.assert_array_equal(got[1], want_i8)
        np.testing.assert_array_equal(got[2].view(np.int32), want_u32)
        np.testing.assert_array_equal(got[3], want_h)


def test_report_names_the_options_that_change_nothing():
    # batch norm over NCHW: rows of the channels' (n, h, w), strided, over
    # clusters; persistent kernels take contiguous rows only, so
    # row_persist changes nothing here, two blocks an SM (row_occupancy=2)
    # do
    p = batch_norm("bn_nchw", (16, 4, 64, 64), (0, 2, 3))
    f = kfuse.compile(p, target="cuda", chip="sm_90", row_persist=15, row_occupancy=2)
    assert f.report.options_without_effect() == {"row_persist": 15}
    text = str(f.report)
    assert "options that change nothing here: row_persist=15 (the same kernels without it)" \
        in text and "row_occupancy" not in text.splitlines()[-1]
    assert "options_check" not in f.report.to_json()
    # (an option at the value the strategy takes anyway: named too)
    f = kfuse.compile(p, target="cuda", chip="sm_90", row_chunks=4, row_smem=0)
    assert f.report.options_without_effect() == {"row_chunks": 4, "row_smem": 0}
    assert "row_chunks=4, row_smem=0 (the same kernels without each)" in str(f.report)
    # contiguous rows of a softmax over clusters: persistent (an effect)
    q = row_program("long_rows", "softmax", (4, 65536))
    f = kfuse.compile(q, target="cuda", chip="sm_90", row_persist=2)
    assert any(s.persistent for s in f.plan.steps)
    assert f.report.options_without_effect() == {}
    assert "change nothing" not in str(f.report)
    # without options: nothing compiled again, nothing said
    f = kfuse.compile(q, target="cuda", chip="sm_90")
    assert f.report.options_check is None and f.report.options_without_effect() == {}
    assert "change nothing" not in str(f.report)
    # the CPU target: its LLVM IR compared
    f = kfuse.compile(q, target="cpu", row_persist=2)
    assert f.report.options_without_effect() == {"row_persist": 2}


@pytest.mark.parametrize("dtype", ["i8", "i32", "i1"])
def test_integer_sums_do_not_wrap(dtype):
    # sums of i8 / i32 (and counts of booleans) are int64, as numpy's, on both
    # targets: 300 values of 100 are 30000 in every row, over the rows and the
    # columns alike (a row kernel, a split column sum, a full reduction)
    p = kb.Program("isum")
    x = p.input("x", (300, 300), dtype)
    p.output(x.sum(axis=1), name="rows")
    p.output(x.sum(axis=0), name="cols")
    p.output(x.sum(), name="all")
    a = (np.random.default_rng(7).random((300, 300)) < 0.5 if dtype == "i1"
         else np.full((300, 300), 100, dtypes.to_numpy(dtypes.get(dtype))))
    want = (a.sum(axis=1), a.sum(axis=0), a.sum())
    cuda = kfuse.compile(p, target="cuda", chip="sm_90")
    for got in (kfuse.compile(p, target="cpu")(a), cuda.emulate(a)):
        for g, w in zip(got, want):
            assert g.dtype == np.int64
            np.testing.assert_array_equal(g, w)


def test_half_powers_are_square_roots():
    # x ** 0.5 as numpy and torch compute it, sqrt(x): -0 for -0 and NaN for
    # -inf (C's pow gives +0 and +inf), on both targets in both numerics;
    # strict numerics round it correctly on CUDA (sqrt.rn, no powf call)
    p = kb.Program("half")
    x = p.input("x", (8,), "f32")
    p.output(kb.pow(x, 0.5), name="y")
    xs = np.array([-0.0, 0.0, -np.inf, np.inf, np.nan, -1.0, 2.0, 1e-38], np.float32)
    want = np.sqrt(xs)
    for numerics in ("fast", "strict"):
        cuda = kfuse.compile(p, target="cuda", chip="sm_90", numerics=numerics)
        for got in (kfuse.compile(p, target="cpu", numerics=numerics)(xs), cuda.emulate(xs)):
            number = ~np.isnan(want)  # (a NaN's sign means nothing)
            np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))
            np.testing.assert_allclose(got, want, rtol=2e-7 if numerics == "strict" else 1e-6)
        if numerics == "strict":
            assert "sqrt.rn.f32" in cuda.ptx and "pow" not in cuda.ptx


def test_builder_reference_converts_as_the_targets_do():
    # Program.reference casts floats to integers as both targets do,
    # saturating with NaN giving 0 (numpy's own cast is undefined there: it
    # gave the most negative integer for NaN and the infinities), in casts
    # and in sums asked for in an integer dtype
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 9.3e18, -9.3e18, 2.7, -2.7, 127.9,
                  128.5, -129.0], np.float32)
    for dt in ("i8", "i32", "i64"):
        p = kb.Program("conv")
        a = p.input("a", x.shape, "f32")
        p.output(kb.cast(a, dt), name="c")
        p.output(a.sum(dtype=dt), name="s")
        info = np.iinfo(dtypes.to_numpy(dtypes.get(dt)))
        want = np.array([0, info.max, info.min] + [min(max(int(v), info.min), info.max)
                                                    for v in x[3:]], info.dtype)
        ref = p.reference(x)
        np.testing.assert_array_equal(ref[0], want)
        assert ref[1] == want.sum(dtype=info.dtype)
        for got in (kfuse.compile(p, target="cpu")(x),
                    kfuse.compile(p, target="cuda", chip="sm_90").emulate(x)):
            np.testing.assert_array_equal(got[0], want)
            assert got[1] == ref[1]


def test_long_elementwise_chains_fuse_into_one_kernel():
    # 200 steps of one space, each reading the last two values (every
    # producer has two readers), a bias and a scaled bias (a generic over the
    # bias, read through a broadcast), two values outputs: one kernel (the
    # group fused in one step, each body once per point it is read at), the
    # values of the numpy reference on both targets
    p = kb.Program("chain")
    x = p.input("x", (16, 32), "f32")
    b = p.input("b", (32,), "f32")
    prev, cur = x, kb.tanh(x)
    for i in range(200):
        step = (cur * 0.5 + prev * 0.25 + b if i % 3 else kb.maximum(cur, prev) - b * 0.125)
        prev, cur = cur, kb.tanh(step)
        if i == 100:
            p.output(cur, name="mid")
    p.output(cur, name="y")
    rng = np.random.default_rng(11)
    args = [rng.standard_normal((16, 32)).astype(np.float32),
            rng.standard_normal(32).astype(np.float32)]
    want = p.reference(*args)
    cpu = kfuse.compile(p, target="cpu", numerics="strict")
    cuda = kfuse.compile(p, target="cuda", chip="sm_90", numerics="strict")
    assert cpu.report.after.kernels == cuda.report.after.kernels == 1
    assert cpu.stages["codegen"].count("math.tanh") == 201
    for got in (cpu(*args), cuda.emulate(*args)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_stacked_normalizations_fuse_into_ir_linear_in_depth():
    # fusion-fuse-group-bodies keeps a long shared value that reads a row
    # value (h of each block) as an op of its own instead of copying it into
    # every reduction: reduction k's body held the whole chain from x, IR
    # quadratic in the depth (8 / 16 blocks: 1105 / 3977 lines before)
    import subprocess
    from kfuse.pipeline import fuse_opt_path
    lines = []
    for n in (8, 16):
        run = subprocess.run(
            [fuse_opt_path(), "-", "--pass-pipeline=builtin.module(fusion-normalize,fusion-plan,"
             "func.func(fusion-fuse-group-bodies))"],
            input=norm_stack(f"stack{n}", n, 256, 1024).to_mlir(), capture_output=True,
            text=True, check=True)
        assert run.stdout.count("fusion.group") == 1
        lines.append(len(run.stdout.splitlines()))
    assert lines[1] < 2.3 * lines[0], lines


def _centred_program(kind, levels, shape):
    # layer norm or softmax of t, a chain of `levels` x 3 elementwise ops of
    # x: at 10 levels (a body of 33 ops) the difference t - mean (exp(t -
    # max)), which reads a row value and which two row-space ops read,
    # stays an op of its own (fusion-fuse-group-bodies)
    p = kb.Program(f"{kind}{levels}")
    x = p.input("x", shape, "f32")
    t = x
    for _ in range(levels):
        t = kb.tanh(t) * 0.9 + 0.1
    if kind == "layernorm":
        d = t - t.mean(axis=1, keepdims=True)
        p.output(d * kb.rsqrt((d * d).mean(axis=1, keepdims=True) + 1e-5), name="y")
    else:
        e = kb.exp(t - t.max(axis=1, keepdims=True))
        p.output(e / e.sum(axis=1, keepdims=True), name="y")
    return p


@pytest.mark.parametrize("kind", ["layernorm", "softmax"])
@pytest.mark.parametrize("shape, opts", [((8, 4096), {"row_chunks": 0}), ((2, 1 << 17), {})],
                         ids=["streamed", "split"])
def test_kept_centred_value_folds_in_one_pass(kind, shape, opts):
    # A variance around a mean the same pass computes, and a sum of exp(t -
    # max) beside its max, fold in one pass where the difference is in the
    # sum's own body: the row emitter copies a kept difference back into
    # the sum (inlineCenteredWriters). A chain of 10 levels, whose
    # difference is kept, then runs as the chain of 2 does, whose difference
    # is fused: streamed, the statistics in one pass and the output in
    # another; split over the SMs, the same launches, moving the same bytes.
    import subprocess
    from kfuse.pipeline import fuse_opt_path
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    runs = {}
    for levels in (2, 10):
        p = _centred_program(kind, levels, shape)
        kept = subprocess.run(
            [fuse_opt_path(), "-", "--pass-pipeline=builtin.module(fusion-normalize,fusion-plan,"
             "func.func(fusion-fuse-group-bodies))"],
            input=p.to_mlir(), capture_output=True, text=True, check=True).stdout
        assert kept.count("linalg.generic") == (6 if levels == 10 else 5), levels
        f = kfuse.compile(p, target="cuda", chip="sm_90", sm_count=132, **opts)
        want = p.reference(x)
        want = want[0] if isinstance(want, (list, tuple)) else want
        np.testing.assert_allclose(f.emulate(x), want, rtol=1e-4, atol=5e-5)
        loads = sum(s["load"]["bytes"] for s in f.emulator.last_stats)
        runs[levels] = ([(s.name[len(p.name):], s.grid, s.block) for s in f.plan.steps], loads)
    assert runs[10] == runs[2], runs
    if opts:
        assert runs[10][1] < 2.2 * x.nbytes, runs


def test_online_sum_after_a_long_chain():
    # Streamed softmax of a chain of 40 levels (120 ops): the sum of
    # exp(t - max) pairs with the max in one pass only where the two
    # compute the same t, which the row kernel compares op by op (to a
    # depth of 32 before: 11 levels and more took a third pass over x).
    p = _centred_program("softmax", 40, (8, 4096))
    x = np.random.default_rng(4).standard_normal((8, 4096)).astype(np.float32)
    f = kfuse.compile(p, target="cuda", chip="sm_90", row_chunks=0)
    want = p.reference(x)
    want = want[0] if isinstance(want, (list, tuple)) else want
    np.testing.assert_allclose(f.emulate(x), want, rtol=1e-4, atol=1e-6)
    loads = sum(s["load"]["bytes"] for s in f.emulator.last_stats)
    assert loads < 2.1 * x.nbytes, loads / x.nbytes


def test_online_sums_flush_their_terms_and_nothing_else():
    # Streamed softmax: the max-and-sum pass's exps (terms exp(x - m') and
    # the rescales) flush subnormal results (ex2.approx.ftz: one SASS
    # instruction instead of four or five); the sum holds its max's term 1,
    # beside which such a term is lost in the rounding anyway. The output
    # pass's exp(x - m) / s keeps them: rows at distances from their max
    # where every output but the max's is subnormal (or 0) come out as
    # numpy's, and so do their sums' logs.
    p = kb.Program("online_ftz")
    x = p.input("x", (6, 3000), "f32")
    m = x.max(axis=1, keepdims=True)
    e = kb.exp(x - m)
    s = e.sum(axis=1, keepdims=True)
    p.output(e / s, name="y")
    p.output(kb.log(s).sum(axis=1) + m.sum(axis=1), name="lse")
    f = kfuse.compile(p, target="cuda", chip="sm_90", row_chunks=0)
    # (fusion-fast-exp's ex2s, inline PTX, in the kernel's order: the pass
    # over the row's, then the output's; libdevice's correctly rounded exp,
    # the finish's rescale, has an ex2.approx.ftz of its own, not inline)
    ex2s = re.findall(r"begin inline asm\s+(ex2\.approx(?:\.ftz)?\.f32)", f.ptx)
    flushed = ex2s.count("ex2.approx.ftz.f32")
    assert flushed >= 2 and ex2s[:flushed] == ["ex2.approx.ftz.f32"] * flushed, ex2s
    assert "ex2.approx.f32" in ex2s[flushed:], ex2s
    rng = np.random.default_rng(11)
    xs = np.zeros((6, 3000), np.float32)
    for r, spread in enumerate([1.0, 80.0, 95.0, 100.0, 104.0, 200.0]):
        xs[r] = -spread * rng.random(3000, dtype=np.float32)
        xs[r, rng.integers(3000)] = 0.0
    y, lse = f.emulate(xs)
    want_y, want_lse = p.reference(xs)
    # subnormal outputs: 1e-44 is below every one but 0's
    tiny = (want_y > 0) & (want_y < np.finfo(np.float32).tiny)
    assert tiny.sum() > 1000
    np.testing.assert_allclose(y[tiny], want_y[tiny], rtol=0.02, atol=1e-44)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-44)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-6, atol=1e-6)


def _flush_programs():
    def sigmoid(p, x):
        return kb.sigmoid(x)

    def silu(p, x):
        return x * kb.sigmoid(x * 0.5)

    def softplus(p, x):
        return kb.log(kb.exp(x) + 1.0)

    def one_minus(p, x):
        return 1.0 - kb.exp(x)

    def lse(p, x):
        m = x.max(axis=1, keepdims=True)
        return kb.log(kb.exp(x - m).sum(axis=1)) + m.sum(axis=1)

    return {"sigmoid": sigmoid, "silu": silu, "softplus": softplus,
            "one_minus": one_minus, "lse": lse}


@pytest.mark.parametrize("kind", list(_flush_programs()))
def test_flushed_exps_change_no_bit(kind):
    # The exps fusion-fast-exp flushes (ex2.approx.ftz: one SASS instruction
    # instead of four or five) are those whose subnormal results no output
    # can see: added to a constant of at least 2^-100 (1 + exp(-x), exp(x)
    # + 1), or terms and rescales of an online sum that holds its max's term
    # 1. The same PTX with every `.ftz` of an ex2 removed gives the same
    # bits, over inputs whose exps are subnormal (x from -104 to -87) and
    # around them.
    p = kb.Program(f"ftz_{kind}")
    x = p.input("x", (8, 4096), "f32")
    p.output(_flush_programs()[kind](p, x), name="y")
    f = kfuse.compile(p, target="cuda", chip="sm_90", row_chunks=0)
    assert "ex2.approx.ftz.f32" in f.ptx
    kept = re.sub(r"\bex2\.approx\.ftz\.f32", "ex2.approx.f32", f.ptx)
    rng = np.random.default_rng(12)
    xs = rng.uniform(-120.0, 3.0, (8, 4096)).astype(np.float32)
    xs[::2] = rng.uniform(-104.0, -87.0, (4, 4096))
    xs[1::2, ::7] *= -1.0
    y = f.emulate(xs)
    y_kept = kfuse.runtime.EmulatedExecutable(f.plan, kept, constants=f.constants)(xs)
    assert np.array_equal(y.view(np.uint32), y_kept.view(np.uint32))
    want = p.reference(xs)[0]
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=2e-7)


@pytest.mark.parametrize("every", [False, True])
def test_stacked_normalizations_over_long_rows_split_and_match(every):
    # Five blocks over 2 rows of 2^17: the rows split over the SMs (a
    # partials kernel a wave, then the store), the kept values of h
    # recomputed in each kernel that reads them, in a buffer of the
    # kernel's own; with every h an output, only the storing kernel writes
    # it. The numpy reference's values, and each output written once.
    p = norm_stack("stack5", 5, 2, 1 << 17, every)
    rng = np.random.default_rng(5)
    args = [rng.standard_normal((2, 1 << 17)).astype(np.float32),
            rng.standard_normal(1 << 17).astype(np.float32),
            rng.standard_normal(1 << 17).astype(np.float32)]
    cuda = kfuse.compile(p, target="cuda", chip="sm_90", sm_count=132)
    names = [s.name for s in cuda.plan.steps]
    assert len(names) == 6 and names[-1].endswith("_store"), names
    got = cuda.emulate(*args)
    got = got if isinstance(got, (list, tuple)) else [got]
    want = p.reference(*args)
    want = want if isinstance(want, (list, tuple)) else [want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-4)
    # (the kernels' own buffers for h stay in registers: no temporary of
    # the rows' size)
    assert all(math.prod(b.shape) < 1 << 17 for b in cuda.plan.buffers
               if b.kind == "temp")
    stats = cuda.emulator.last_stats
    out_bytes = len(want) * 2 * (1 << 17) * 4
    assert stats[-1]["store"]["bytes"] == out_bytes
    assert sum(s["store"]["bytes"] for s in stats[:-1]) < 8192


def test_readonly_inputs_load_the_inputs_only_non_coherently():
    # readonly_inputs=True (fusion-readonly-inputs): the kernels load the
    # program's inputs with ld.global.nc and nothing else: a split L2
    # normalization's partials, written by its partials kernel and read
    # by the kernel that finishes them, keep plain loads. The same bits as
    # without it.
    p = kb.Program("l2n_nc")
    x = p.input("x", (1 << 18,), "f32")
    w = p.input("w", (1 << 18,), "f32")
    p.output(x * w / kb.sqrt((x * x).sum()), name="y")
    plain = kfuse.compile(p, target="cuda", chip="sm_90", sm_count=132)
    nc = kfuse.compile(p, target="cuda", chip="sm_90", sm_count=132, readonly_inputs=True)
    assert len(nc.plan.steps) == len(plain.plan.steps) >= 2
    assert any(b.kind == "temp" for b in nc.plan.buffers)
    assert "ld.global.nc" not in plain.ptx
    loads = re.findall(r"\bld\.global\.(nc\.)?", nc.ptx)
    assert "nc." in loads and "" in loads, loads
    # (each .nc load reads a parameter marked noalias and readonly: x or w)
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(1 << 18).astype(np.float32) for _ in range(2)]
    got, want = nc.emulate(*args), plain.emulate(*args)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    with pytest.raises(kfuse.CompileError, match="readonly_inputs must be True or False"):
        kfuse.compile(p, target="cuda", chip="sm_90", readonly_inputs="yes")


def test_fusion_ops_read_back_as_their_python_classes():
    # kfuse.dialects.fusion (generated from FusionOps.td at build time) is on
    # the mlir package's dialect search path: the planned groups read back as
    # fusion.GroupOp with typed attributes, and the package no longer looks
    # for a module of the dialect each time it wraps one of its ops
    from mlir import ir
    from mlir._mlir_libs._mlir import globals as mlir_globals
    from kfuse.dialects import fusion
    from kfuse.signature import entry_function
    p = kb.Program("two_groups")
    x = p.input("x", (64, 32), "f32")
    e = kb.exp(x - x.max(axis=-1, keepdims=True))
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    w = p.input("w", (100,), "f32")
    p.output(kb.sqrt(w * w + 1.0), name="z")
    compiled = kfuse.compile(p, "cuda", chip="sm_90", multi_tensor=False)
    with ir.Context():
        module = ir.Module.parse(compiled.stages["plan"])
        ops = list(entry_function(module).regions[0].blocks[0].operations)
        groups = [op for op in ops if op.operation.name == "fusion.group"]
        assert len(groups) == 2
        assert all(isinstance(g, fusion.GroupOp) for g in groups)
        assert ([(g.sym_name.value, g.kind.value) for g in groups] ==
                [(r.name, r.kind) for r in compiled.report.groups])
        assert not any(isinstance(op, fusion.GroupOp) for op in ops
                       if op.operation.name != "fusion.group")
    assert mlir_globals._check_dialect_module_loaded("fusion")


def _entry_params(ptx):
    """Each kernel's parameter count, by its .entry."""
    return {m.group(1): m.group(2).count(".param")
            for m in re.finditer(r"\.entry (\w+)\((.*?)\)", ptx, re.S)}


def _adam(params, size=64):
    p = kb.Program(f"adam_{params}")
    outs = []
    for i in range(params):
        w, g, m, v = (p.input(f"{k}{i}", (size,), "f32") for k in "wgmv")
        m2 = m * 0.9 + g * 0.1
        v2 = v * 0.999 + g * g * 0.001
        for name, t in ((f"w{i}_out", w - 0.01 * m2 / (kb.sqrt(v2) + 1e-8)),
                        (f"m{i}_out", m2), (f"v{i}_out", v2)):
            p.output(t, name=name)
    return p


def test_many_tensor_update_takes_launches_of_at_most_512_buffers():
    # An optimizer's step over 200 parameters of one shape: 1400 tensors,
    # one multi-tensor group before. A CUDA kernel takes 4 KB of parameters
    # in every launch (32 KB on recent drivers; past that ptxas and the
    # driver refuse the PTX): planning stops each group at 512 buffers, so
    # the step takes three launches, each kernel's parameters its buffers.
    p = _adam(200)
    rng = np.random.default_rng(0)
    args = [np.abs(rng.standard_normal(64)).astype(np.float32) for _ in p.inputs]
    f = kfuse.compile(p, target="cuda", chip="sm_90")
    params = _entry_params(f.ptx)
    assert params and max(params.values()) <= 512, params
    launches = [line for line in str(f.report).splitlines() if line.strip().startswith("launch ")]
    assert len(launches) >= 3, launches
    got = f.emulate(*args)
    want = kfuse.compile(p, target="cpu")(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_long_chain_past_512_buffers_is_split_and_says_why():
    # x0 + x1 + ... + x599: one group would read 600 tensors. It runs as
    # two, the report saying why the edge between them stayed unfused.
    p = kb.Program("chain600")
    xs = [p.input(f"x{i}", (32,), "f32") for i in range(600)]
    acc = xs[0]
    for x in xs[1:]:
        acc = acc + x
    p.output(acc, name="y")
    f = kfuse.compile(p, target="cuda", chip="sm_90")
    assert max(_entry_params(f.ptx).values()) <= 512
    assert "the merged group would pass its kernel more than 512 buffers" in str(f.report)
    args = [np.full(32, i, np.float32) for i in range(600)]
    np.testing.assert_array_equal(f.emulate(*args), np.full(32, sum(range(600)), np.float32))


def test_one_op_past_the_kernel_parameter_limit_is_refused_by_name():
    # One linalg.generic reading 4100 tensors: no plan splits one op, and
    # its kernel's 4101 pointers take 32808 bytes, past the 32764 a CUDA
    # kernel can be passed: a kfuse error naming the kernel, not PTX that
    # ptxas (or the driver, at load) refuses.
    n = 4100
    maps = ", ".join(["affine_map<(d0) -> (d0)>"] * (n + 1))
    body = ["%s1 = arith.addf %b0, %b1 : f32"] + [
        f"%s{i} = arith.addf %s{i - 1}, %b{i} : f32" for i in range(2, n)]
    text = (
        "func.func @wide(" + ", ".join(f"%a{i}: tensor<8xf32>" for i in range(n))
        + ") -> tensor<8xf32> {\n  %e = tensor.empty() : tensor<8xf32>\n"
        f"  %r = linalg.generic {{indexing_maps = [{maps}], iterator_types = [\"parallel\"]}}"
        " ins(" + ", ".join(f"%a{i}" for i in range(n)) + " : "
        + ", ".join(["tensor<8xf32>"] * n) + ") outs(%e : tensor<8xf32>) {\n  ^bb0("
        + ", ".join(f"%b{i}: f32" for i in range(n)) + ", %o: f32):\n    "
        + "\n    ".join(body) + f"\n    linalg.yield %s{n - 1} : f32\n  }} -> tensor<8xf32>\n"
        "  return %r : tensor<8xf32>\n}\n")
    with pytest.raises(kfuse.CompileError, match=r"kernel 'wide_g0' yet: its 4101 parameters "
                                                  r"take 32808 bytes, more than the 32764"):
        kfuse.compile(text, target="cuda", chip="sm_90")
