"""kfuse's CUDA runtime against nullcuda, a driver with no GPU behind it
(test/nullcuda): what the runtime asks the driver to do (allocations, copies,
launches with their parameters, streams, synchronization) and what it tells the
user when a driver call fails. Runs on every machine; the GPU tests
(test_gpu.py) check the kernels' results on a real device.

Programs are compiled here; each case runs in a child process whose
LD_LIBRARY_PATH puts nullcuda's libcuda.so.1 first, loads the saved program
with kfuse.runtime, and reads the driver's log (see nullcuda.c for its lines).
"""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import kfuse
from kfuse import builder as kb

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NULLCUDA = os.path.join(ROOT, "build", "test", "nullcuda")

# The child's side: device arrays over nullcuda's memory, then one case.
CHILD = r"""
import json, os, sys
import numpy as np
import kfuse.runtime as rt
from kfuse import dtypes
from kfuse.runtime import cuda as rc


class DevArray:
    # A CUDA array (__cuda_array_interface__ v3) in memory from cuMemAlloc,
    # or at `at` (an alias).
    def __init__(self, shape, dtype, offset=0, at=None):
        cu = rc._driver()
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize + offset
        if at is None:
            at = int(rc._check(cu.cuMemAlloc(max(n, 1)), "allocating a test array"))
        self.ptr = at + offset
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": np.dtype(dtype).str, "data": (self.ptr, False),
            "version": 3, "strides": None, "stream": None}


def device_args(exe, offset=0):
    ins = [DevArray(s.shape, dtypes.to_numpy(s.dtype), offset) for s in exe.plan.inputs]
    outs = [DevArray(s.shape, dtypes.to_numpy(s.dtype)) for s in exe.plan.outputs]
    return ins, outs


def fake_torch(stream):
    # What the runtime reads of torch, over nullcuda's memory: CUDA tensors
    # (shape, dtype, strides, device, data_ptr), torch.empty, torch.device and
    # the current stream (`stream`, as torch._C reports it).
    import types
    torch = types.ModuleType("torch")

    class dtype:
        def __init__(self, name, itemsize):
            self.name, self.itemsize = name, itemsize

        def __repr__(self):
            return "torch." + self.name

    for name, size in (("float32", 4), ("float16", 2), ("bfloat16", 2), ("float64", 8),
                       ("bool", 1), ("int32", 4), ("int64", 8), ("complex64", 8)):
        setattr(torch, name, dtype(name, size))

    class device:
        def __init__(self, kind, index=None):
            self.type, self.index = kind, index

        def __repr__(self):
            return self.type if self.index is None else f"{self.type}:{self.index}"

    class Tensor:
        def __init__(self, shape, dt, dev, strides=None):
            self.shape, self.dtype, self.device = tuple(shape), dt, dev
            n = 1
            for d in self.shape:
                n *= d
            self._strides = strides
            self._ptr = int(rc._check(rc._driver().cuMemAlloc(max(1, n * dt.itemsize)),
                                      "allocating a fake torch tensor"))

        is_cuda = property(lambda self: self.device.type == "cuda")

        def is_contiguous(self):
            return self._strides is None

        def stride(self):
            return self._strides

        def get_device(self):
            return self.device.index if self.is_cuda else -1

        def data_ptr(self):
            return self._ptr

    Tensor.__module__ = device.__module__ = dtype.__module__ = "torch"
    torch.Tensor, torch.device = Tensor, device
    torch.empty = lambda shape, dtype, device: Tensor(shape, dtype, device)
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: stream)
    sys.modules["torch"] = torch
    return torch


case, path = sys.argv[1], sys.argv[2]
exe = rt.load(path)
if os.environ.get("KEEP_TEMPS") == "0":
    exe.keep_temps = False
if "GUARD_POLL_INTERVAL" in os.environ:
    exe.GUARD_POLL_INTERVAL = float(os.environ["GUARD_POLL_INTERVAL"])
result = {}
try:
    if case == "numpy":
        x = np.arange(int(np.prod(exe.plan.inputs[0].shape)), dtype=np.float32)
        x = x.reshape(exe.plan.inputs[0].shape)
        y = exe(x)
        result["equal"] = bool(np.array_equal(np.asarray(y).reshape(x.shape), x))
    elif case in ("device", "stream", "misaligned", "overlap", "shape", "dtype"):
        ins, outs = device_args(exe, offset=4 if case == "misaligned" else 0)
        kw = {"stream": 0x4d2} if case == "stream" else {}
        x = exe.plan.inputs[0]
        if case == "overlap":        # the output starts inside the input
            outs[0] = DevArray(exe.plan.outputs[0].shape, dtypes.to_numpy(exe.plan.outputs[0].dtype),
                               at=ins[0].ptr + 64)
        elif case == "shape":
            ins[0] = DevArray((2, x.numel // 2), dtypes.to_numpy(x.dtype))
        elif case == "dtype":
            ins[0] = DevArray(x.shape, np.complex64)   # (no kfuse dtype)
        import warnings
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            exe(*ins, out=tuple(outs), **kw)
        if seen:
            result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in seen]
        result["inputs"] = [a.ptr for a in ins]
        result["outputs"] = [a.ptr for a in outs]
    elif case == "const":            # two calls; the constant's bytes where it lives
        import ctypes
        ins, outs = device_args(exe)
        exe(*ins, out=tuple(outs))
        exe(*ins, out=tuple(outs))
        result["constants"] = {str(b): [p, ctypes.string_at(p, exe.plan.buffers[b].nbytes).hex()]
                               for b, p in exe._state(0).constants.items()}
        result["inputs"] = [a.ptr for a in ins]
        result["outputs"] = [a.ptr for a in outs]
    elif case == "streams":          # two calls on one stream, a third on another
        ins, outs = device_args(exe)
        for stream in (0x4d2, 0x4d2, 0x4d3):
            exe(*ins, out=tuple(outs), stream=stream)
        result["inputs"] = [a.ptr for a in ins]
        result["outputs"] = [a.ptr for a in outs]
    elif case == "many_streams":     # ten streams, then the first again
        ins, outs = device_args(exe)
        for stream in list(range(0x100, 0x10a)) + [0x100]:
            exe(*ins, out=tuple(outs), stream=stream)
    elif case == "guards":           # host arrays, then device arrays and a set word
        import ctypes
        from kfuse.errors import GuardError
        ins = [np.zeros(s.shape, dtypes.to_numpy(s.dtype)) for s in exe.plan.inputs]
        exe(*ins)                    # (waits for its kernels: reads the words)
        dins, douts = device_args(exe)
        exe(*dins, out=tuple(douts))  # (does not wait)
        b, nbytes = exe._status
        word = exe._state(0).counter(b, nbytes, 0)
        # (guard 1's two words, as a failed gather at index 123 leaves them)
        ctypes.c_int64.from_address(word + 16).value = 1
        ctypes.c_int64.from_address(word + 24).value = 123
        result["status"] = word
        try:
            exe.check_guards()
        except GuardError as e:
            result["guard"] = [str(e), e.failed, e.indices]
        exe.check_guards()           # (zeroed: nothing left to report)
    elif case == "guards_later":     # device arrays only: a later call reports
        import ctypes
        from kfuse.errors import GuardError
        dins, douts = device_args(exe)
        b, nbytes = exe._status
        word = exe._state(0).counter(b, nbytes, 0)
        result["status"] = word
        exe(*dins, out=tuple(douts))  # (its words copied back: none set)
        # (the next call's kernels fail guard 1 at index 77: nullcuda runs none,
        # so the word is set as they would leave it)
        ctypes.c_int64.from_address(word + 16).value = 1
        ctypes.c_int64.from_address(word + 24).value = 77
        exe(*dins, out=tuple(douts))  # (its copy reads the set word)
        calls = 2
        result["guard"] = None
        for _ in range(3):
            try:
                exe(*dins, out=tuple(douts))
                calls += 1
            except GuardError as e:
                result["guard"] = [str(e), e.failed, e.indices]
                break
        result["calls"] = calls
        exe(*dins, out=tuple(douts))  # (zeroed: runs)
        try:
            exe.check_guards()
            result["after"] = "clean"
        except GuardError as e:
            result["after"] = str(e)
    elif case == "tuned":            # a tuned program: its variants timed, one kept
        ins = [np.zeros(s.shape, dtypes.to_numpy(s.dtype)) for s in exe.plan.inputs]
        exe.budget = 0.0
        exe(*ins)
        result["choice"] = exe.choice
        result["timed"] = sorted(exe.timings)
        result["grids"] = {label: [list(s.grid) + list(s.block) for s in v.plan.steps]
                           for label, v in exe.variants.items()}
        # the choice recorded in tuning.json: loaded again, taken untimed
        result["device"] = exe.record()
        again = rt.load(path)

        def untimed(label, run):
            raise AssertionError(f"timed {label} again")
        again._measure = untimed
        again(*ins)
        result["again"] = again.choice
    elif case == "torch_tuned":      # a tuned program on torch tensors (bench_suite.py's)
        torch = fake_torch(0x77)
        cuda = torch.device("cuda", 0)
        xs = [torch.Tensor(s.shape, torch.float32, cuda) for s in exe.plan.inputs]
        exe.budget = 0.0
        ys = exe(*xs)
        ys = ys if isinstance(ys, tuple) else (ys,)
        result["choice"] = exe.choice
        result["timed"] = sorted(exe.timings)
        result["outputs"] = [[type(y).__name__, list(y.shape)] for y in ys]
    elif case.startswith("torch"):   # torch tensors in, torch tensors out
        torch = fake_torch(0x77)
        names = {"f32": "float32", "f16": "float16", "i64": "int64"}
        cuda = torch.device("cuda", 0)
        xs = [torch.Tensor(s.shape, getattr(torch, names[s.dtype.name]), cuda)
              for s in exe.plan.inputs]
        x0 = exe.plan.inputs[0]
        kw = {}
        if case == "torch_stream":
            kw = {"stream": 0x4d2}
        elif case == "torch_cpu":
            xs[0] = torch.Tensor(x0.shape, xs[0].dtype, torch.device("cpu"))
        elif case == "torch_strided":
            xs[0] = torch.Tensor(x0.shape, xs[0].dtype, cuda, strides=(1, x0.shape[0]))
        elif case == "torch_dtype":
            xs[0] = torch.Tensor(x0.shape, torch.float16, cuda)
        elif case == "torch_complex":
            xs[0] = torch.Tensor(x0.shape, torch.complex64, cuda)
        elif case == "torch_shape":
            xs[0] = torch.Tensor(x0.shape[::-1], xs[0].dtype, cuda)
        result["inputs"] = [x.data_ptr() for x in xs]
        ys = exe(*xs, **kw)
        ys = ys if isinstance(ys, tuple) else (ys,)
        result["outputs"] = [[type(y).__name__, list(y.shape), y.dtype.name, y.data_ptr()]
                             for y in ys]
        ys2 = exe(*xs, **kw)         # (a second call: new outputs again)
        ys2 = ys2 if isinstance(ys2, tuple) else (ys2,)
        result["outputs2"] = [y.data_ptr() for y in ys2]
    else:
        raise SystemExit(f"unknown case {case}")
except Exception as e:  # noqa: BLE001 - reported to the test
    result["error"] = [type(e).__name__, str(e)]
print(json.dumps(result))
"""


def _compile(program, tmp_path, name, **opts):
    f = kfuse.compile(program, target="cuda", chip="sm_90", **opts)
    out = tmp_path / name
    f.save(str(out))
    return f, str(out)


def _run(case, path, tmp_path, fail=None, env_extra=None):
    """Runs `case` on the program saved at `path` in a child process on
    nullcuda; returns (its result dict, the driver log as lists of fields)."""
    lib = os.path.join(NULLCUDA, "libcuda.so.1")
    assert os.path.exists(lib), f"{lib} is missing: build it with `make build`"
    log = tmp_path / f"{case}.log"
    env = dict(os.environ, LD_LIBRARY_PATH=NULLCUDA + os.pathsep +
               os.environ.get("LD_LIBRARY_PATH", ""), NULLCUDA_LOG=str(log),
               PYTHONPATH=os.path.join(ROOT, "python"))
    env.pop("NULLCUDA_FAIL", None)
    if fail:
        env["NULLCUDA_FAIL"] = fail
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-c", CHILD, case, path], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    lines = log.read_text().splitlines() if log.exists() else []
    return result, [ln.split() for ln in lines]


def _l2norm():
    p = kb.Program("l2norm")
    x = p.input("x", (1 << 20,), "f32")
    p.output(kb.sqrt(kb.sum(x * x)), name="y")
    return p


# (the L2 norm as a partials kernel and a finishing kernel, launched
# programmatically: by default the partials kernel's last block finishes,
# see test_counter_buffers_are_zeroed_once_per_stream)
SPLIT2 = dict(row_last_block=False)


def _launches(log):
    return [ln for ln in log if ln[0] == "launch"]


def _softmax_rows():
    # (two rows of 65536: a row kernel with variants of distinct code)
    p = kb.Program("softmax")
    x = p.input("x", (2, 65536), "f32")
    e = kb.exp(x - kb.amax(x, axis=1, keepdims=True))
    p.output(e / kb.reduce_sum(e, axis=1, keepdims=True), name="y")
    return p


def test_a_tuned_program_runs_every_variant_then_the_one_it_keeps(tmp_path):
    # kfuse.autotune's variants through the real runtime (nullcuda's clock
    # chooses nothing meaningful: which one wins is test_gpu.py's)
    t = kfuse.autotune(_softmax_rows(), chip="sm_90",
                       variants=[{"row_cluster": 16}, {"row_occupancy": 2}])
    assert len(t.labels) == 3
    path = t.save(str(tmp_path / "tuned"))
    result, log = _run("tuned", path, tmp_path)
    assert "error" not in result, result
    assert result["timed"] == sorted(t.labels) and result["choice"] in t.labels
    assert result["device"] == "nullcuda (no GPU)" and result["again"] == result["choice"]
    recorded = json.load(open(os.path.join(path, "tuning.json")))["chosen"]
    assert list(recorded) == ["nullcuda (no GPU)"]
    assert recorded["nullcuda (no GPU)"]["label"] == result["choice"]
    assert sorted(recorded["nullcuda (no GPU)"]["us"]) == sorted(t.labels)
    launches = [[int(v) for v in ln[2:8]] for ln in _launches(log)]
    for label, steps in result["grids"].items():
        assert all(s in launches for s in steps), label
    # (rounds of: a call to size the timed run, then the run; each waits)
    assert ["sync", "context"] in log
    # the calls themselves (the first, and the reloaded program's): the
    # kept variant's launches last
    kept = result["grids"][result["choice"]]
    assert launches[-2 * len(kept):] == kept + kept


def test_a_tuned_program_on_torch_tensors_runs_on_torchs_stream(tmp_path):
    # (as bench_suite.py calls the __tuned rows: torch tensors, the timing
    # calls and the kept one's all on torch's current stream, outputs torch
    # tensors)
    t = kfuse.autotune(_softmax_rows(), chip="sm_90", variants=[{"row_occupancy": 2}])
    path = t.save(str(tmp_path / "tuned"))
    result, log = _run("torch_tuned", path, tmp_path)
    assert "error" not in result, result
    assert result["timed"] == sorted(t.labels) and result["choice"] in t.labels
    assert result["outputs"] == [["Tensor", [2, 65536]]]
    launches = _launches(log)
    assert launches and all(ln[9] == "77" for ln in launches)
    # (every variant launched; a wait for the GPU after each timed run)
    grids = {tuple(int(v) for v in ln[2:8]) for ln in launches}
    for label, c in t.variants.items():
        assert all(tuple(s.grid) + tuple(s.block) in grids
                   for s in c.plan.steps if s.op == "launch"), label
    assert ["sync", "context"] in log


def test_numpy_round_trip_through_a_copy_step(tmp_path):
    # An output that is its input: the plan copies device to device, so the
    # bytes make the whole trip (host -> device -> device -> host).
    p = kb.Program("same")
    x = p.input("x", (4, 8), "f32")
    p.output(x, name="y")
    f, path = _compile(p, tmp_path, "same")
    assert [s.op for s in f.plan.steps] == ["copy"]
    result, log = _run("numpy", path, tmp_path)
    assert result == {"equal": True}
    ops = [ln[0] for ln in log]
    assert ops == ["alloc", "htod", "alloc", "dtod", "dtoh", "free", "free", "sync"], log
    staged_in, copy, back = log[1], log[3], log[4]
    assert copy[1] == staged_in[1] and copy[2] == back[1]      # in -> out -> host
    assert copy[3] == back[2] == "128"


# (temporaries allocated and freed with each call, in stream order, as
# programs whose temporaries exceed CudaExecutable.KEPT_TEMP_BYTES do)
PER_CALL = {"KEEP_TEMPS": "0"}


def test_launches_follow_the_plan_with_every_parameter(tmp_path):
    f, path = _compile(_l2norm(), tmp_path, "l2norm", **SPLIT2)
    result, log = _run("device", path, tmp_path, env_extra=PER_CALL)
    assert "error" not in result, result
    steps = [s for s in f.plan.steps if s.op == "launch"]
    assert len(steps) == 2 and any(b.kind == "temp" for b in f.plan.buffers)
    # the temporary: allocated on the call's stream before the first launch,
    # freed after the last, on the same stream; device arrays: no sync
    # (the finishing kernel is launched programmatically: cuLaunchKernelEx with
    # programmatic stream serialization, attribute 6, on)
    ops = [ln[0] for ln in log if ln[0] != "alloc" or ln[3] != "sync"]
    assert ops == ["alloc", "launch", "launch", "attr", "free"], log
    assert [s.programmatic for s in steps] == [False, True]
    assert log[-2] == ["attr", "6", "1"]
    temp = int([ln for ln in log if ln[0] == "alloc" and ln[3] != "sync"][0][1], 16)
    assert log[-1][:2] == ["free", f"{temp:x}"]
    ptrs = {}
    for i, b in enumerate(f.plan.buffers):
        ptrs[i] = {"input": lambda: result["inputs"][b.index],
                   "output": lambda: result["outputs"][b.index],
                   "temp": lambda: temp}[b.kind]()
    for step, ln in zip(steps, _launches(log)):
        assert ln[1] == step.kernel
        assert [int(v) for v in ln[2:8]] == list(step.grid) + list(step.block)
        assert int(ln[8]) == step.smem and ln[9] == "0"
        expected = [ptrs[a.buffer] if hasattr(a, "buffer") else a.value for a in step.args]
        assert [int(v) for v in ln[10:]] == expected, (step, ln)


def test_launches_of_one_code_run_one_kernel_with_their_own_buffers(tmp_path):
    # Two sums of squares over rows of two inputs (2 MiB each, too large to
    # pack): one kernel (fusion-dedup-kernels), the second launch under its
    # own name in the plan; the PTX has the one entry the driver is asked
    # for, and each launch passes its own input and output.
    p = kb.Program("two")
    a = p.input("a", (512, 1024), "f32")
    b = p.input("b", (512, 1024), "f32")
    p.output((a * a).sum(axis=1), name="sa")
    p.output((b * b).sum(axis=1), name="sb")
    f, path = _compile(p, tmp_path, "two")
    steps = [s for s in f.plan.steps if s.op == "launch"]
    assert [(s.kernel, s.name) for s in steps] == [("two_g0", "two_g0"), ("two_g0", "two_g1")]
    assert f.ptx.count(".entry") == 1
    result, log = _run("device", path, tmp_path)
    assert "error" not in result, result
    launches = _launches(log)
    assert [ln[1] for ln in launches] == ["two_g0", "two_g0"]
    ins, outs = result["inputs"], result["outputs"]
    assert [[int(v) for v in ln[10:]] for ln in launches] == [[ins[0], outs[0]],
                                                             [ins[1], outs[1]]]


def test_stream_argument_orders_everything_on_that_stream(tmp_path):
    _, path = _compile(_l2norm(), tmp_path, "l2norm", **SPLIT2)
    result, log = _run("stream", path, tmp_path, env_extra=PER_CALL)
    assert "error" not in result, result
    queued = [ln for ln in log if ln[0] != "alloc" or ln[3] != "sync"]
    assert [ln[0] for ln in queued] == ["alloc", "launch", "launch", "attr", "free"]
    assert queued[0][3] == queued[-1][2] == "4d2"
    assert all(ln[9] == "4d2" for ln in _launches(log))


def test_plain_launches_without_pdl(tmp_path):
    # pdl=False: both kernels launched plainly (cuLaunchKernel), no wait in
    # the finishing kernel's PTX
    f, path = _compile(_l2norm(), tmp_path, "l2norm", pdl=False, **SPLIT2)
    assert "griddepcontrol" not in f.ptx
    assert not any(s.programmatic for s in f.plan.steps if s.op == "launch")
    result, log = _run("device", path, tmp_path, env_extra=PER_CALL)
    assert "error" not in result, result
    ops = [ln[0] for ln in log if ln[0] != "alloc" or ln[3] != "sync"]
    assert ops == ["alloc", "launch", "launch", "free"], log


def test_failing_programmatic_launch_is_named(tmp_path):
    _, path = _compile(_l2norm(), tmp_path, "l2norm", **SPLIT2)
    result, log = _run("device", path, tmp_path, fail="cuLaunchKernelEx:719",
                       env_extra=PER_CALL)
    kind, msg = result["error"]
    assert kind == "DeviceError" and "launching kernel 'l2norm_g0'" in msg, msg
    # the partials kernel ran; the temporary is given back all the same
    assert [ln[1] for ln in _launches(log)] == ["l2norm_g0_partial"]
    queued = [ln for ln in log if ln[0] != "alloc" or ln[3] != "sync"]
    assert [ln[0] for ln in queued][-1] == "free"


def test_programmatic_launch_of_a_kernel_that_does_not_wait_is_refused(tmp_path):
    # A plan (edited, or from elsewhere) that launches a kernel early whose
    # PTX does not wait for the kernel before it could read unwritten
    # partials: refused when loaded, not run.
    import kfuse.runtime as rt
    from kfuse.errors import ArtifactError
    f, path = _compile(_l2norm(), tmp_path, "l2norm", **SPLIT2)
    ptx_file = os.path.join(path, f.plan.ptx)
    with open(ptx_file) as fh:
        text = fh.read()
    assert text.count("griddepcontrol.wait;") == 1
    with open(ptx_file, "w") as fh:
        fh.write(text.replace("griddepcontrol.wait;", ""))
    with pytest.raises(ArtifactError, match="launches kernel 'l2norm_g0' programmatically, "
                                            "but its PTX has no griddepcontrol.wait"):
        rt.load(path)


def test_misaligned_input_is_refused_before_anything_is_queued(tmp_path):
    _, path = _compile(_l2norm(), tmp_path, "l2norm")
    result, log = _run("misaligned", path, tmp_path)
    kind, msg = result["error"]
    assert kind == "CallError" and "not 16-byte aligned" in msg
    assert [ln for ln in log if ln[0] != "alloc" or ln[3] != "sync"] == []


@pytest.mark.parametrize("fail, kind, words", [
    ("cuInit:100", "DeviceError", ["no CUDA device", "cuInit failed"]),
    ("cuModuleLoadData:218", "DeviceError", ["loading the PTX of 'l2norm'"]),
    ("cuMemAllocAsync:2", "DeviceError", ["allocating 1024 bytes"]),
    ("cuLaunchKernel:719", "DeviceError", ["launching kernel 'l2norm_g0_partial'", "grid [256, 1, 1]"]),
])
def test_driver_errors_name_what_failed(tmp_path, fail, kind, words):
    f, path = _compile(_l2norm(), tmp_path, "l2norm", **SPLIT2)
    result, log = _run("device", path, tmp_path, fail=fail, env_extra=PER_CALL)
    assert result["error"][0] == kind, result
    for w in words:
        assert w in result["error"][1], result["error"][1]
    # whatever was allocated for the call is given back, nothing launched
    # after the failure
    queued = [ln for ln in log if ln[0] != "alloc" or ln[3] != "sync"]
    assert _launches(log) == []
    assert len([ln for ln in queued if ln[0] == "alloc"]) == \
        len([ln for ln in queued if ln[0] == "free"])


@pytest.mark.parametrize("case, words", [
    ("overlap", ["output 'y' (out=) shares memory with input 'x'"]),
    ("shape", ["input 'x' has shape (2, 524288) but the program 'l2norm' was compiled "
               "for (1048576,)"]),
    ("dtype", ["input 'x' has dtype complex64 but the program 'l2norm' was compiled for f32"]),
])
def test_bad_arguments_are_refused_before_anything_is_queued(tmp_path, case, words):
    _, path = _compile(_l2norm(), tmp_path, "l2norm")
    result, log = _run(case, path, tmp_path)
    kind, msg = result["error"]
    assert kind == "CallError"
    for w in words:
        assert w in msg, msg
    assert [ln for ln in log if ln[0] != "alloc" or ln[3] != "sync"] == []


def test_tensor_constants_are_uploaded_once_per_device(tmp_path):
    # a program's tensor constants live on the device for the executable's
    # lifetime: allocated and copied at the first call, passed to every launch
    f, path = _compile(open(os.path.join(ROOT, "test", "python", "programs",
                                         "const.mlir")).read(), tmp_path, "const")
    const = [i for i, b in enumerate(f.plan.buffers) if b.kind == "const"]
    assert len(const) == 1
    result, log = _run("const", path, tmp_path)
    assert "error" not in result, result
    ptr, data = result["constants"][str(const[0])]
    assert bytes.fromhex(data) == np.array([1, 2, 3, 4], np.float32).tobytes()
    uploads = [ln for ln in log if ln[0] == "htod"]
    assert uploads == [["htod", f"{ptr:x}", "16", "sync"]]
    launches = _launches(log)
    assert len(launches) == 2
    step = f.plan.steps[0]
    for ln in launches:
        params = [int(v) for v in ln[10:]]
        assert params[[a.buffer for a in step.args].index(const[0])] == ptr


def test_dynamic_shared_memory_beyond_48_kb_is_opted_into(tmp_path):
    # Rows of 65536 floats keep 10 of each thread's 16 vectors in 160 KB of
    # dynamic shared memory a block: the runtime allows the kernel that much
    # (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) before its first
    # launch, which passes the plan's size; nullcuda, like the driver,
    # refuses a launch above 48 KB without it. A device that allows less is
    # named before anything is queued, and so is a failing opt-in.
    p = kb.Program("wide")
    x = p.input("x", (256, 65536), "f32")
    e = kb.exp(x - x.max(axis=-1, keepdims=True))
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    f, path = _compile(p, tmp_path, "wide")
    (step,) = f.plan.steps
    assert step.smem == 160 * 1024
    result, log = _run("device", path, tmp_path)
    assert "error" not in result, result
    (launch,) = _launches(log)
    assert launch[1] == step.kernel and int(launch[8]) == step.smem
    (tmp_path / "small").mkdir()
    result, log = _run("device", path, tmp_path / "small",
                       env_extra={"NULLCUDA_SMEM_OPTIN": "101376"})
    kind, msg = result["error"]
    assert kind == "DeviceError" and _launches(log) == []
    assert ("kernel 'wide_g0' of 'wide' needs 163840 bytes of dynamic shared memory a block"
            in msg and "allows 101376: recompile with row_smem=99328" in msg), msg
    (tmp_path / "fails").mkdir()
    result, log = _run("device", path, tmp_path / "fails", fail="cuFuncSetAttribute:1")
    kind, msg = result["error"]
    assert kind == "DeviceError" and _launches(log) == []
    assert "allowing kernel 'wide_g0' 163840 bytes of dynamic shared memory" in msg, msg


def test_counter_buffers_are_zeroed_once_per_stream(tmp_path):
    # One kernel: the L2 norm's partials kernel counts its blocks in a
    # counter buffer and its last block finishes. The runtime keeps a counter
    # buffer per stream, zeroed (in stream order) before its first launch
    # there, reused by later calls on that stream, which the kernel leaves
    # zero; a call on another stream, which may overlap, gets its own.
    f, path = _compile(_l2norm(), tmp_path, "l2norm")
    assert [s.kernel for s in f.plan.steps] == ["l2norm_g0"]
    [counter] = [i for i, b in enumerate(f.plan.buffers) if b.kind == "counter"]
    assert f.plan.buffers[counter].shape == (1,)
    pos = [a.buffer for a in f.plan.steps[0].args].index(counter)
    result, log = _run("streams", path, tmp_path)
    assert "error" not in result, result
    memsets = [ln for ln in log if ln[0] == "memset"]
    launches = _launches(log)
    assert [ln[9] for ln in launches] == ["4d2", "4d2", "4d3"]
    used = [int(ln[10 + pos]) for ln in launches]
    assert used[0] == used[1] != used[2]
    assert [(int(m[1], 16), m[2], m[3], m[4]) for m in memsets] == [
        (used[0], "0", "4", "4d2"), (used[2], "0", "4", "4d3")]
    # each memset comes before the first launch on its stream
    order = [ln[0] for ln in log if ln[0] in ("memset", "launch")]
    assert order == ["memset", "launch", "launch", "memset", "launch"]


def test_temporaries_are_kept_per_stream(tmp_path):
    # The partials between the L2 norm's two kernels: allocated (cuMemAlloc)
    # at the first call on a stream and kept, passed to both kernels of every
    # later call there, never freed; a call on another stream, which may
    # overlap, gets its own. Nothing is allocated or freed in stream order.
    f, path = _compile(_l2norm(), tmp_path, "l2norm", **SPLIT2)
    [temp] = [i for i, b in enumerate(f.plan.buffers) if b.kind == "temp"]
    nbytes = f.plan.buffers[temp].nbytes
    pos = [[a.buffer for a in s.args].index(temp) for s in f.plan.steps]
    result, log = _run("streams", path, tmp_path)
    assert "error" not in result, result
    launches = _launches(log)
    assert [ln[9] for ln in launches] == ["4d2"] * 4 + ["4d3"] * 2
    used = [int(ln[10 + pos[i % 2]]) for i, ln in enumerate(launches)]
    assert len(set(used[:4])) == 1 and used[4] == used[5] != used[0]
    kept = [int(ln[1], 16) for ln in log if ln[0] == "alloc" and ln[2] == str(nbytes)]
    assert kept == [used[0], used[4]] and all(ln[3] == "sync" for ln in log if ln[0] == "alloc")
    assert not any(ln[0] == "free" for ln in log)
    # each allocated before the first launch that uses it
    first = [ln[0] for ln in log if ln[0] == "launch" or (ln[0] == "alloc" and ln[2] == str(nbytes))]
    assert first == ["alloc", "launch", "launch", "launch", "launch", "alloc", "launch", "launch"]
    # keep_temps = False: allocated and freed with each call, on its stream
    result, log = _run("streams", path, tmp_path, env_extra=PER_CALL)
    assert "error" not in result, result
    queued = [ln for ln in log if ln[0] in ("alloc", "free") and ln[-1] != "sync"]
    assert [ln[0] for ln in queued] == ["alloc", "free"] * 3


def test_temporaries_are_kept_for_the_first_streams_only(tmp_path):
    # Kept temporaries for the first 8 streams a program is called on; calls
    # on further streams (a caller making a stream per call) allocate and
    # free theirs in stream order, so that memory does not grow a stream at
    # a time; a stream that has kept temporaries keeps using them.
    f, path = _compile(_l2norm(), tmp_path, "l2norm", **SPLIT2)
    [temp] = [i for i, b in enumerate(f.plan.buffers) if b.kind == "temp"]
    nbytes = str(f.plan.buffers[temp].nbytes)
    result, log = _run("many_streams", path, tmp_path)
    assert "error" not in result, result
    kept = [ln for ln in log if ln[0] == "alloc" and ln[2] == nbytes and ln[3] == "sync"]
    assert len(kept) == 8
    queued = [(ln[0], ln[-1]) for ln in log if ln[0] in ("alloc", "free") and ln[-1] != "sync"]
    assert queued == [("alloc", "108"), ("free", "108"), ("alloc", "109"), ("free", "109")]
    launches = _launches(log)
    assert len(launches) == 22 and launches[-1][9] == "100"
    pos = [a.buffer for a in f.plan.steps[0].args].index(temp)
    assert int(launches[-2][10 + pos]) == int(launches[0][10 + pos])


def test_two_kernel_split_finish_without_a_counter(tmp_path):
    # row_last_block=False: a partials kernel and a finishing kernel, a
    # temporary for the partials, no counter
    f, path = _compile(_l2norm(), tmp_path, "l2norm", row_last_block=False)
    assert [s.kernel for s in f.plan.steps] == ["l2norm_g0_partial", "l2norm_g0"]
    assert not any(b.kind == "counter" for b in f.plan.buffers)
    assert "atom" not in f.ptx
    result, log = _run("streams", path, tmp_path)
    assert "error" not in result, result
    assert not any(ln[0] == "memset" for ln in log)


def test_split_tail_views_pass_their_buffer(tmp_path):
    # A ragged split (a prime length, 65537: 16 slices and a tail) reads the
    # input through two views of part of it (memref.subview at columns 0 and
    # 65536); each kernel parameter is the buffer's own address, the view's
    # offset in the kernel's code (the bare-pointer convention), not added
    # by the runtime.
    p = kb.Program("l2norm")
    x = p.input("x", (65537,), "f32")
    p.output(kb.sqrt(kb.sum(x * x)), name="y")
    f, path = _compile(p, tmp_path, "l2norm")
    (step,) = f.plan.steps
    assert step.grid[0] == 17
    ins = [i for i, a in enumerate(step.args)
           if hasattr(a, "buffer") and f.plan.buffers[a.buffer].kind == "input"]
    assert len(ins) == 2  # (the slices' view and the tail's)
    result, log = _run("device", path, tmp_path)
    assert "error" not in result, result
    (ln,) = _launches(log)
    assert [int(ln[10 + i]) for i in ins] == [result["inputs"][0]] * 2


def test_failing_counter_zeroing_is_named(tmp_path):
    _, path = _compile(_l2norm(), tmp_path, "l2norm")
    result, log = _run("device", path, tmp_path, fail="cuMemsetD8Async:2")
    kind, msg = result["error"]
    assert kind == "DeviceError" and "zeroing counter buffer" in msg, msg
    assert _launches(log) == []
    # the counter buffer is given back; the call's temporary too
    sync_allocs = [ln[1] for ln in log if ln[0] == "alloc" and ln[3] == "sync"]
    sync_frees = [ln[1] for ln in log if ln[0] == "free" and ln[2] == "sync"]
    assert sync_allocs[-1] in sync_frees
    queued = [ln for ln in log if ln[0] != "alloc" or ln[3] != "sync"]
    assert len([ln for ln in queued if ln[0] == "alloc"]) == \
        len([ln for ln in queued if ln[0] == "free" and ln[2] != "sync"])


def _guarded_program(tmp_path):
    """BERT's embeddings (token ids, positions and types gathered: 3 guards),
    compiled and saved: (program, its directory)."""
    from _programs import program_text
    f = kfuse.compile(program_text("torch/torch_bert_embeddings.mlir"), target="cuda",
                      chip="sm_90")
    out = tmp_path / "emb"
    f.save(str(out))
    return f, out


def test_a_later_call_reports_guards_without_waiting(tmp_path):
    # Calls on device arrays do not wait for their kernels. Each queues a
    # copy of the status words to page-locked memory and an event behind its
    # kernels; the next call on the stream asks whether the event has
    # completed (never waiting) and, if a word came back set, reads them
    # again, waits, zeroes them and raises GuardError before it queues
    # anything. While a copy is still in flight no other is queued.
    f, out = _guarded_program(tmp_path)
    result, log = _run("guards_later", str(out), tmp_path,
                       env_extra={"GUARD_POLL_INTERVAL": "0"})
    assert "error" not in result, result
    text, failed, indices = result["guard"]
    assert failed == [f.plan.guards[1]] and indices == [77]
    assert "in a call before this one on the stream" in text
    assert "this call was not run" in text
    assert result["calls"] == 2          # the third call raised
    assert result["after"] == "clean"    # the words were zeroed
    word = f"{result['status']:x}"
    kinds = [ln for ln in log if ln[0] in ("launch", "dtoh", "record", "query", "sync",
                                           "memset", "hostalloc")]
    assert sum(1 for ln in kinds if ln[0] == "hostalloc") == 1  # one per stream
    # (each of the three calls that ran: its launches, the copy, the event;
    # the third call: its query, then the fresh read, the wait, the zeroing)
    launches = [i for i, ln in enumerate(kinds) if ln[0] == "launch"]
    copies = [i for i, ln in enumerate(kinds) if ln[:2] == ["dtoh", word]]
    records = [i for i, ln in enumerate(kinds) if ln[0] == "record"]
    assert len(copies) == 5 and len(records) == 3   # 3 calls + 1 raise + check_guards
    first_launch = launches[0]
    assert copies[0] > first_launch and records[0] == copies[0] + 1
    raising = copies[2]                  # the raising call: query, read, sync, memset
    assert kinds[raising - 1][0] == "query"
    assert [ln[0] for ln in kinds[raising:raising + 3]] == ["dtoh", "sync", "memset"]
    n_per_call = len([i for i in launches if i < copies[0]])
    assert len([i for i in launches if copies[1] < i < copies[3]]) == n_per_call


def test_guards_in_flight_are_not_waited_for(tmp_path):
    # An event that has not completed (cuEventQuery: not ready) is left for a
    # later call: no wait, no second copy queued meanwhile; check_guards
    # waits and reports.
    f, out = _guarded_program(tmp_path)
    result, log = _run("guards_later", str(out), tmp_path, fail="cuEventQuery:600",
                       env_extra={"GUARD_POLL_INTERVAL": "0"})
    assert "error" not in result, result
    assert result["guard"] is None and result["calls"] == 5
    assert "in a call before this one" not in result["after"]
    assert "index 77" in result["after"]
    word = f"{result['status']:x}"
    syncs = [ln for ln in log if ln[0] == "sync"]
    copies = [ln for ln in log if ln[:2] == ["dtoh", word]]
    assert len(copies) == 2            # the first call's copy; check_guards' read
    assert len(syncs) == 2             # check_guards' wait, and its raise's


def test_guards_are_asked_for_at_most_once_an_interval(tmp_path):
    # A stream's copy and its event are asked for no sooner than
    # GUARD_POLL_INTERVAL after the copy was queued (default 1 ms): calls
    # in between neither query nor copy again. With a minute, none of the
    # calls asks: the first call's copy is the only one, and check_guards
    # reports what the later calls left.
    f, out = _guarded_program(tmp_path)
    result, log = _run("guards_later", str(out), tmp_path,
                       env_extra={"GUARD_POLL_INTERVAL": "60"})
    assert "error" not in result, result
    assert result["guard"] is None and result["calls"] == 5
    assert "index 77" in result["after"]
    word = f"{result['status']:x}"
    assert not [ln for ln in log if ln[0] == "query"]
    assert len([ln for ln in log if ln[:2] == ["dtoh", word]]) == 2
    assert len([ln for ln in log if ln[0] == "record"]) == 1


def test_guard_status_words_are_read_after_waiting_calls(tmp_path):
    # A program whose gathers are guarded keeps their status words like a
    # counter buffer (zeroed once per stream). A call on numpy arrays, which
    # waits for its kernels, copies the words back before its synchronize; a
    # call on device arrays does not wait, and check_guards() reads them
    # later: a word set raises GuardError naming its gather, and is zeroed.
    f, out = _guarded_program(tmp_path)
    [status] = [i for i, b in enumerate(f.plan.buffers) if b.kind == "status"]
    result, log = _run("guards", str(out), tmp_path)
    assert "error" not in result, result
    text, failed, indices = result["guard"]
    assert failed == [f.plan.guards[1]] and indices == [123]
    assert "read a tensor at an index outside it" in text
    assert text.endswith(f"{f.plan.guards[1]}: index 123")
    word = f"{result['status']:x}"
    ops = [(ln[0], ln[1]) for ln in log if ln[0] in ("memset", "dtoh", "sync", "launch")]
    # zeroed once, before the first launch; read by the numpy call (after
    # its output) before it waits; read again by each check_guards, and
    # zeroed after the word that was set
    assert ops[0] == ("memset", word)
    first_sync = next(i for i, op in enumerate(ops) if op[0] == "sync")
    assert ops[first_sync - 1] == ("dtoh", word)
    # (the call on device arrays copies them back behind its kernels too,
    # to page-locked memory, without waiting)
    assert [op for op in ops if op[1] == word] == [
        ("memset", word), ("dtoh", word), ("dtoh", word), ("dtoh", word), ("memset", word),
        ("dtoh", word)]
    nbytes = f.plan.buffers[status].nbytes
    assert all(ln[2] == str(nbytes) for ln in log if ln[0] == "dtoh" and ln[1] == word)


# ---- torch tensors (a stand-in torch in the child: fake_torch)

def _torch_program():
    p = kb.Program("scaled")
    x = p.input("x", (64, 32), "f32")
    n = p.input("n", (64,), "i64")
    p.output(x * 2.0, name="y")
    p.output(kb.sum(x, axis=1), name="s")
    p.output(n + 1, name="m")
    return p


def test_torch_tensors_run_in_place_on_torchs_stream(tmp_path):
    f, path = _compile(_torch_program(), tmp_path, "scaled")
    result, log = _run("torch", path, tmp_path)
    assert "error" not in result, result
    # new torch tensors of the plan's shapes and dtypes, new ones each call
    assert [o[:3] for o in result["outputs"]] == [
        ["Tensor", [64, 32], "float32"], ["Tensor", [64], "float32"], ["Tensor", [64], "int64"]]
    outs = [o[3] for o in result["outputs"]]
    assert len(set(outs + result["outputs2"] + result["inputs"])) == 8
    # every launch on torch's current stream, with the tensors' addresses;
    # no wait, no copy, no driver allocation besides the tensors'
    launches = _launches(log)
    steps = [s for s in f.plan.steps if s.op == "launch"]
    assert len(launches) == 2 * len(steps) and all(ln[9] == "77" for ln in launches)
    assert not [ln for ln in log if ln[0] in ("sync", "htod", "dtoh", "wait", "record")], log
    ptrs = {}
    for i, b in enumerate(f.plan.buffers):
        if b.kind == "input":
            ptrs[i] = result["inputs"][b.index]
        elif b.kind == "output":
            ptrs[i] = outs[b.index]
    for step, ln in zip(steps, launches):
        expected = [ptrs.get(a.buffer) if hasattr(a, "buffer") else a.value for a in step.args]
        assert [int(v) for v in ln[10:]] == expected, (step, ln)


def test_torch_tensors_on_another_stream_are_waited_for(tmp_path):
    # stream= differs from torch's current stream, where the tensors were
    # made: an event recorded there, waited for on the call's stream first
    _, path = _compile(_torch_program(), tmp_path, "scaled")
    result, log = _run("torch_stream", path, tmp_path)
    assert "error" not in result, result
    first = [ln for ln in log if ln[0] in ("record", "wait", "launch")][:3]
    assert [ln[:2] for ln in first[:2]] == [["record", "77"], ["wait", "4d2"]]
    assert first[2][0] == "launch" and first[2][9] == "4d2"
    assert all(ln[9] == "4d2" for ln in _launches(log))


@pytest.mark.parametrize("case, message", [
    ("torch_cpu", "input 'x' is a torch tensor on cpu; pass a CUDA tensor"),
    ("torch_strided", r"input 'x' is not C-contiguous \(strides \(1, 64\) for shape "
                      r"\(64, 32\)\)"),
    ("torch_dtype", "input 'x' has dtype f16 but the program 'scaled' was compiled for f32"),
    ("torch_complex", "input 'x' has dtype complex64 but the program 'scaled' was compiled "
                      "for f32"),
    ("torch_shape", r"input 'x' has shape \(32, 64\) but the program 'scaled' was compiled "
                    r"for \(64, 32\)"),
])
def test_bad_torch_tensors_are_named_before_anything_runs(tmp_path, case, message):
    import re
    _, path = _compile(_torch_program(), tmp_path, "scaled")
    result, log = _run(case, path, tmp_path)
    kind, msg = result["error"]
    assert kind == "CallError" and re.search(message, msg), msg
    assert not _launches(log)


def _persistent_softmax(persist):
    # 7 rows of 65536 floats: clusters of 4 blocks (16 SMs), 64 KB of shared
    # memory a block for the next row's share
    p = kb.Program("ps")
    x = p.input("x", (7, 65536), "f32")
    e = kb.exp(x - x.max(axis=-1, keepdims=True))
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    return p, dict(sm_count=16, row_persist=persist)


@pytest.mark.parametrize("persist, resident, clusters", [
    ("auto", "3", 3),     # up to a cluster a row: the 3 the device holds
    ("auto", "20", 7),    # the device holds more: a cluster a row
    (5, "3", 3),          # at most 5, the device holds 3
    (2, "3", 2),          # at most 2: never more than planned
    ("auto", "0", 7),     # none fit, the driver says: the plan's grid (its error, if any)
])
def test_persistent_launches_run_the_clusters_the_device_holds(tmp_path, persist, resident,
                                                              clusters):
    p, opts = _persistent_softmax(persist)
    f, path = _compile(p, tmp_path, "ps", **opts)
    (step,) = f.plan.steps
    planned = 7 if persist == "auto" else persist
    assert step.persistent == planned and step.grid == (planned * 4, 1, 1)
    result, log = _run("device", path, tmp_path, env_extra={"NULLCUDA_CLUSTERS": resident})
    assert "error" not in result, result
    # asked once, at load, about the planned launch (its shared memory allowed
    # first), then launched over whole clusters
    asked = [ln for ln in log if ln[0] == "occupancy"]
    assert asked == [["occupancy", step.kernel, str(planned * 4), "1", "1", "1024", "1", "1",
                      str(step.smem), resident]], log
    (launch,) = _launches(log)
    assert launch[1] == step.kernel and launch[2:5] == [str(clusters * 4), "1", "1"], launch
    assert launch[5:9] == ["1024", "1", "1", str(step.smem)]
    # (the emulator cuts the grid by the same rule, and computes the same)
    assert step.grid_on(int(resident)) == (clusters * 4, 1, 1)


def test_persistent_launch_query_failures_warn_and_bad_plans_are_refused(tmp_path):
    p, opts = _persistent_softmax("auto")
    f, path = _compile(p, tmp_path, "ps", **opts)
    # a driver that fails to answer: a warning naming the failure, and the
    # plan's grid, which computes the same
    result, log = _run("device", path, tmp_path, fail="cuOccupancyMaxActiveClusters:1")
    assert "error" not in result, result
    (warning,) = result["warnings"]
    assert warning.startswith("RuntimeWarning: CUDA driver error while asking how many "
                              "clusters of kernel 'ps_g0' the device holds"), warning
    assert "launches kernel 'ps_g0' over the plan's 7 clusters, which may be more than " \
           "the device holds at once" in warning, warning
    (launch,) = _launches(log)
    assert launch[2:5] == ["28", "1", "1"], launch
    # a plan whose persistent launch disagrees with its kernel's cluster shape
    # is refused when it is loaded (before any driver call), naming both
    import kfuse.runtime as rt
    plan = json.loads(open(os.path.join(path, "plan.json")).read())
    for persistent, message in (
            (14, "persistent, 14 clusters of 2 blocks, but its PTX declares clusters of "
                 "[4, 1, 1] blocks"),
            (5, "5 clusters do not divide grid [28, 1, 1]")):
        plan["steps"][0]["persistent"] = persistent
        with open(os.path.join(path, "plan.json"), "w") as fh:
            json.dump(plan, fh)
        with pytest.raises(kfuse.ArtifactError, match=re.escape(message)):
            rt.load(path)


@pytest.mark.parametrize("per_sm, blocks", [("1", 132), ("2", 200)])
def test_persistent_blocks_run_the_blocks_the_device_holds(tmp_path, per_sm, blocks):
    # A persistent kernel without clusters (a block a row, 200 rows of 8192):
    # the blocks an SM holds (cuOccupancyMaxActiveBlocksPerMultiprocessor)
    # times nullcuda's 132 SMs, at most the planned 200
    p = kb.Program("psb")
    x = p.input("x", (200, 8192), "f32")
    e = kb.exp(x - x.max(axis=-1, keepdims=True))
    p.output(e / e.sum(axis=-1, keepdims=True), name="y")
    f, path = _compile(p, tmp_path, "psb", row_persist="auto")
    (step,) = f.plan.steps
    assert step.persistent == 200 and step.grid == (200, 1, 1) and step.cluster_blocks == 1
    result, log = _run("device", path, tmp_path, env_extra={"NULLCUDA_BLOCKS_PER_SM": per_sm})
    assert "error" not in result, result
    assert [ln for ln in log if ln[0].startswith("occupancy")] == [
        ["occupancy_sm", step.kernel, str(step.block[0]), str(step.smem), per_sm]], log
    (launch,) = _launches(log)
    assert launch[2:5] == [str(blocks), "1", "1"], launch


def test_cluster_occupancy_script_reports_the_launched_grids(tmp_path):
    # bench/cluster_occupancy.py (run by gpu_session.sh on the GPU machine)
    # on nullcuda: each cluster kernel's clusters at once, and for persistent
    # launches the clusters or blocks the runtime launches against the plan's
    p, opts = _persistent_softmax("auto")
    _, clusters = _compile(p, tmp_path, "ps", **opts)
    q = kb.Program("psb")
    x = q.input("x", (200, 8192), "f32")
    e = kb.exp(x - x.max(axis=-1, keepdims=True))
    q.output(e / e.sum(axis=-1, keepdims=True), name="y")
    _, blocks = _compile(q, tmp_path, "psb", row_persist="auto")
    env = dict(os.environ, LD_LIBRARY_PATH=NULLCUDA + os.pathsep +
               os.environ.get("LD_LIBRARY_PATH", ""), PYTHONPATH=os.path.join(ROOT, "python"),
               NULLCUDA_CLUSTERS="3", NULLCUDA_BLOCKS_PER_SM="1")
    env.pop("NULLCUDA_FAIL", None)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "cluster_occupancy.py"),
                           clusters, blocks], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = [[c.strip() for c in ln.strip("|").split("|")]
            for ln in proc.stdout.splitlines()[2:]]
    assert rows == [["ps", "ps_g0", "4", "1024", "0", "3", "12", "3 / 7"],
                    ["psb", "psb_g0", "1", "512", "", "", "", "132 / 200"]], proc.stdout


def test_kernel_times_counts_the_waves_of_each_launch(tmp_path):
    # bench/kernel_times.py's occupancy columns on nullcuda (132 SMs): a
    # cluster kernel's grid in waves of the clusters the device holds
    # (NULLCUDA_CLUSTERS), a plain one's in waves of the blocks an SM holds
    # (NULLCUDA_BLOCKS_PER_SM) times the SMs
    from _programs import batch_norm
    split, split_dir = _compile(batch_norm("bn", (16, 16, 32, 64), (0, 1, 2)), tmp_path,
                                "split")
    p, _ = _persistent_softmax(0)
    clusters, cluster_dir = _compile(p, tmp_path, "cl", sm_count=16)
    code = ("import json, sys; sys.path.insert(0, %r); import kernel_times; "
            "import kfuse.runtime as rt; "
            "print(json.dumps([kernel_times.launch_waves(rt.load(d)) for d in sys.argv[1:]]))"
            % os.path.join(ROOT, "bench"))
    env = dict(os.environ, LD_LIBRARY_PATH=NULLCUDA + os.pathsep +
               os.environ.get("LD_LIBRARY_PATH", ""), PYTHONPATH=os.path.join(ROOT, "python"),
               NULLCUDA_CLUSTERS="3", NULLCUDA_BLOCKS_PER_SM="2")
    env.pop("NULLCUDA_FAIL", None)
    proc = subprocess.run([sys.executable, "-c", code, split_dir, cluster_dir], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got_split, got_cluster = json.loads(proc.stdout)
    steps = split.plan.steps
    assert [w["cluster"] for w in got_split] == [1] * len(steps)
    assert [w["at_once"] for w in got_split] == [264] * len(steps)
    assert [w["waves"] for w in got_split] == pytest.approx(
        [s.grid[0] / 264 for s in steps])
    (w,) = got_cluster
    (step,) = clusters.plan.steps
    assert (w["cluster"], w["at_once"]) == (4, 3)
    assert w["waves"] == pytest.approx(step.grid[0] / 4 / 3)
