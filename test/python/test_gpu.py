"""Runs compiled artifacts on a real GPU through kfuse.runtime.

Needs: a CUDA device, and KFUSE_GPU_ARTIFACTS naming a directory whose subdirectories are
program directories (plan.json, kernels.ptx, check.npz). check.npz holds in0, in1, ...,
expected0, expected1, ... and tol = (rtol, atol). bf16 arrays may be stored as their
uint16 bit patterns (numpy has no bfloat16). Skipped cleanly otherwise.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

import kfuse.runtime as rt  # noqa: E402
from kfuse.errors import CallError, GuardError  # noqa: E402

ARTIFACTS = os.environ.get("KFUSE_GPU_ARTIFACTS")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not rt.cuda_available(), reason="no CUDA device"),
    pytest.mark.skipif(not ARTIFACTS, reason="KFUSE_GPU_ARTIFACTS is not set"),
]


def _artifact_dirs():
    if not ARTIFACTS or not os.path.isdir(ARTIFACTS):
        return []
    return sorted(os.path.join(ARTIFACTS, d) for d in os.listdir(ARTIFACTS)
                  if os.path.isfile(os.path.join(ARTIFACTS, d, "plan.json")))


_DIRS = _artifact_dirs()


def _tuned_dirs():
    """The tuned programs' directories (kfuse.autotune: tuning.json, a saved
    program a variant, and check.npz)."""
    if not ARTIFACTS or not os.path.isdir(ARTIFACTS):
        return []
    return sorted(os.path.join(ARTIFACTS, d) for d in os.listdir(ARTIFACTS)
                  if os.path.isfile(os.path.join(ARTIFACTS, d, "tuning.json")))


_TUNED = _tuned_dirs()


@pytest.fixture(params=_DIRS or [None], ids=[os.path.basename(d) for d in _DIRS] or ["none"])
def case(request):
    d = request.param
    if d is None:
        pytest.skip(f"no program directories under KFUSE_GPU_ARTIFACTS={ARTIFACTS!r}")
    exe = rt.load(d)
    with np.load(os.path.join(d, "check.npz")) as z:
        n_in, n_out = len(exe.plan.inputs), len(exe.plan.outputs)
        ins = [z[f"in{i}"] for i in range(n_in)]
        exps = [z[f"expected{i}"] for i in range(n_out)]
        rtol, atol = (float(v) for v in z["tol"]) if "tol" in z else (1e-5, 1e-6)
    return exe, ins, exps, rtol, atol


# ---------------------------------------------------------------- helpers

def _is_bf16(spec):
    return spec.dtype.name == "bf16"


def _ml_dtypes():
    try:
        import ml_dtypes
        return ml_dtypes
    except ImportError:
        return None


def _to_f64(arr, spec):
    """Host copy of a result or expected array as float64 (bf16 bits understood)."""
    arr = np.asarray(arr)
    if _is_bf16(spec) and arr.dtype in (np.uint16, np.int16):
        return (arr.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if arr.dtype == np.bool_:
        return arr.astype(np.float64)
    return arr.astype(np.float64)


def _compare(got, exps, exe, rtol, atol):
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(exps)
    for g, e, spec in zip(got, exps, exe.plan.outputs):
        assert tuple(g.shape) == spec.shape
        if spec.dtype.name in ("i1", "i32", "i64"):  # indices, counts, masks: exact
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e),
                                          err_msg=f"output {spec.name!r} of {exe.plan.name}")
            continue
        np.testing.assert_allclose(_to_f64(g, spec), _to_f64(e, spec), rtol=rtol, atol=atol,
                                   err_msg=f"output {spec.name!r} of {exe.plan.name}")


def _numpy_input(arr, spec):
    if _is_bf16(spec) and arr.dtype == np.uint16:
        ml = _ml_dtypes()
        return None if ml is None else arr.view(ml.bfloat16)
    return arr


def _torch():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    return torch


def _torch_dtype(torch, spec):
    return getattr(torch, {"f32": "float32", "f16": "float16", "bf16": "bfloat16",
                           "f64": "float64", "i1": "bool", "i32": "int32",
                           "i64": "int64"}[spec.dtype.name])


def _torch_input(torch, arr, spec):
    if _is_bf16(spec) and arr.dtype == np.uint16:
        return torch.from_numpy(arr.view(np.int16).copy()).cuda().view(torch.bfloat16)
    # (np.ascontiguousarray would turn a 0-d array into shape (1,))
    return torch.from_numpy(np.ascontiguousarray(arr).reshape(arr.shape)).cuda()


def _torch_to_host(torch, t, spec):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).cpu().numpy().view(np.uint16)
    return t.cpu().numpy()


# ---------------------------------------------------------------- tests

def test_numpy(case):
    exe, ins, exps, rtol, atol = case
    specs = list(exe.plan.inputs) + list(exe.plan.outputs)
    if any(_is_bf16(s) for s in specs) and _ml_dtypes() is None:
        # bf16 on the host needs ml_dtypes: the runtime must refuse with a CallError
        with pytest.raises(CallError):
            exe(*ins)
        return
    np_ins = [_numpy_input(a, s) for a, s in zip(ins, exe.plan.inputs)]
    got = exe(*np_ins)
    got_t = got if isinstance(got, tuple) else (got,)
    for g in got_t:
        assert isinstance(g, np.ndarray)
    _compare(tuple(_bits(g, s) for g, s in zip(got_t, exe.plan.outputs)), exps, exe, rtol, atol)
    # out= with numpy arrays
    outs = [np.empty_like(g) for g in got_t]
    res = exe(*np_ins, out=outs if len(outs) > 1 else outs[0])
    res_t = res if isinstance(res, tuple) else (res,)
    for r, o in zip(res_t, outs):
        assert r is o
    _compare(tuple(_bits(o, s) for o, s in zip(outs, exe.plan.outputs)), exps, exe, rtol, atol)


def test_persistent_launches_fit_the_device(case):
    # A persistent launch (row_persist) runs as many of its clusters as the
    # device holds, never more than planned, in whole clusters; the results
    # are test_numpy's.
    exe = case[0]
    steps = [s for s in exe.plan.steps if s.op == "launch"]
    if not any(s.persistent for s in steps):
        pytest.skip("no persistent launch")
    for step, grid in zip(steps, exe.launch_grids()):
        if not step.persistent:
            assert grid == step.grid
            continue
        blocks = step.cluster_blocks
        assert grid[1:] == (1, 1) and grid[0] % blocks == 0
        assert 1 <= grid[0] // blocks <= step.persistent, (grid, step)
        print(f"{exe.plan.name}: {grid[0] // blocks} of {step.persistent} clusters "
              f"of {blocks} blocks")


def _bits(arr, spec):
    if _is_bf16(spec) and arr.dtype != np.uint16:
        return arr.view(np.uint16)
    return arr


def test_numpy_bf16_bits_are_rejected(case):
    exe, ins, exps, rtol, atol = case
    bf_in = [i for i, s in enumerate(exe.plan.inputs) if _is_bf16(s)]
    if not bf_in:
        pytest.skip("no bf16 input")
    # uint16 bits are not bf16: a dtype CallError naming the input
    with pytest.raises(CallError, match="uint16"):
        exe(*ins)


def test_torch_zero_copy(case):
    torch = _torch()
    exe, ins, exps, rtol, atol = case
    t_ins = [_torch_input(torch, a, s) for a, s in zip(ins, exe.plan.inputs)]
    got = exe(*t_ins)
    got_t = got if isinstance(got, tuple) else (got,)
    for g, s in zip(got_t, exe.plan.outputs):
        assert isinstance(g, torch.Tensor) and g.is_cuda and g.dtype == _torch_dtype(torch, s)
    torch.cuda.synchronize()
    _compare(tuple(_torch_to_host(torch, g, s) for g, s in zip(got_t, exe.plan.outputs)),
             exps, exe, rtol, atol)
    # the caller's device inputs are never written (zero copy: kernels see them)
    for t, a, s in zip(t_ins, ins, exe.plan.inputs):
        assert torch.equal(t, _torch_input(torch, a, s)), f"input {s.name!r} was written"

    # on a side stream made current by torch, and with out=
    side = torch.cuda.Stream()
    outs = [torch.full(s.shape, 7, dtype=_torch_dtype(torch, s), device="cuda")
            for s in exe.plan.outputs]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        res = exe(*t_ins, out=outs)
    res_t = res if isinstance(res, tuple) else (res,)
    assert all(r is o for r, o in zip(res_t, outs))
    side.synchronize()
    _compare(tuple(_torch_to_host(torch, o, s) for o, s in zip(outs, exe.plan.outputs)),
             exps, exe, rtol, atol)
    # out= aliasing an input of the same shape and dtype is refused before any launch
    same = [t for t in t_ins if t.shape == outs[0].shape and t.dtype == outs[0].dtype]
    if same:
        with pytest.raises(CallError, match="shares memory with input"):
            exe(*t_ins, out=[same[0]] + outs[1:])

    # explicit stream= (a torch stream object and a raw int handle)
    for st in (side, side.cuda_stream):
        res = exe(*t_ins, stream=st)
        side.synchronize()
        res_t = res if isinstance(res, tuple) else (res,)
        _compare(tuple(_torch_to_host(torch, r, s) for r, s in zip(res_t, exe.plan.outputs)),
                 exps, exe, rtol, atol)


def test_explicit_stream_waits_for_torch_stream(case):
    """stream= other than torch's current stream: the launch must wait for work torch queued
    on its current stream (the inputs are written there just before the call)."""
    torch = _torch()
    exe, ins, exps, rtol, atol = case
    srcs = [_torch_input(torch, a, s) for a, s in zip(ins, exe.plan.inputs)]
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    dsts = [torch.zeros_like(t) for t in srcs]
    torch.cuda.synchronize()
    torch.cuda._sleep(20_000_000)                  # keep the current stream busy
    for d, t in zip(dsts, srcs):
        d.copy_(t)
    got = exe(*dsts, stream=side)
    torch.cuda.synchronize()
    got_t = got if isinstance(got, tuple) else (got,)
    _compare(tuple(_torch_to_host(torch, g, s) for g, s in zip(got_t, exe.plan.outputs)),
             exps, exe, rtol, atol)


def test_torch_many_calls_async(case):
    """Back-to-back calls without synchronising: results stay correct (no reuse races).
    Plans with programmatic launches (a kernel started before the one it follows ends)
    have every call checked: a kernel reading before its wait would show in some."""
    torch = _torch()
    exe, ins, exps, rtol, atol = case
    t_ins = [_torch_input(torch, a, s) for a, s in zip(ins, exe.plan.inputs)]
    results = [exe(*t_ins) for _ in range(20)]
    torch.cuda.synchronize()
    early = any(getattr(st, "programmatic", False) for st in exe.plan.steps)
    for got in (results if early else results[::7]):
        got_t = got if isinstance(got, tuple) else (got,)
        _compare(tuple(_torch_to_host(torch, g, s) for g, s in zip(got_t, exe.plan.outputs)),
                 exps, exe, rtol, atol)


def test_out_of_range_indices_raise_guard_error(case):
    """A program with guarded gathers (token ids, labels): an integer input set to an
    index past every table raises GuardError naming guards of the plan, on numpy
    arrays (the call waits) and on torch tensors (check_guards waits); the status
    words are zeroed after it, so a good call then passes and is right."""
    exe, ins, exps, rtol, atol = case
    if not exe.plan.guards:
        pytest.skip("no guarded gather")
    raised = []
    for i, spec in enumerate(exe.plan.inputs):
        if spec.dtype.name not in ("i32", "i64"):
            continue
        bad = list(ins)
        bad[i] = np.full_like(ins[i], 1 << 30)
        try:
            exe(*bad)
        except GuardError as e:
            assert e.failed and set(e.failed) <= set(exe.plan.guards)
            raised.append(i)
    assert raised, "no integer input reaches a guarded gather"
    np_ins = [_numpy_input(a, s) for a, s in zip(ins, exe.plan.inputs)]
    got = exe(*np_ins)
    _compare(tuple(_bits(g, s) for g, s in zip(got if isinstance(got, tuple) else (got,),
                                               exe.plan.outputs)), exps, exe, rtol, atol)
    torch = _torch()
    bad = list(ins)
    bad[raised[0]] = np.full_like(ins[raised[0]], -1)
    t_bad = [_torch_input(torch, a, s) for a, s in zip(bad, exe.plan.inputs)]
    exe(*t_bad)                                  # (returns before its kernels end)
    with pytest.raises(GuardError):
        exe.check_guards(torch.cuda.current_stream().cuda_stream)
    exe.check_guards(torch.cuda.current_stream().cuda_stream)  # (zeroed)
    # without check_guards: the status words come back behind the kernels, and
    # a later call reports them once they have (here: after torch waited; the
    # event asked at every call, not once a millisecond)
    t_good = [_torch_input(torch, a, s) for a, s in zip(ins, exe.plan.inputs)]
    exe.GUARD_POLL_INTERVAL = 0
    try:
        exe(*t_bad)
        torch.cuda.synchronize()
        with pytest.raises(GuardError, match="in a call before this one"):
            exe(*t_good)
        exe(*t_good)                             # (zeroed: runs)
        exe.check_guards(torch.cuda.current_stream().cuda_stream)
    finally:
        del exe.GUARD_POLL_INTERVAL


def test_cupy(case):
    try:
        import cupy
    except ImportError:
        pytest.skip("cupy is not installed")
    exe, ins, exps, rtol, atol = case
    if any(_is_bf16(s) for s in list(exe.plan.inputs) + list(exe.plan.outputs)):
        pytest.skip("cupy has no bfloat16")
    c_ins = [cupy.asarray(a) for a in ins]
    got = exe(*c_ins)
    got_t = got if isinstance(got, tuple) else (got,)
    for g in got_t:
        assert isinstance(g, cupy.ndarray)
    cupy.cuda.get_current_stream().synchronize()
    _compare(tuple(cupy.asnumpy(g) for g in got_t), exps, exe, rtol, atol)


def _offset_view(torch, t):
    """Same values as ``t``, but starting one element into a larger allocation."""
    base = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
    v = base[1:].view(t.shape)
    v.copy_(t)
    assert v.storage_offset() == 1
    return v


def test_misaligned_input(case):
    torch = _torch()
    exe, ins, exps, rtol, atol = case
    t_ins = [_torch_input(torch, a, s) for a, s in zip(ins, exe.plan.inputs)]
    plan = exe.plan
    for i, spec in enumerate(plan.inputs):
        if spec.numel == 0:
            continue
        buf = next(b for b, bs in enumerate(plan.buffers)
                   if bs.kind == "input" and bs.index == i)
        align = max([s.align for s in plan.steps if s.op == "launch"
                     and any(getattr(a, "buffer", None) == buf for a in s.args)] or [1])
        args = list(t_ins)
        args[i] = _offset_view(torch, t_ins[i])
        if args[i].data_ptr() % align:
            with pytest.raises(CallError, match=f"input '{spec.name}'.*{align}-byte"):
                exe(*args)
        else:
            # the kernel does not need more alignment: the view must just work
            got = exe(*args)
            torch.cuda.synchronize()
            got_t = got if isinstance(got, tuple) else (got,)
            _compare(tuple(_torch_to_host(torch, g, s) for g, s in zip(got_t, plan.outputs)),
                     exps, exe, rtol, atol)


def test_f32_offset_view_of_vectorized_kernel(case):
    """The brief's case: an f32 view with storage offset 1 into a 16-byte-aligned kernel."""
    torch = _torch()
    exe, ins, exps, rtol, atol = case
    plan = exe.plan
    vec_bufs = {a.buffer for s in plan.steps if s.op == "launch" and s.align >= 8
                for a in s.args if hasattr(a, "buffer")}
    # an f32 input that a vectorized launch reads (inputs only scalar kernels read take
    # any 4-byte aligned view: test_misaligned_input runs those)
    f32 = [i for i, s in enumerate(plan.inputs) if s.dtype.name == "f32" and s.numel
           and any(b.kind == "input" and b.index == i and n in vec_bufs
                   for n, b in enumerate(plan.buffers))]
    if not f32:
        pytest.skip("no f32 input of a vectorized launch")
    t_ins = [_torch_input(torch, a, s) for a, s in zip(ins, plan.inputs)]
    i = f32[0]
    t_ins[i] = _offset_view(torch, t_ins[i])
    with pytest.raises(CallError, match=plan.inputs[i].name):
        exe(*t_ins)


def test_wrong_shape_and_dtype(case):
    exe, ins, exps, rtol, atol = case
    spec = exe.plan.inputs[0] if exe.plan.inputs else None
    if spec is None:
        pytest.skip("program has no inputs")
    bad = list(ins)
    bad[0] = np.zeros(spec.shape + (2,), dtype=ins[0].dtype)
    with pytest.raises(CallError, match="shape"):
        exe(*bad)
    bad[0] = np.zeros(spec.shape, dtype=np.int8)
    with pytest.raises(CallError, match="dtype (int8|i8)"):
        exe(*bad)
    with pytest.raises(CallError, match="takes"):
        exe(*ins, ins[0])
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        t = torch.zeros(spec.shape + (2,), device="cuda", dtype=_torch_dtype(torch, spec))
        with pytest.raises(CallError, match="shape"):
            exe(*([t] + [_torch_input(torch, a, s)
                         for a, s in zip(ins[1:], exe.plan.inputs[1:])]))


def test_non_contiguous_torch_input(case):
    torch = _torch()
    exe, ins, exps, rtol, atol = case
    spec = exe.plan.inputs[0] if exe.plan.inputs else None
    if spec is None or spec.numel < 2:
        pytest.skip("needs an input with 2+ elements")
    shape = spec.shape[:-1] + (spec.shape[-1] * 2,)
    big = torch.zeros(shape, device="cuda", dtype=_torch_dtype(torch, spec))
    strided = big[..., ::2]
    if strided.is_contiguous():
        pytest.skip("cannot build a non-contiguous view of this shape")
    args = [strided] + [_torch_input(torch, a, s)
                        for a, s in zip(ins[1:], exe.plan.inputs[1:])]
    with pytest.raises(CallError, match="contiguous"):
        exe(*args)


def test_call_from_a_new_thread(case):
    """A fresh thread has no current CUDA context: the runtime makes the primary one current."""
    import threading
    exe, ins, exps, rtol, atol = case
    if any(_is_bf16(s) for s in list(exe.plan.inputs) + list(exe.plan.outputs)) \
            and _ml_dtypes() is None:
        pytest.skip("bf16 on the host needs ml_dtypes")
    np_ins = [_numpy_input(a, s) for a, s in zip(ins, exe.plan.inputs)]
    box = {}

    def work():
        try:
            box["out"] = exe(*np_ins)
        except BaseException as e:  # noqa: BLE001
            box["err"] = e
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert "err" not in box, box.get("err")
    got = box["out"] if isinstance(box["out"], tuple) else (box["out"],)
    _compare(tuple(_bits(g, s) for g, s in zip(got, exe.plan.outputs)), exps, exe, rtol, atol)


def _copy_program(src, dst, edit_plan=None, append_ptx=None):
    import json
    import shutil
    shutil.copytree(src, dst)
    if edit_plan:
        p = json.load(open(os.path.join(dst, "plan.json")))
        edit_plan(p)
        json.dump(p, open(os.path.join(dst, "plan.json"), "w"))
    if append_ptx:
        with open(os.path.join(dst, "kernels.ptx"), "a") as f:
            f.write(append_ptx)
    return dst


def test_driver_errors_are_device_errors(case, tmp_path):
    from kfuse.errors import DeviceError
    exe, ins, exps, rtol, atol = case
    bad = rt.load(_copy_program(exe.path, tmp_path / "badptx", append_ptx="\nnot ptx at all;\n"))
    with pytest.raises(DeviceError, match="(?s)CUDA_ERROR_INVALID_PTX.*PTX JIT log"):
        bad.warmup()
    future = rt.load(_copy_program(exe.path, tmp_path / "chip",
                                   edit_plan=lambda p: p.update(chip="sm_1000")))
    with pytest.raises(DeviceError, match="compiled for sm_1000"):
        future.warmup()

    # (launched in order: a programmatic launch of a kernel the PTX lacks is
    # refused by the runtime's own plan check before the driver sees it)
    def rename(p):
        p["steps"] = [dict(s, kernel="no_such_kernel", programmatic=False)
                      if s["op"] == "launch" else s for s in p["steps"]]
    missing = rt.load(_copy_program(exe.path, tmp_path / "kernel", edit_plan=rename))
    if missing.plan.kernels:
        with pytest.raises(DeviceError, match="no_such_kernel"):
            missing.warmup()


@pytest.mark.parametrize("d", _TUNED or [None],
                         ids=[os.path.basename(d) for d in _TUNED] or ["none"])
def test_tuned_program_times_its_variants_and_keeps_the_fastest(d):
    # kfuse.autotune's variants, timed on this GPU at the first call (torch
    # tensors: the kernels timed, not copies); each variant computes the
    # program, and the one kept is the fastest of the timings
    if d is None:
        pytest.skip(f"no tuned program under KFUSE_GPU_ARTIFACTS={ARTIFACTS!r}")
    torch = _torch()
    exe = rt.load(d)
    assert isinstance(exe, rt.TunedExecutable)
    with np.load(os.path.join(d, "check.npz")) as z:
        ins = [z[f"in{i}"] for i in range(len(exe.plan.inputs))]
        exps = [z[f"expected{i}"] for i in range(len(exe.plan.outputs))]
        rtol, atol = (float(v) for v in z["tol"])
    t_ins = [_torch_input(torch, a, s) for a, s in zip(ins, exe.plan.inputs)]
    got = exe(*t_ins)
    torch.cuda.synchronize()
    assert exe.choice in exe.labels and set(exe.timings) == set(exe.labels)
    assert exe.timings[exe.choice] == min(exe.timings.values())
    print(f"{exe.name}: " + ", ".join(f"{label} {s * 1e6:.1f} us"
                                     for label, s in exe.timings.items()))
    got = got if isinstance(got, tuple) else (got,)
    _compare(tuple(_torch_to_host(torch, g, s) for g, s in zip(got, exe.plan.outputs)),
             exps, exe, rtol, atol)
    for label, v in exe.variants.items():
        out = v(*t_ins)
        out = out if isinstance(out, tuple) else (out,)
        _compare(tuple(_torch_to_host(torch, g, s) for g, s in zip(out, v.plan.outputs)),
                 exps, v, rtol, atol)
