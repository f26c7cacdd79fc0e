"""Tests of kfuse.runtime that need no GPU: plan.json round trip and validation, argument
checking, kernelParams packing, DLPack parsing, and the no-GPU DeviceError."""

import copy
import ctypes
import json
import os
import struct
import sys
import types

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

import kfuse.runtime as rt  # noqa: E402
from kfuse import dtypes  # noqa: E402
from kfuse.errors import ArtifactError, CallError, DeviceError, KfuseError  # noqa: E402
from kfuse.runtime import dlpack  # noqa: E402
from kfuse.runtime.cuda import ParamPack, stream_handle  # noqa: E402
from kfuse.runtime.plan import (BufferArg, CopyStep, LaunchPlan, LaunchStep,  # noqa: E402
                                ScalarArg)

N = 64

EXAMPLE = {
    "format": "kfuse-plan", "version": 1,
    "name": "softplus", "target": "cuda", "chip": "sm_90",
    "ptx": "kernels.ptx",
    "inputs": [{"name": "x", "shape": [N], "dtype": "f32"}],
    "outputs": [{"name": "y", "shape": [N], "dtype": "f32"}],
    "buffers": [
        {"kind": "input", "index": 0, "shape": [N], "dtype": "f32"},
        {"kind": "output", "index": 0, "shape": [N], "dtype": "f32"},
        {"kind": "temp", "shape": [1024], "dtype": "f32"},
    ],
    "steps": [
        {"op": "launch", "kernel": "softplus_kernel", "grid": [528, 1, 1], "block": [256, 1, 1],
         "smem": 0, "args": [{"buffer": 0}, {"buffer": 1}, {"scalar": 42, "type": "i64"}],
         "align": 16},
        {"op": "copy", "src": 0, "dst": 1},
    ],
}

TWO_IN = {
    "format": "kfuse-plan", "version": 1, "name": "axpb", "target": "cuda", "chip": "sm_80",
    "ptx": "kernels.ptx",
    "inputs": [{"name": "a", "shape": [2, 3], "dtype": "f16"},
               {"name": "b", "shape": [2, 3], "dtype": "f16"}],
    "outputs": [{"name": "o", "shape": [2, 3], "dtype": "f16"}],
    "buffers": [{"kind": "input", "index": 1, "shape": [2, 3], "dtype": "f16"},
                {"kind": "output", "index": 0, "shape": [2, 3], "dtype": "f16"},
                {"kind": "input", "index": 0, "shape": [2, 3], "dtype": "f16"}],
    "steps": [{"op": "launch", "kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1],
               "args": [{"buffer": 2}, {"buffer": 0}, {"buffer": 1},
                        {"scalar": 1.5, "type": "f32"}, {"scalar": -7, "type": "i32"},
                        {"scalar": 2.25, "type": "f64"}, {"scalar": 6, "type": "index"}]}],
}


def example():
    return copy.deepcopy(EXAMPLE)


def write_program(tmp_path, plan=None, ptx=".version 8.0\n.target sm_90\n.address_size 64\n"):
    d = tmp_path / "prog"
    d.mkdir(exist_ok=True)
    (d / "plan.json").write_text(json.dumps(plan or example()))
    if ptx is not None:
        (d / "kernels.ptx").write_text(ptx)
    return d


# ------------------------------------------------------------------ plan round trip

def test_plan_parses_example():
    p = LaunchPlan.from_json(json.dumps(EXAMPLE))
    assert p.name == "softplus" and p.target == "cuda" and p.chip == "sm_90"
    assert p.inputs[0].name == "x" and p.inputs[0].shape == (N,) and p.inputs[0].dtype is dtypes.F32
    assert p.buffers[2].kind == "temp" and p.buffers[2].index is None
    assert p.buffers[2].nbytes == 4096
    launch, cp = p.steps
    assert isinstance(launch, LaunchStep) and isinstance(cp, CopyStep)
    assert launch.grid == (528, 1, 1) and launch.block == (256, 1, 1) and launch.align == 16
    assert launch.args == (BufferArg(0), BufferArg(1), ScalarArg(42, "i64"))
    assert p.kernels == ("softplus_kernel",)
    assert p.buffer_label(0) == "input 'x'" and p.buffer_label(1) == "output 'y'"
    assert "softplus(x: f32[64]) -> (y: f32[64])" == p.signature()


@pytest.mark.parametrize("data", [EXAMPLE, TWO_IN])
def test_plan_round_trip(data):
    p = LaunchPlan.from_json(data)
    d = p.to_dict()
    expected = copy.deepcopy(data)
    for s in expected["steps"]:                     # defaults are written out
        if s["op"] == "launch":
            s.setdefault("smem", 0)
            s.setdefault("align", 1)
    assert d == expected
    assert LaunchPlan.from_json(p.to_json()) == p
    # f32 scalars keep their value, ints stay ints
    assert json.loads(p.to_json()) == expected


def test_plan_round_trip_of_a_programmatic_launch():
    data = example()
    second = copy.deepcopy(data["steps"][0])
    second["programmatic"] = True
    data["steps"].insert(1, second)
    p = LaunchPlan.from_json(data)
    assert [getattr(s, "programmatic", None) for s in p.steps] == [False, True, None]
    d = p.to_dict()
    assert "programmatic" not in d["steps"][0] and d["steps"][1]["programmatic"] is True
    assert LaunchPlan.from_json(p.to_json()) == p


def test_plan_keeps_unknown_top_level_keys():
    data = example()
    data["report"] = {"fused": 3}
    p = LaunchPlan.from_json(data)
    assert p.extra == {"report": {"fused": 3}}
    assert p.to_dict()["report"] == {"fused": 3}


def test_plan_save_load(tmp_path):
    p = LaunchPlan.from_json(EXAMPLE)
    d = tmp_path / "out"
    path = p.save(d)
    assert os.path.basename(path) == "plan.json"
    (d / "kernels.ptx").write_text("// ptx")
    assert LaunchPlan.load(d) == p
    assert LaunchPlan.load(d / "plan.json") == p       # the file itself works too
    assert LaunchPlan.load(str(d)) == p


def test_cpu_plan_needs_no_chip_or_ptx():
    data = example()
    data["target"] = "cpu"
    del data["chip"], data["ptx"]
    data["library"] = "program.so"
    p = LaunchPlan.from_json(data)
    assert p.chip is None and p.ptx is None and p.extra == {"library": "program.so"}
    assert "chip" not in p.to_dict() and "ptx" not in p.to_dict()


# ------------------------------------------------------------------ plan validation

def _set(path, value):
    def mutate(d):
        *head, last = path
        for k in head:
            d = d[k]
        d[last] = value
    return mutate


def _del(path):
    def mutate(d):
        *head, last = path
        for k in head:
            d = d[k]
        del d[last]
    return mutate


INVALID = [
    ("format", _set(["format"], "onnx"), "format"),
    ("format-missing", _del(["format"]), "format: missing field"),
    ("version", _set(["version"], 2), "version"),
    ("version-str", _set(["version"], "1"), "version"),
    ("version-bool", _set(["version"], True), "version"),
    ("name", _del(["name"]), "name: missing field"),
    ("name-empty", _set(["name"], ""), "name"),
    ("target", _set(["target"], "rocm"), "target"),
    ("chip", _del(["chip"]), "chip: missing field"),
    ("ptx", _del(["ptx"]), "ptx: missing field"),
    ("ptx-escape", _set(["ptx"], "../x.ptx"), "ptx"),
    ("inputs-type", _set(["inputs"], {}), "inputs: expected a list"),
    ("input-name", _del(["inputs", 0, "name"]), "inputs[0].name: missing field"),
    ("input-dtype", _set(["inputs", 0, "dtype"], "f8"), "inputs[0].dtype: unknown dtype 'f8'"),
    ("input-shape", _set(["inputs", 0, "shape"], [-1]), "inputs[0].shape[0]"),
    ("input-shape-float", _set(["inputs", 0, "shape"], [2.0]), "inputs[0].shape[0]"),
    ("output-dtype", _set(["outputs", 0, "dtype"], "float32"), "outputs[0].dtype"),
    ("buffers-missing", _del(["buffers"]), "buffers: missing field"),
    ("buffer-kind", _set(["buffers", 2, "kind"], "scratch"), "buffers[2].kind"),
    ("buffer-index", _set(["buffers", 0, "index"], 1), "buffers[0].index: input index 1 out of range"),
    ("buffer-index-missing", _del(["buffers", 1, "index"]), "buffers[1].index: missing field"),
    ("buffer-index-neg", _set(["buffers", 1, "index"], -1), "buffers[1].index"),
    ("temp-index", _set(["buffers", 2, "index"], 0), "buffers[2].index"),
    ("buffer-dtype", _set(["buffers", 2, "dtype"], "u8"), "buffers[2].dtype"),
    ("buffer-shape-mismatch", _set(["buffers", 1, "shape"], [N + 1]), "buffers[1].shape"),
    ("buffer-dtype-mismatch", _set(["buffers", 0, "dtype"], "f16"), "buffers[0].dtype"),
    ("output-unbound", _del(["buffers", 1]), "buffers: no buffer for output 0 ('y')"),
    ("steps-missing", _del(["steps"]), "steps: missing field"),
    ("op", _set(["steps", 1, "op"], "memset"), "steps[1].op: unknown step op 'memset'"),
    ("kernel", _del(["steps", 0, "kernel"]), "steps[0].kernel: missing field"),
    ("grid", _set(["steps", 0, "grid"], [528, 1]), "steps[0].grid"),
    ("grid-zero", _set(["steps", 0, "grid"], [0, 1, 1]), "steps[0].grid[0]"),
    ("block-too-big", _set(["steps", 0, "block"], [1024, 2, 1]), "steps[0].block"),
    ("smem", _set(["steps", 0, "smem"], -4), "steps[0].smem"),
    ("align", _set(["steps", 0, "align"], 12), "steps[0].align: must be a power of two"),
    ("programmatic", _set(["steps", 0, "programmatic"], 1), "steps[0].programmatic: expected "
                                                            "true or false"),
    # (step 0 is the first launch, step 1 a copy: neither follows a launch)
    ("programmatic-first", _set(["steps", 0, "programmatic"], True),
     "steps[0].programmatic: a programmatic launch must directly follow another launch"),
    ("args", _set(["steps", 0, "args"], None), "steps[0].args"),
    ("arg-buffer", _set(["steps", 0, "args", 1], {"buffer": 3}), "steps[0].args[1].buffer"),
    ("arg-kind", _set(["steps", 0, "args", 1], {"ptr": 3}), "steps[0].args[1]"),
    ("scalar-type", _set(["steps", 0, "args", 2, "type"], "u8"), "steps[0].args[2].type"),
    ("scalar-type-missing", _del(["steps", 0, "args", 2, "type"]), "steps[0].args[2].type: missing"),
    ("scalar-i32-range", _set(["steps", 0, "args", 2], {"scalar": 1 << 31, "type": "i32"}),
     "steps[0].args[2].scalar"),
    ("scalar-int-float", _set(["steps", 0, "args", 2], {"scalar": 1.5, "type": "i64"}),
     "steps[0].args[2].scalar"),
    ("scalar-float-str", _set(["steps", 0, "args", 2], {"scalar": "1", "type": "f32"}),
     "steps[0].args[2].scalar"),
    ("copy-src", _set(["steps", 1, "src"], 7), "steps[1].src: buffer index 7 out of range"),
    ("copy-dst-input", _set(["steps", 1], {"op": "copy", "src": 1, "dst": 0}), "steps[1].dst"),
    ("copy-too-small", _set(["steps", 1], {"op": "copy", "src": 2, "dst": 1}), "steps[1].dst"),
]


@pytest.mark.parametrize("mutate,match", [(m, s) for _, m, s in INVALID],
                         ids=[i for i, _, _ in INVALID])
def test_plan_validation(mutate, match):
    data = example()
    mutate(data)
    with pytest.raises(ArtifactError) as e:
        LaunchPlan.from_json(data)
    assert match in str(e.value)
    assert isinstance(e.value, KfuseError)


def test_plan_duplicate_bindings():
    data = example()
    data["buffers"].append({"kind": "input", "index": 0, "shape": [N], "dtype": "f32"})
    with pytest.raises(ArtifactError, match=r"buffers\[3\].index: input 0 is already buffer 0"):
        LaunchPlan.from_json(data)
    data = example()
    data["inputs"].append({"name": "x", "shape": [N], "dtype": "f32"})
    with pytest.raises(ArtifactError, match=r"inputs\[1\].name: duplicate name 'x'"):
        LaunchPlan.from_json(data)


def test_randomly_damaged_plans_are_refused_or_valid():
    # Any field of the example plan deleted, duplicated or given another
    # value of another type (1 to 3 such changes a plan): the parser either
    # accepts the plan, which then round-trips, or names the field in an
    # ArtifactError; no other exception escapes it.
    import random
    values = [None, -1, 0, 1, 2 ** 31, 2 ** 64, 1.5, float("nan"), "", "x", "f64", "i1",
              "output", "temp", "launch", "copy", [], [0], [-1, 2], {}, {"buffer": 0}, True]

    def paths(v, at):
        yield at
        children = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, c in children:
            yield from paths(c, at + [k])

    rng = random.Random(4)
    refused = 0
    for _ in range(400):
        data = example()
        for _ in range(rng.randint(1, 3)):
            *head, last = rng.choice(list(paths(data, []))[1:])
            parent = data
            for k in head:
                parent = parent[k]
            r = rng.random()
            if r < 0.2:
                del parent[last]
            elif r < 0.3 and isinstance(parent, list):
                parent.append(copy.deepcopy(parent[last]))
            else:
                parent[last] = copy.deepcopy(rng.choice(values))
        try:
            plan = LaunchPlan.from_json(json.dumps(data))
        except ArtifactError as e:
            assert str(e).startswith("invalid plan: ")
            refused += 1
            continue
        assert LaunchPlan.from_json(plan.to_json()).to_json() == plan.to_json()
    assert 300 < refused < 400

def test_plan_not_json():
    with pytest.raises(ArtifactError, match="not valid JSON"):
        LaunchPlan.from_json("{nope")
    with pytest.raises(ArtifactError, match="expected a JSON object"):
        LaunchPlan.from_json("[1, 2]")


def test_load_errors(tmp_path):
    with pytest.raises(ArtifactError, match="no such program directory"):
        LaunchPlan.load(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArtifactError, match="missing plan.json"):
        rt.load(tmp_path / "empty")
    d = write_program(tmp_path, ptx=None)
    with pytest.raises(ArtifactError, match="ptx: file 'kernels.ptx' is missing"):
        rt.load(d)
    data = example()
    data["version"] = 7
    d = write_program(tmp_path, data)
    with pytest.raises(ArtifactError, match=r"plan.json: invalid plan: version"):
        rt.load(d)


# ------------------------------------------------------------------ argument checking

def test_check_call_ok():
    p = LaunchPlan.from_json(EXAMPLE)
    p.check_call([np.zeros(N, np.float32)])
    p.check_outputs([np.zeros(N, np.float32)])


def test_check_call_count():
    p = LaunchPlan.from_json(EXAMPLE)
    x = np.zeros(N, np.float32)
    with pytest.raises(CallError, match=r"^softplus takes 1 input \(x\) but got 2$"):
        p.check_call([x, x])
    with pytest.raises(CallError, match=r"^softplus takes 1 input \(x\) but got 0$"):
        p.check_call([])
    p2 = LaunchPlan.from_json(TWO_IN)
    with pytest.raises(CallError, match=r"^axpb takes 2 inputs \(a, b\) but got 1$"):
        p2.check_call([x])
    with pytest.raises(CallError, match=r"takes 1 output \(o\)"):
        p2.check_outputs([x, x])


def test_check_call_shape_and_dtype():
    p = LaunchPlan.from_json(EXAMPLE)
    with pytest.raises(CallError, match=r"input 'x' has shape \(3,\) but the program "
                                        r"'softplus' was compiled for \(64,\)"):
        p.check_call([np.zeros(3, np.float32)])
    with pytest.raises(CallError, match=r"input 'x' has dtype float16 but .* compiled for f32"):
        p.check_call([np.zeros(N, np.float16)])
    with pytest.raises(CallError, match=r"input 'x' has dtype uint8 but"):
        p.check_call([np.zeros(N, np.uint8)])
    with pytest.raises(CallError, match=r"output 'y' has dtype float64"):
        p.check_outputs([np.zeros(N, np.float64)])
    with pytest.raises(CallError, match="expected an array"):
        p.check_call([[1.0] * N])


def test_check_call_custom_describe():
    """The CPU target passes its own describe(arg) -> (shape, dtype)."""
    p = LaunchPlan.from_json(TWO_IN)
    ok = [((2, 3), dtypes.F16), ((2, 3), "float16")]
    p.check_call(ok, describe=lambda a: a)
    with pytest.raises(CallError, match="input 'b' has dtype bf16"):
        p.check_call([((2, 3), dtypes.F16), ((2, 3), dtypes.BF16)], describe=lambda a: a)
    with pytest.raises(CallError, match=r"input 'a' has shape \(3, 2\)"):
        p.check_call([((3, 2), dtypes.F16), ((2, 3), dtypes.F16)], describe=lambda a: a)


# ------------------------------------------------------------------ kernelParams packing

def test_param_pack_layout():
    p = LaunchPlan.from_json(TWO_IN)
    pack = ParamPack(p.steps[0].args)
    assert pack.nargs == 7 and isinstance(pack.address, int) and pack.address
    pack.fill([0x1000, 0x2000, 0xDEADBEEF00])
    # kernelParams is a void*[7]; each entry points at the bytes of one parameter
    arr = (ctypes.c_void_p * 7).from_address(pack.address)
    vals = [ctypes.string_at(arr[i], 8) for i in range(7)]
    assert vals == [pack.slot_bytes(i) for i in range(7)]
    assert struct.unpack("<Q", vals[0])[0] == 0xDEADBEEF00      # buffer 2 (input a)
    assert struct.unpack("<Q", vals[1])[0] == 0x1000            # buffer 0 (input b)
    assert struct.unpack("<Q", vals[2])[0] == 0x2000            # buffer 1 (output o)
    assert struct.unpack("<f", vals[3][:4])[0] == 1.5
    assert struct.unpack("<i", vals[4][:4])[0] == -7
    assert struct.unpack("<d", vals[5])[0] == 2.25
    assert struct.unpack("<q", vals[6])[0] == 6
    # refilling changes only the pointers
    pack.fill([1, 2, 3])
    assert [struct.unpack("<Q", pack.slot_bytes(i))[0] for i in range(3)] == [3, 1, 2]
    assert struct.unpack("<f", pack.slot_bytes(3)[:4])[0] == 1.5


def test_param_pack_no_args():
    assert ParamPack(()).address is None


def test_stream_handle():
    assert stream_handle(0) == 0 and stream_handle(1234) == 1234
    assert stream_handle(types.SimpleNamespace(cuda_stream=77)) == 77   # torch
    assert stream_handle(types.SimpleNamespace(ptr=88)) == 88           # cupy
    with pytest.raises(CallError):
        stream_handle("s")
    with pytest.raises(CallError):
        stream_handle(True)


def test_cuda_bindings_accepts_int_kernel_params():
    """cuLaunchKernel hands kernelParams to cuda.bindings' _HelperKernelParams, which takes
    an int as a ready void** (no GPU is needed to build one)."""
    cu = pytest.importorskip("cuda.bindings.driver")
    helper = getattr(cu, "_HelperKernelParams", None)
    if helper is None:
        pytest.skip("cuda-bindings' _HelperKernelParams is not reachable in this version")
    pack = ParamPack(LaunchPlan.from_json(EXAMPLE).steps[0].args)
    helper(pack.address)
    helper(None)                                    # ParamPack(()).address
    with pytest.raises(TypeError):
        helper("not a pointer")


# ------------------------------------------------------------------ DLPack

def test_dltensor_layout():
    assert ctypes.sizeof(dlpack.DLTensor) == 48
    assert dlpack.DLTensor.shape.offset == 24 and dlpack.DLTensor.byte_offset.offset == 40
    assert ctypes.sizeof(dlpack.DLManagedTensor) == 64


@pytest.mark.parametrize("dt", ["float32", "float16", "float64", "int32", "int64", "bool"])
def test_dlpack_numpy(dt):
    a = np.arange(24).reshape(2, 3, 4).astype(dt)
    info = dlpack.parse_capsule(a.__dlpack__())
    assert info.ptr == a.ctypes.data
    assert info.shape == (2, 3, 4)
    assert info.dtype is dtypes.get(dt)
    assert info.device_type == dlpack.kDLCPU and not info.is_cuda
    assert info.contiguous
    assert info.numel == 24


def test_dlpack_views():
    a = np.arange(48, dtype=np.float32).reshape(4, 12)
    v = a[1:, 2:]                                   # offset, non-contiguous rows
    info = dlpack.inspect(v)
    assert info.ptr == v.ctypes.data == a.ctypes.data + (12 + 2) * 4
    assert info.shape == (3, 10) and info.strides == (12, 1) and not info.contiguous
    t = a.T
    assert not dlpack.inspect(t).contiguous
    row = a[2]                                      # contiguous view with an offset
    info = dlpack.inspect(row)
    assert info.contiguous and info.ptr == a.ctypes.data + 24 * 4
    s = dlpack.inspect(np.array(5.0))
    assert s.shape == () and s.contiguous
    one = np.zeros((3, 1), np.float32)[:, :]        # size-1 dims ignore strides
    assert dlpack.is_c_contiguous((3, 1), (1, 7))
    assert dlpack.inspect(one).contiguous


def test_dlpack_capsule_not_consumed():
    a = np.arange(4, dtype=np.float32)
    cap = a.__dlpack__()
    info = dlpack.parse_capsule(cap)
    assert info.keepalive is cap
    dlpack.parse_capsule(cap)                       # still named "dltensor": readable again
    b = np.from_dlpack(types.SimpleNamespace(__dlpack__=lambda **k: cap,
                                             __dlpack_device__=lambda: (1, 0)))
    assert b.ctypes.data == a.ctypes.data
    with pytest.raises(dlpack.DLPackError):         # consumed by numpy: refused
        dlpack.parse_capsule(cap)
    with pytest.raises(dlpack.DLPackError):
        dlpack.parse_capsule(object())


class _FakeCudaArray:
    """Looks like a CUDA DLPack producer; records the stream it is asked to sync with."""

    def __init__(self, arr):
        self.arr = arr
        self.streams = []

    def __dlpack_device__(self):
        return (dlpack.kDLCUDA, 0)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.arr.__dlpack__()


def test_dlpack_stream_argument():
    f = _FakeCudaArray(np.zeros(3, np.float32))
    dlpack.inspect(f, 0)
    dlpack.inspect(f, 12345)
    dlpack.inspect(f, None)
    assert f.streams == [1, 12345, None]          # handle 0 (legacy default) is spelled 1
    assert dlpack.dlpack_stream_arg(2) == 2


def test_cuda_array_interface():
    class CAI:
        __cuda_array_interface__ = {"shape": (2, 3), "typestr": "<f4", "data": (4096, False),
                                    "version": 3, "strides": None, "stream": 7}
    info = dlpack.inspect(CAI())
    assert info.ptr == 4096 and info.shape == (2, 3) and info.dtype is dtypes.F32
    assert info.contiguous and info.stream == 7 and info.is_cuda and info.source == "cai"

    class Strided:
        __cuda_array_interface__ = {"shape": (2, 3), "typestr": "<i8", "data": (64, False),
                                    "version": 2, "strides": (8, 16)}
    info = dlpack.inspect(Strided())
    assert info.dtype is dtypes.I64 and info.strides == (1, 2) and not info.contiguous

    class Half:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f2", "data": (0, False),
                                    "version": 2, "strides": (2,)}
    info = dlpack.inspect(Half())
    assert info.dtype is dtypes.F16 and info.contiguous

    with pytest.raises(dlpack.DLPackError):
        dlpack.inspect(object())


# ------------------------------------------------------------------ no GPU

def test_cuda_available_never_raises():
    assert rt.cuda_available() in (True, False)


@pytest.mark.skipif(rt.cuda_available(), reason="this machine has a CUDA device")
def test_no_gpu_device_error(tmp_path):
    d = write_program(tmp_path)
    exe = rt.load(d)                                # loading touches no driver
    assert isinstance(exe, rt.CudaExecutable) and exe.name == "softplus"
    with pytest.raises(DeviceError) as e:
        exe(np.zeros(N, np.float32))
    msg = str(e.value)
    assert msg.startswith("no CUDA device") and "target='cpu'" in msg
    with pytest.raises(DeviceError, match="no CUDA device"):  # and again, same answer
        exe(np.zeros(N, np.float32))
    with pytest.raises(DeviceError, match="no CUDA device"):
        exe.warmup()
    assert isinstance(e.value, RuntimeError)


def test_plan_built_in_python_is_validated():
    p = LaunchPlan.from_json(EXAMPLE)
    assert p.validate() is p
    bad = LaunchPlan(name="p", target="cuda", chip="sm_90", ptx="kernels.ptx",
                     inputs=p.inputs, outputs=p.outputs, buffers=p.buffers,
                     steps=(LaunchStep("k", (1, 1, 1), (32, 1, 1),
                                       (BufferArg(0), ScalarArg(1.0, "f16"))),))
    with pytest.raises(ArtifactError, match=r"steps\[0\].args\[1\].type"):
        bad.validate()
    with pytest.raises(ArtifactError, match="f16"):
        rt.CudaExecutable(bad, "")


def test_executable_rejects_other_targets():
    data = example()
    data["target"] = "cpu"
    with pytest.raises(DeviceError, match="target 'cpu'"):
        rt.CudaExecutable(LaunchPlan.from_json(data), "")


def test_runtime_works_without_mlir():
    """The GPU machine has no MLIR: with `mlir` unimportable, kfuse.runtime still imports
    (and does not load the CUDA driver bindings at import time either)."""
    import subprocess
    code = ("import sys; sys.modules['mlir'] = None; sys.path.insert(0, %r); "
            "import kfuse.runtime, kfuse.runtime.cuda, kfuse.runtime.dlpack, "
            "kfuse.runtime.plan; "
            "bad = [m for m in sys.modules if m.startswith('mlir.')]; assert not bad, bad; "
            "assert 'cuda.bindings.driver' not in sys.modules; print('ok')"
            % os.path.join(os.path.dirname(__file__), "..", "..", "python"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_runtime_sources_do_not_import_mlir():
    import re
    src = os.path.dirname(rt.__file__)
    for f in sorted(os.listdir(src)):
        if f.endswith(".py"):
            text = open(os.path.join(src, f)).read()
            assert not re.search(r"^\s*(from|import)\s+mlir\b", text, re.M), f


# ------------------------------------------------------------------ load() dispatch

def _cpu_program(tmp_path):
    data = example()
    data["target"] = "cpu"
    del data["chip"], data["ptx"]
    return write_program(tmp_path, data, ptx=None)


def test_load_cpu_without_compiler(tmp_path, monkeypatch):
    d = _cpu_program(tmp_path)
    monkeypatch.setitem(sys.modules, "kfuse.targets.cpu", None)   # import fails
    with pytest.raises(ArtifactError, match="target 'cpu', which needs the kfuse compiler"):
        rt.load(d)


def test_load_cpu_dispatch(tmp_path, monkeypatch):
    d = _cpu_program(tmp_path)
    seen = {}
    fake = types.ModuleType("kfuse.targets.cpu")

    def load_cpu_executable(plan_dir, plan):
        seen["args"] = (plan_dir, plan)
        return "cpu-exe"
    fake.load_cpu_executable = load_cpu_executable
    monkeypatch.setitem(sys.modules, "kfuse.targets.cpu", fake)
    assert rt.load(d) == "cpu-exe"
    assert seen["args"][0] == str(d) and seen["args"][1].target == "cpu"
    with pytest.raises(KfuseError, match="device="):
        rt.load(d, device=1)
