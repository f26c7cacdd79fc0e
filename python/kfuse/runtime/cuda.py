"""Runs a compiled kfuse program (plan.json + kernels.ptx) on an NVIDIA GPU.

Uses only ``cuda.bindings.driver`` (imported lazily: importing this module never touches
the driver, and a machine without a GPU only fails when a program is first called).
Device arrays (torch, cupy, anything with DLPack or ``__cuda_array_interface__``) are used
in place; numpy arrays are copied to the device and the results copied back.
"""

from __future__ import annotations

import ctypes
import math
import re
import threading
import time
import warnings
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import dtypes
from ..dtypes import DType
from ..errors import ArtifactError, CallError, DeviceError
from . import dlpack
from .plan import BufferArg, CopyStep, HoldsPlan, LaunchPlan, LaunchStep, ScalarArg
from .ptx import cluster_shapes, grid_waiting_kernels

_NO_DEVICE_HINT = "use target='cpu' to run on the host"

# --------------------------------------------------------------------------- driver access

_cu = None
_init_lock = threading.Lock()
_init_error: Optional[DeviceError] = None
_initialized = False
_devices = 0            # how many devices the driver reported at initialization
_SUCCESS = None         # CUresult.CUDA_SUCCESS, once the driver is loaded


def _driver():
    """Imports cuda.bindings.driver and runs cuInit once; raises DeviceError if impossible."""
    global _cu, _initialized, _init_error, _devices, _SUCCESS
    if _initialized:
        return _cu
    with _init_lock:
        if _initialized:
            return _cu
        if _init_error is not None:
            raise _init_error
        try:
            from cuda.bindings import driver as cu
        except ImportError as e:
            _init_error = DeviceError(f"no CUDA device: the cuda-bindings package is not "
                                      f"installed ({e}); {_NO_DEVICE_HINT}")
            raise _init_error from None
        try:
            (err,) = cu.cuInit(0)
        except Exception as e:  # noqa: BLE001 - libcuda.so missing raises from the loader
            _init_error = DeviceError(f"no CUDA device: the CUDA driver could not be loaded "
                                      f"({type(e).__name__}: {e}); {_NO_DEVICE_HINT}")
            raise _init_error from None
        if err != cu.CUresult.CUDA_SUCCESS:
            _init_error = DeviceError(f"no CUDA device: cuInit failed with {_err_name(cu, err)}; "
                                      f"{_NO_DEVICE_HINT}")
            raise _init_error
        err, count = cu.cuDeviceGetCount()
        if err != cu.CUresult.CUDA_SUCCESS or count == 0:
            what = _err_name(cu, err) if err != cu.CUresult.CUDA_SUCCESS else "0 devices"
            _init_error = DeviceError(f"no CUDA device: cuDeviceGetCount reported {what}; "
                                      f"{_NO_DEVICE_HINT}")
            raise _init_error
        _cu = cu
        _devices = int(count)
        _SUCCESS = cu.CUresult.CUDA_SUCCESS
        _initialized = True
        return cu


def _err_name(cu, err) -> str:
    name = getattr(err, "name", None) or str(err)
    try:
        e2, desc = cu.cuGetErrorString(err)
        if e2 == cu.CUresult.CUDA_SUCCESS and desc:
            return f"{name} ({desc.decode() if isinstance(desc, bytes) else desc})"
    except Exception:  # noqa: BLE001
        pass
    return name


def _check(res, what: str):
    """Checks the CUresult of a cuda.bindings call; returns the remaining values."""
    err = res[0]
    if err != _cu.CUresult.CUDA_SUCCESS:
        raise DeviceError(f"CUDA driver error while {what}: {_err_name(_cu, err)}")
    if len(res) == 1:
        return None
    if len(res) == 2:
        return res[1]
    return res[1:]


def cuda_available() -> bool:
    """True if the CUDA driver loads and reports at least one device. Never raises."""
    try:
        _driver()
        return True
    except Exception:  # noqa: BLE001
        return False


def device_count() -> int:
    cu = _driver()
    return int(_check(cu.cuDeviceGetCount(), "counting CUDA devices"))


# --------------------------------------------------------------------------- kernel parameters

_SCALAR_CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "index": ctypes.c_int64,
                  "f32": ctypes.c_float, "f64": ctypes.c_double}


class ParamPack:
    """The ``kernelParams`` array of one launch: N pointers, each to an 8-byte slot.

    Scalars are written once at construction; buffer slots are refilled per call with
    :meth:`fill`. ``address`` is the int address of the ``void*[N]`` array, the form of
    ``kernelParams`` cuda.bindings passes through unchanged (None when N == 0)."""

    SLOT = 8

    def __init__(self, args: Sequence):
        n = len(args)
        self.nargs = n
        self._slots = (ctypes.c_uint64 * max(n, 1))()
        base = ctypes.addressof(self._slots)
        self._ptrs = (ctypes.c_void_p * max(n, 1))(*[base + self.SLOT * i for i in range(n)])
        self.address = ctypes.addressof(self._ptrs) if n else None
        self.buffer_slots: List[Tuple[int, int]] = []    # (slot, buffer index)
        for i, a in enumerate(args):
            if isinstance(a, BufferArg):
                self.buffer_slots.append((i, a.buffer))
            elif isinstance(a, ScalarArg):
                ct = _SCALAR_CTYPES[a.type]
                ct.from_buffer(self._slots, self.SLOT * i).value = a.value
            else:
                raise TypeError(f"unknown kernel argument {a!r}")

    def fill(self, buffer_ptrs: Sequence[int]) -> None:
        slots = self._slots
        for i, b in self.buffer_slots:
            slots[i] = buffer_ptrs[b]

    def slot_bytes(self, i: int) -> bytes:
        """The 8 bytes kernel parameter ``i`` points at (for tests)."""
        return ctypes.string_at(self._ptrs[i], self.SLOT)


# --------------------------------------------------------------------------- per-device state

_primary: Dict[int, tuple] = {}     # ordinal -> (CUdevice, CUcontext, int ctx)


def _primary_context(ordinal: int):
    cu = _driver()
    with _init_lock:
        if ordinal in _primary:
            return _primary[ordinal]
        count = int(_check(cu.cuDeviceGetCount(), "counting CUDA devices"))
        if not 0 <= ordinal < count:
            raise DeviceError(f"no CUDA device {ordinal}: this machine has {count} device(s)")
        dev = _check(cu.cuDeviceGet(ordinal), f"getting CUDA device {ordinal}")
        ctx = _check(cu.cuDevicePrimaryCtxRetain(dev),
                     f"retaining the primary context of device {ordinal}")
        _primary[ordinal] = (dev, ctx, int(ctx))
        return _primary[ordinal]


class _ContextGuard:
    """Makes ``ctx`` current for a call: sets it if none is current, pushes/pops it if
    another context is current (and leaves the thread's context as it found it)."""

    __slots__ = ("ctx", "ctx_int", "pushed")

    def __init__(self, ctx, ctx_int):
        self.ctx, self.ctx_int, self.pushed = ctx, ctx_int, False

    def __enter__(self):
        cur = _check(_cu.cuCtxGetCurrent(), "getting the current CUDA context")
        cur_int = int(cur) if cur is not None else 0
        if cur_int == self.ctx_int:
            return self
        if cur_int == 0:
            _check(_cu.cuCtxSetCurrent(self.ctx), "making the primary context current")
        else:
            _check(_cu.cuCtxPushCurrent(self.ctx), "pushing the primary context")
            self.pushed = True
        return self

    def __exit__(self, *exc):
        if self.pushed:
            self.pushed = False
            _check(_cu.cuCtxPopCurrent(), "popping the primary context")
        return False


def _parse_chip(chip: Optional[str]):
    m = re.fullmatch(r"sm_(\d+)(\d)([af]?)", chip or "")
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), m.group(3)


class _GuardWatch:
    """The guards' status words of calls on one stream, copied to page-locked
    memory by a call that does not wait for its kernels, and an event recorded
    after the copy: a later call on the stream reads them once the event has
    completed, without waiting (one copy in flight at a time)."""

    def __init__(self, nbytes: int):
        cu = _driver()
        self.nbytes = nbytes
        self.host = int(_check(cu.cuMemAllocHost(max(8, nbytes)),
                               "allocating page-locked memory for the guards' status words"))
        ctypes.memset(self.host, 0, nbytes)
        self.zeros = bytes(nbytes)
        self.event = _check(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING),
                            "creating an event for the guards' status words")
        self.pending = False
        self.next_poll = 0.0      # (time.perf_counter() before which no query)

    def any_set(self) -> bool:
        return ctypes.string_at(self.host, self.nbytes) != self.zeros


class _DeviceState:
    """Module, functions and context of one executable on one device."""

    def __init__(self, exe: "CudaExecutable", ordinal: int):
        cu = _driver()
        self.ordinal = ordinal
        self.dev, self.ctx, self.ctx_int = _primary_context(ordinal)
        self.name = _device_name(self.dev)
        major = _check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev),
            "reading the compute capability")
        minor = _check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev),
            "reading the compute capability")
        self.cc = (int(major), int(minor))
        want = _parse_chip(exe.plan.chip)
        if want is not None:
            wmaj, wmin, suffix = want
            too_old = (wmaj, wmin) > self.cc
            wrong_arch = suffix == "a" and (wmaj, wmin) != self.cc
            if too_old or wrong_arch:
                raise DeviceError(
                    f"{exe.plan.name!r} was compiled for {exe.plan.chip} but CUDA device "
                    f"{ordinal} ({self.name}) is sm_{self.cc[0]}{self.cc[1]}; recompile with "
                    f"chip='sm_{self.cc[0]}{self.cc[1]}'")
        pools = _check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, self.dev),
            "querying memory pool support")
        self.async_alloc = bool(pools)
        # programmatic launches (a kernel started before the one it follows ends):
        # sm_90 and later, with a cuda-python that has cuLaunchKernelEx; elsewhere
        # the plan's launches are plain ones (their kernels' waits then return at once)
        self.programmatic = self.cc >= (9, 0) and hasattr(cu, "cuLaunchKernelEx")
        self._configs: Dict[int, object] = {}
        # counter buffers by (stream, buffer): zeroed once, left zero by every
        # call's kernels; calls on one stream run in turn, so they share one,
        # and calls on different streams, which may overlap, do not
        self._counters: Dict[Tuple[int, int], int] = {}
        # temporaries kept between calls, by (stream, buffer) likewise: a
        # call's are dead once its kernels end, and the next call on the
        # stream runs after them (CudaExecutable.keep_temps)
        self._kept: Dict[Tuple[int, int], int] = {}
        self._kept_streams: set = set()
        # what each call finds in place, by (stream, temporaries kept)
        self._fixed: Dict[Tuple[int, bool], List[Tuple[int, int]]] = {}
        self._steps: Optional[List[tuple]] = None
        # the guards' status words on their way back, by stream (_GuardWatch)
        self.watches: Dict[int, _GuardWatch] = {}
        with self.current():
            # the program's tensor constants live on the device for its lifetime
            self.constants = {}
            for b, data in exe._constants:
                p = int(_check(cu.cuMemAlloc(max(1, data.nbytes)),
                               f"allocating constant buffer {b}"))
                _check(cu.cuMemcpyHtoD(p, data.ctypes.data, data.nbytes),
                       f"uploading constant buffer {b}")
                self.constants[b] = p
            # (a program of copies only has no kernels and no PTX to load)
            self.module = (_load_module(exe._ptx_image, exe.plan.name)
                           if exe.plan.kernels else None)
            self.functions = {}
            for k in exe.plan.kernels:
                self.functions[k] = _check(cu.cuModuleGetFunction(self.module, k.encode()),
                                           f"looking up kernel {k!r} in the PTX of "
                                           f"{exe.plan.name!r}")
            # clusters of more than 8 blocks (the portable limit) need a per-kernel opt-in
            shapes = cluster_shapes(exe._ptx_image[:-1].decode(errors="replace"))
            for k, (cx, cy, cz) in shapes.items():
                blocks = cx * cy * cz
                if blocks > 8 and k in self.functions:
                    _check(cu.cuFuncSetAttribute(
                        self.functions[k], cu.CUfunction_attribute
                        .CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                        f"allowing kernel {k!r} a cluster of {blocks} blocks")
            # dynamic shared memory beyond the default 48 KB a block (rows kept in
            # shared memory) needs a per-kernel opt-in, up to what the device allows
            smem: Dict[str, int] = {}
            for step in exe.plan.steps:
                if step.op == "launch":
                    smem[step.kernel] = max(smem.get(step.kernel, 0), step.smem)
            most = None
            for k, need in smem.items():
                if need <= 48 * 1024 or k not in self.functions:
                    continue
                if most is None:
                    most = _check(cu.cuDeviceGetAttribute(
                        cu.CUdevice_attribute
                        .CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, self.dev),
                        "querying the shared memory a block may have")
                if need > most:
                    raise DeviceError(
                        f"kernel {k!r} of {exe.plan.name!r} needs {need} bytes of dynamic "
                        f"shared memory a block; CUDA device {ordinal} ({self.name}) allows "
                        f"{most}: recompile with row_smem={max(0, most - 2048)} (or 0)")
                _check(cu.cuFuncSetAttribute(
                    self.functions[k], cu.CUfunction_attribute
                    .CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, need),
                    f"allowing kernel {k!r} {need} bytes of dynamic shared memory")
            # persistent launches (row_persist) run as many of their clusters as
            # this device holds at once, where that is fewer than planned: more
            # would wait for whole clusters to end
            self.grids: Dict[int, Tuple[int, int, int]] = {}
            for i, op in enumerate(exe._ops):
                if op[0] == "launch" and op[7].persistent:
                    try:
                        resident = self.resident(op[7], op[7].cluster_blocks)
                    except DeviceError as e:
                        # (the plan's grid computes the same: a persistent
                        # kernel is right over any number of clusters, and only
                        # slower over more than the device holds)
                        warnings.warn(
                            f"{e}; {exe.plan.name!r} launches kernel {op[1]!r} over the "
                            f"plan's {op[7].persistent} {op[7].persistent_units}, which may "
                            f"be more than the device holds at once", RuntimeWarning,
                            stacklevel=2)
                        resident = None
                    self.grids[i] = op[7].grid_on(resident)

    def sm_count(self) -> int:
        """The device's SMs."""
        cu = _driver()
        return int(_check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.dev),
            "counting the device's SMs"))

    def blocks_per_sm(self, step: LaunchStep) -> int:
        """How many blocks of launch `step`'s kernel (its block, its dynamic
        shared memory) an SM holds at once."""
        cu = _driver()
        return int(_check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            self.functions[step.kernel], math.prod(step.block), step.smem),
            f"asking how many blocks of kernel {step.kernel!r} an SM holds"))

    def registers(self, kernel: str) -> int:
        """The registers a thread of `kernel` holds, as the driver loaded it."""
        cu = _driver()
        return int(_check(cu.cuFuncGetAttribute(
            cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, self.functions[kernel]),
            f"reading the registers of kernel {kernel!r}"))

    def resident(self, step: LaunchStep, cluster: int) -> Optional[int]:
        """How many clusters of `cluster` blocks of launch `step`'s kernel this
        device holds at once (cuOccupancyMaxActiveClusters; a cluster of 1, plain
        blocks: the blocks an SM holds times the SMs; None where cuda-python
        cannot ask, or the driver says none fit: a persistent launch then runs
        the plan's grid). Raises DeviceError where the driver fails to answer."""
        cu = _driver()
        if cluster == 1:
            return self.blocks_per_sm(step) * self.sm_count() or None
        query = getattr(cu, "cuOccupancyMaxActiveClusters", None)
        if query is None:
            return None
        config = _launch_config(step.grid, step.block, step.smem)
        n = _check(query(self.functions[step.kernel], config),
                   f"asking how many clusters of kernel {step.kernel!r} the device holds")
        return int(n) or None

    def counter(self, buffer: int, nbytes: int, stream: int) -> int:
        """The device address of counter buffer `buffer` for calls on `stream`
        (allocated and zeroed, in stream order, the first time)."""
        key = (stream, buffer)
        p = self._counters.get(key)
        if p is None:
            cu = _driver()
            p = int(_check(cu.cuMemAlloc(max(1, nbytes)), f"allocating counter buffer {buffer}"))
            try:
                _check(cu.cuMemsetD8Async(p, 0, nbytes, stream),
                       f"zeroing counter buffer {buffer}")
            except DeviceError:
                cu.cuMemFree(p)
                raise
            self._counters[key] = p
        return p

    def guard_watch(self, stream: int, nbytes: int) -> _GuardWatch:
        """The _GuardWatch of calls on `stream`, made the first time."""
        w = self.watches.get(stream)
        if w is None:
            w = self.watches[stream] = _GuardWatch(nbytes)
        return w

    def keeps_temps_for(self, stream: int, most: int) -> bool:
        """Whether calls on `stream` use kept temporaries: streams that have them,
        and new ones while fewer than `most` do (a caller making a stream per call
        would otherwise pile up a set of temporaries a stream)."""
        if stream in self._kept_streams:
            return True
        if len(self._kept_streams) >= most:
            return False
        self._kept_streams.add(stream)
        return True

    def kept_temp(self, buffer: int, nbytes: int, stream: int) -> int:
        """The device address of temporary buffer `buffer` for calls on `stream`,
        allocated the first time."""
        key = (stream, buffer)
        p = self._kept.get(key)
        if p is None:
            cu = _driver()
            p = int(_check(cu.cuMemAlloc(max(1, nbytes)),
                           f"allocating {nbytes} bytes for temporary buffer {buffer}"))
            self._kept[key] = p
        return p

    def steps(self, exe: "CudaExecutable") -> List[tuple]:
        """(index, op, function, parameter pack, grid) of each of `exe`'s steps
        (None, None, None for a copy), the functions looked up once; the grid is
        the plan's, or a persistent launch's on this device."""
        if self._steps is None:
            self._steps = [(i, op, self.functions[op[1]], op[5], self.grids.get(i, op[2]))
                           if op[0] == "launch" else (i, op, None, None, None)
                           for i, op in enumerate(exe._ops)]
        return self._steps

    def fixed_buffers(self, exe: "CudaExecutable", stream: int,
                      keep: bool) -> List[Tuple[int, int]]:
        """(buffer, device address) of what a call of `exe` on `stream` finds in
        place: its counters and status words, its constants, and its kept
        temporaries where `keep` (made the first time, then the same each call)."""
        key = (stream, keep)
        fixed = self._fixed.get(key)
        if fixed is None:
            fixed = []
            if keep:
                fixed += [(b, self.kept_temp(b, n, stream)) for b, n in exe._temps]
            fixed += [(b, self.counter(b, n, stream)) for b, n in exe._counters]
            fixed += list(self.constants.items())
            self._fixed[key] = fixed
        return fixed

    def launch_config(self, i: int, op) -> "object":
        """The cuLaunchKernelEx configuration of launch op `i` (programmatic stream
        serialization), built once; the caller sets its stream."""
        config = self._configs.get(i)
        if config is None:
            cu = _driver()
            _, _, grid, block, smem, _, _, _ = op
            grid = self.grids.get(i, grid)
            attr = cu.CUlaunchAttribute()
            attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attr.value.programmaticStreamSerializationAllowed = 1
            config = self._configs[i] = _launch_config(grid, block, smem, [attr])
        return config

    def current(self) -> _ContextGuard:
        """Makes this device's primary context current for a ``with`` block. A fresh guard
        per use: it remembers whether it pushed, so it cannot be shared between threads."""
        return _ContextGuard(self.ctx, self.ctx_int)


def _launch_config(grid, block, smem: int, attrs=()) -> "object":
    """A CUlaunchConfig (cuLaunchKernelEx, cuOccupancyMaxActiveClusters) of
    `grid`, `block`, `smem` bytes of dynamic shared memory and launch attributes
    `attrs`, on the legacy stream (callers launching set hStream)."""
    cu = _driver()
    config = cu.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid
    config.blockDimX, config.blockDimY, config.blockDimZ = block
    config.sharedMemBytes = smem
    config.hStream = 0
    if attrs:
        config.attrs = list(attrs)
    config.numAttrs = len(attrs)
    return config


def _device_name(dev) -> str:
    try:
        raw = _check(_cu.cuDeviceGetName(256, dev), "reading the device name")
        return raw.split(b"\0", 1)[0].decode(errors="replace")
    except DeviceError:
        return "unknown device"


def _load_module(image: bytes, name: str):
    cu = _cu
    err, module = cu.cuModuleLoadData(image)
    if err == cu.CUresult.CUDA_SUCCESS:
        return module
    log = _jit_error_log(image)
    raise DeviceError(f"CUDA driver error while loading the PTX of {name!r}: "
                      f"{_err_name(cu, err)}" + (f"\nPTX JIT log:\n{log}" if log else ""))


def _jit_error_log(image: bytes) -> str:
    """Reloads the PTX with an error-log buffer to get the JIT's message (best effort).

    cuda.bindings passes a bytes-like value of CU_JIT_ERROR_LOG_BUFFER as the char* the
    driver writes into, so the buffer is a bytearray."""
    cu = _cu
    try:
        size = 1 << 14
        buf = bytearray(size)
        opts = [cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER,
                cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        res = cu.cuModuleLoadDataEx(image, len(opts), opts, [buf, size])
        if res[0] == cu.CUresult.CUDA_SUCCESS:     # cannot happen, but do not leak it
            cu.cuModuleUnload(res[1])
        return bytes(buf).split(b"\0", 1)[0].decode(errors="replace").strip()
    except Exception:  # noqa: BLE001
        return ""


# --------------------------------------------------------------------------- argument records

_TORCH_NAMES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
                "i1": "bool", "i32": "int32", "i64": "int64"}
_torch_maps = None     # (torch dtype -> DType, DType name -> torch dtype), built on first use


def _torch_dtype_maps(torch):
    global _torch_maps
    if _torch_maps is None:
        to_kf = {getattr(torch, n): dtypes.ALL[k] for k, n in _TORCH_NAMES.items()}
        to_torch = {k: getattr(torch, n) for k, n in _TORCH_NAMES.items()}
        _torch_maps = (to_kf, to_torch)
    return _torch_maps


_torch_module = None
_torch_raw_stream = None    # torch._C._cuda_getCurrentRawStream, where torch has it
_torch_devices: Dict[int, object] = {}


def _torch():
    """The torch module, its dtype maps built and its stream query found on the
    first call (a call's torch arrays then cost no import or lookup)."""
    global _torch_module, _torch_raw_stream
    if _torch_module is None:
        import torch
        _torch_dtype_maps(torch)
        _torch_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _torch_module = torch
    return _torch_module


def _torch_current_stream(torch, index: int) -> int:
    if _torch_raw_stream is not None:                 # ~20x faster than the API
        return int(_torch_raw_stream(index))
    return int(torch.cuda.current_stream(index).cuda_stream)


def _torch_device(torch, ordinal: int):
    dev = _torch_devices.get(ordinal)
    if dev is None:
        dev = _torch_devices[ordinal] = torch.device("cuda", ordinal)
    return dev


_LIBRARY_OF_TYPE: Dict[type, str] = {}


def _library(obj) -> str:
    lib = _LIBRARY_OF_TYPE.get(type(obj))
    if lib is not None:
        return lib
    mod = type(obj).__module__ or ""
    if isinstance(obj, np.ndarray):
        lib = "numpy"
    elif mod.startswith("torch"):
        lib = "torch"
    elif mod.startswith("cupy"):
        lib = "cupy"
    else:
        lib = "other"
    if len(_LIBRARY_OF_TYPE) < 256:
        _LIBRARY_OF_TYPE[type(obj)] = lib
    return lib


def stream_handle(stream) -> int:
    """The CUDA stream handle (int) of ``stream``: an int, a CUstream, or an object with
    ``.cuda_stream`` (torch), ``.ptr`` (cupy) or ``.handle``."""
    if isinstance(stream, bool):
        raise CallError(f"stream= must be a CUDA stream or its handle, got {stream!r}")
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):
        v = getattr(stream, attr, None)
        if v is not None:
            try:
                return int(v)
            except (TypeError, ValueError):
                pass
    try:
        return int(stream)
    except (TypeError, ValueError):
        raise CallError(f"stream= must be a CUDA stream or its int handle, "
                        f"got {type(stream).__name__}") from None


class _Arg:
    """One input or output of a call, as the runtime sees it."""
    __slots__ = ("obj", "lib", "host", "shape", "dtype", "label", "ptr", "device", "stream",
                 "keepalive")

    def __init__(self, obj, lib, host, shape, dtype, label, ptr=0, device=-1, stream=None,
                 keepalive=None):
        self.obj, self.lib, self.host = obj, lib, host
        self.shape, self.dtype, self.label, self.ptr = shape, dtype, label, ptr
        self.device = device         # CUDA ordinal, -1 = unknown (ask the driver)
        self.stream = stream         # stream the producer last used the array on, if known
        self.keepalive = keepalive   # DLPack capsule


def _describe(a: "_Arg"):
    return a.shape, (a.dtype if a.dtype is not None else a.label)


def _host_arg(arr) -> _Arg:
    return _Arg(arr, "numpy", True, tuple(arr.shape), _np_dtype(arr.dtype), str(arr.dtype))


# --------------------------------------------------------------------------- the executable

class CudaExecutable(HoldsPlan):
    """A compiled kfuse program loaded for CUDA. Call it like a function:

    ``y = exe(x)``; ``y1, y2 = exe(a, b, stream=s, out=(o1, o2))``.

    * torch / cupy CUDA arrays are used in place (zero-copy); the work is queued
      asynchronously on the library's current stream (or ``stream=``) and outputs are new
      arrays of the same library. When ``stream=`` differs from the library's current stream,
      the launch first waits for the work queued on the latter (like DLPack's exchange).
    * other CUDA arrays are read through DLPack (``__dlpack__(stream=...)``) or
      ``__cuda_array_interface__``; outputs are then numpy arrays.
    * numpy arrays are copied to the device, results copied back into new numpy arrays, and
      the call waits for the GPU.

    Temporaries (partial results between a program's kernels) of up to 64 MiB in all are
    allocated once for each stream the program is called on (the first 8 streams of a
    device), and kept: a call's are dead once its kernels end, and the next call on the
    stream runs after it. Larger ones, and those of calls on further streams, are
    allocated and freed with each call, in stream order; ``keep_temps = False`` asks that
    of any program (each call then pays a stream-ordered allocation and free a buffer).

    Arrays must be C-contiguous, and start on the alignment the kernels were compiled for.
    ``out=`` (one array, or a tuple/list) receives the results instead of new arrays; it
    must not share memory with an input or another output (CallError).
    Returns one array when the program has one output, else a tuple."""

    # (temporaries kept between calls, at most: a program's partials are far
    # smaller; a plan that materializes a large intermediate frees it)
    KEPT_TEMP_BYTES = 64 << 20
    KEPT_TEMP_STREAMS = 8
    # Calls on device arrays have the guards' status words copied back behind
    # their kernels and ask whether they are back (three driver calls, about
    # 10 us of host time) at most once per this many seconds a stream: a loop
    # of short calls pays for it on a few of them only, and a bad index is
    # reported a millisecond later at most (once its kernels are done).
    GUARD_POLL_INTERVAL = 1e-3

    def __init__(self, plan: LaunchPlan, ptx_text, device: Optional[int] = None,
                 path: Optional[str] = None, constants: Optional[Dict[str, np.ndarray]] = None):
        if plan.target != "cuda":
            raise DeviceError(f"{plan.name!r} was compiled for target {plan.target!r}, not 'cuda'")
        plan.validate()                 # plans built in Python get the from_json checks too
        if isinstance(ptx_text, str):
            ptx_text = ptx_text.encode()
        self.plan = plan
        self.path = path
        self.device = device
        self._ptx_image = bytes(ptx_text).rstrip(b"\0") + b"\0"
        self._states: Dict[int, _DeviceState] = {}
        self._state_lock = threading.Lock()
        self._launch_lock = threading.Lock()
        # static parts of every step, computed once
        self._ops = []
        need_align: Dict[int, Tuple[int, str]] = {}
        # (a launch started before the one it follows ends must wait for it on the
        # GPU: its kernel must say so, or it could read what is not yet written)
        waiting = (grid_waiting_kernels(self._ptx_image[:-1].decode(errors="replace"))
                   if any(getattr(st, "programmatic", False) for st in plan.steps) else ())
        # (a persistent launch's clusters are its kernel's: the runtime cuts the
        # grid by whole clusters)
        shapes = (cluster_shapes(self._ptx_image[:-1].decode(errors="replace"))
                  if any(getattr(st, "persistent", 0) for st in plan.steps) else {})
        for step in plan.steps:
            if isinstance(step, LaunchStep):
                if step.programmatic and step.kernel not in waiting:
                    raise ArtifactError(
                        f"{plan.name!r}: step {len(self._ops)} launches kernel "
                        f"{step.kernel!r} programmatically, but its PTX has no "
                        f"griddepcontrol.wait (it could read what the kernel before it "
                        f"has not yet written)")
                if step.persistent:
                    shape = shapes.get(step.kernel)
                    if shape is None or math.prod(shape) != step.cluster_blocks:
                        raise ArtifactError(
                            f"{plan.name!r}: step {len(self._ops)} launches kernel "
                            f"{step.kernel!r} persistent, {step.persistent} clusters of "
                            f"{step.cluster_blocks} blocks, but its PTX declares " +
                            (f"clusters of {list(shape)} blocks" if shape else
                             "no cluster shape (.reqnctapercluster)"))
                self._ops.append(("launch", step.kernel, step.grid, step.block, step.smem,
                                  ParamPack(step.args), step.programmatic, step))
                for a in step.args:
                    if isinstance(a, BufferArg) and step.align > need_align.get(a.buffer, (1, ""))[0]:
                        need_align[a.buffer] = (step.align, step.kernel)
            elif isinstance(step, CopyStep):
                self._ops.append(("copy", step.src, step.dst, plan.buffers[step.src].nbytes))
        # (position in inputs+outputs, alignment, kernel) for caller-provided buffers
        n_in = len(plan.inputs)
        self._align_checks = []
        for b, (al, k) in sorted(need_align.items()):
            buf = plan.buffers[b]
            if al > 1 and buf.kind in ("input", "output"):
                pos = buf.index if buf.kind == "input" else n_in + buf.index
                self._align_checks.append((pos, b, al, k))
        self._temps = [(i, b.nbytes) for i, b in enumerate(plan.buffers) if b.kind == "temp"]
        self.keep_temps = sum(n for _, n in self._temps) <= self.KEPT_TEMP_BYTES
        # (the status words of the guards are kept like counters: zero between calls)
        self._counters = [(i, b.nbytes) for i, b in enumerate(plan.buffers)
                          if b.kind in ("counter", "status")]
        self._status = next(((i, b.nbytes) for i, b in enumerate(plan.buffers)
                             if b.kind == "status"), None)
        # buffer index of inputs then outputs, in call order
        self._arg_buf = [0] * (n_in + len(plan.outputs))
        for i, b in enumerate(plan.buffers):
            if b.kind == "input":
                self._arg_buf[b.index] = i
            elif b.kind == "output":
                self._arg_buf[n_in + b.index] = i
        self._nbuf = len(plan.buffers)
        self._names = [s.name for s in plan.inputs] + [s.name for s in plan.outputs]
        self._specs = list(plan.inputs) + list(plan.outputs)
        self._n_in, self._n_out = len(plan.inputs), len(plan.outputs)
        self._arg_nbytes = [s.nbytes for s in plan.inputs] + [s.nbytes for s in plan.outputs]
        # constant buffers: host data now, uploaded once per device
        self._constants = plan.constant_arrays(constants, path)

    # ---- introspection

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def ptx(self) -> str:
        return self._ptx_image[:-1].decode(errors="replace")

    def __repr__(self) -> str:
        return f"<kfuse CudaExecutable {self.plan.signature()} chip={self.plan.chip}>"

    def _state(self, ordinal: int) -> _DeviceState:
        st = self._states.get(ordinal)
        if st is None:
            with self._state_lock:
                st = self._states.get(ordinal)
                if st is None:
                    st = _DeviceState(self, ordinal)
                    self._states[ordinal] = st
        return st

    def warmup(self, device: Optional[int] = None) -> None:
        """Initialises the driver and loads the PTX now instead of at the first call."""
        self._state(device if device is not None else (self.device or 0))

    def device_name(self, device: Optional[int] = None) -> str:
        """The name of the CUDA device the program runs on (loading its PTX
        there first)."""
        return self._state(device if device is not None else (self.device or 0)).name

    def synchronize(self) -> None:
        """Waits for everything queued on the devices this program has run on
        (cuCtxSynchronize in each: other work queued there too)."""
        cu = _driver()
        for st in list(self._states.values()):
            with st.current():
                _check(cu.cuCtxSynchronize(), f"waiting for {self.plan.name!r} to finish")

    def launch_grids(self, device: Optional[int] = None) -> List[Tuple[int, int, int]]:
        """The grid of each launch step as it runs on `device` (loading the PTX
        there first): the plan's, but for persistent launches, which run as many
        of their clusters as the device holds at once where that is fewer."""
        st = self._state(device if device is not None else (self.device or 0))
        return [st.grids.get(i, op[2]) for i, op in enumerate(self._ops)
                if op[0] == "launch"]

    # ---- calling

    def __call__(self, *args, stream=None, out=None):
        # (the path of every call: kept lean, its rare cases handed to the
        # checks that name them; bench/host_overhead.py measures it)
        plan = self.plan
        cu = _cu if _initialized else _driver()
        n_in = self._n_in
        if len(args) != n_in:
            plan.check_call(args)                           # raises the count message
        if out is None:
            objs = args
        else:
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            if len(outs) != self._n_out:
                plan.check_outputs(outs)
            objs = args + outs
        names = self._names

        # torch / cupy / numpy first: they tell the stream to use
        recs: List[Optional[_Arg]] = [None] * len(objs)
        lib_stream = None
        pending = ()
        for k, obj in enumerate(objs):
            lib = _LIBRARY_OF_TYPE.get(type(obj)) or _library(obj)
            if lib == "torch":
                a = self._torch_arg(obj, names[k], "input" if k < n_in else "output")
            elif lib == "numpy":
                a = _host_arg(obj)
            elif lib == "cupy":
                a = self._cupy_arg(obj, names[k], "input" if k < n_in else "output")
            else:
                pending += (k,)
                continue
            recs[k] = a
            if lib_stream is None and a.stream is not None:
                lib_stream = a.stream
        if stream is not None:
            sh = stream_handle(stream)
        else:
            sh = lib_stream if lib_stream is not None else 0
        for k in pending:
            recs[k] = self._generic_arg(objs[k], sh, names[k],
                                        "input" if k < n_in else "output")

        # shapes and dtypes (the plan's check, which names the difference, runs
        # only where these quick comparisons find one)
        specs = self._specs
        for k, a in enumerate(recs):
            spec = specs[k]
            if a.shape != spec.shape or a.dtype is not spec.dtype:
                plan.check_arg(spec, a, _describe, "input" if k < n_in else "output")
        if out is not None:
            for spec, a in zip(plan.outputs, recs[n_in:]):
                if a.host and not (a.obj.flags.c_contiguous and a.obj.flags.writeable):
                    raise CallError(f"output {spec.name!r} must be a writeable C-contiguous "
                                    f"numpy array")
            # (host arrays are staged through device copies; device pointers are
            # unique across devices: unified addressing. The plan's check, which
            # names the overlap, runs only where this quick one finds one.)
            nbytes = self._arg_nbytes
            for j in range(n_in, len(recs)):
                a = recs[j]
                if a.host:
                    continue
                lo, hi = a.ptr, a.ptr + nbytes[j]
                if any(not o.host and lo < o.ptr + nbytes[k] and o.ptr < hi
                       for k, o in enumerate(recs[:j])):
                    span = lambda a: None if a.host else ("device", a.ptr)  # noqa: E731
                    plan.check_disjoint_outputs([span(a) for a in recs[:n_in]],
                                                [span(a) for a in recs[n_in:]])

        # (one device and a program not bound to another: every array is on it)
        ordinal = 0
        if _devices != 1 or self.device or any(a.device > 0 for a in recs):
            ordinal = self._pick_device(recs)
        st = self._states.get(ordinal) or self._state(ordinal)
        err, cur = cu.cuCtxGetCurrent()
        if err == _SUCCESS and cur is not None and int(cur) == st.ctx_int:
            return self._run(cu, st, sh, recs, out is not None)
        with st.current():
            return self._run(cu, st, sh, recs, out is not None)

    # ---- argument records

    @staticmethod
    def _not_contiguous(role, name, shape, strides):
        return CallError(f"{role} {name!r} is not C-contiguous (strides {strides} for shape "
                         f"{shape}); call .contiguous() on it first")

    def _torch_arg(self, t, name, role) -> _Arg:
        torch = _torch()
        if not isinstance(t, torch.Tensor):
            return self._generic_arg(t, None, name, role)
        if not t.is_cuda:
            raise CallError(f"{role} {name!r} is a torch tensor on {t.device}; pass a CUDA "
                            f"tensor (x.cuda()) or a numpy array")
        shape = tuple(t.shape)
        if not t.is_contiguous():
            raise self._not_contiguous(role, name, shape, tuple(t.stride()))
        index = t.get_device()
        dt = _torch_maps[0].get(t.dtype)
        # (the dtype's name only matters when kfuse has no such dtype: messages)
        return _Arg(t, "torch", False, shape, dt,
                    None if dt is not None else str(t.dtype).replace("torch.", ""),
                    t.data_ptr(), index, _torch_current_stream(torch, index))

    def _cupy_arg(self, a, name, role) -> _Arg:
        import cupy
        if not isinstance(a, cupy.ndarray):
            return self._generic_arg(a, None, name, role)
        shape = tuple(a.shape)
        if not a.flags.c_contiguous:
            raise self._not_contiguous(role, name, shape,
                                       tuple(s // a.itemsize for s in a.strides))
        return _Arg(a, "cupy", False, shape, _np_dtype(a.dtype), str(a.dtype), int(a.data.ptr),
                    int(a.device.id), int(cupy.cuda.get_current_stream().ptr))

    def _generic_arg(self, obj, sh, name, role) -> _Arg:
        if isinstance(obj, np.generic):
            return _host_arg(np.asarray(obj))
        # (DLPack first, as dlpack.inspect does; an object with only a CUDA
        # array interface is read without a second look-up)
        cai = (getattr(obj, "__cuda_array_interface__", None)
               if getattr(obj, "__dlpack__", None) is None else None)
        if cai is None and not hasattr(obj, "__dlpack__") and hasattr(obj, "__array__"):
            return _host_arg(np.asarray(obj))
        try:
            info = (dlpack.from_cuda_array_interface(obj, cai) if cai is not None
                    else dlpack.inspect(obj, sh))
        except dlpack.DLPackError as e:
            raise CallError(f"{role} {name!r}: cannot read a {type(obj).__name__} as an "
                            f"array: {e}") from None
        if not info.is_cuda:
            if info.device_type == dlpack.kDLCPU and hasattr(obj, "__array__"):
                return _host_arg(np.asarray(obj))
            raise CallError(f"{role} {name!r} is a {type(obj).__name__} on {info.device_name}; "
                            f"pass a CUDA array or a numpy array")
        if not info.contiguous:
            raise self._not_contiguous(role, name, info.shape, info.strides)
        # DLPack producers already ordered their work before `sh`; CAI v3 gives a stream
        return _Arg(obj, "other", False, info.shape, info.dtype, info.dtype_label, info.ptr,
                    info.device_id, info.stream, info.keepalive)

    def _pick_device(self, recs: Sequence[_Arg]) -> int:
        found = None
        for a in recs:
            if a.host:
                continue
            dev = a.device
            if dev is None or dev < 0:
                dev = self._pointer_device(a.ptr)
            if found is None:
                found = dev
            elif dev != found:
                raise CallError(f"{self.plan.name}: arrays are on different CUDA devices "
                                f"({found} and {dev})")
        if found is None:
            return self.device if self.device is not None else 0
        if self.device is not None and found != self.device:
            raise CallError(f"{self.plan.name} was loaded for CUDA device {self.device} but "
                            f"its arrays are on device {found}")
        return found

    def _pointer_device(self, ptr: int) -> int:
        cu = _cu
        if not ptr:
            return self.device or 0
        if _devices == 1:
            return 0            # (the only device: no driver call per argument and call)
        err, val = cu.cuPointerGetAttribute(
            cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
        if err != cu.CUresult.CUDA_SUCCESS:
            return self.device or 0
        return int(val)

    # ---- the launch sequence

    def _run(self, cu, st, sh, recs, given_outputs):
        """Queues the call on `sh`: `recs` are the inputs' records, then the
        outputs' when given (out=); new outputs are made here otherwise."""
        plan = self.plan
        n_in = self._n_in

        # new outputs, in the library of the device inputs
        if not given_outputs:
            out_lib = self._output_library(recs)
            recs += [self._new_output(out_lib, spec, st.ordinal) for spec in plan.outputs]

        # alignment of every caller-provided device pointer (before anything is queued)
        for pos, b, align, kernel in self._align_checks:
            a = recs[pos]
            if not a.host and a.ptr % align:
                raise CallError(
                    f"{plan.buffer_label(b)} starts at address {a.ptr:#x}, which is not "
                    f"{align}-byte aligned: kernel {kernel!r} uses {align}-byte vector "
                    f"accesses. Pass an array that starts on a {align}-byte boundary (a "
                    f"view with a storage offset does not; copy it, e.g. x.clone())")

        # an earlier call on the stream that did not wait may have read out of
        # bounds: reported now if its status words are back (no wait)
        if self._status is not None:
            with self._launch_lock:
                self._poll_guards(cu, st, sh)

        # work queued on other streams (the libraries' current streams) comes first
        waited = ()
        for a in recs:
            if a.stream is not None and a.stream != sh and a.stream not in waited:
                self._wait_stream(cu, a.stream, sh)
                waited += (a.stream,)

        ptrs = [0] * self._nbuf
        arg_buf = self._arg_buf
        allocs: List[int] = []
        host_outs: List[Tuple[np.ndarray, int, int]] = []   # (host array, device ptr, nbytes)
        host_ins = False
        try:
            for k, a in enumerate(recs):
                if not a.host:
                    ptrs[arg_buf[k]] = a.ptr
                elif k < n_in:
                    host_ins = True
                    arr = np.ascontiguousarray(a.obj)
                    p = self._alloc(cu, st, arr.nbytes, sh, allocs)
                    if arr.nbytes:
                        _check(cu.cuMemcpyHtoDAsync(p, arr.ctypes.data, arr.nbytes, sh),
                               f"copying input {plan.inputs[k].name!r} to the device")
                    ptrs[arg_buf[k]] = p
                else:
                    nbytes = plan.outputs[k - n_in].nbytes
                    p = self._alloc(cu, st, nbytes, sh, allocs)
                    ptrs[arg_buf[k]] = p
                    host_outs.append((a.obj, p, nbytes))
            keep = (self.keep_temps and bool(self._temps)
                    and st.keeps_temps_for(sh, self.KEPT_TEMP_STREAMS))
            if not keep:
                for b, nbytes in self._temps:
                    ptrs[b] = self._alloc(cu, st, nbytes, sh, allocs)
            for b, p in st.fixed_buffers(self, sh, keep):
                ptrs[b] = p

            # (one call's steps queued together: the parameter packs are shared,
            # and so are kept temporaries, which another thread's call on the
            # stream must not overwrite between two of this call's kernels)
            waits = host_ins or bool(host_outs)
            with self._launch_lock:
                self._queue(cu, st, sh, ptrs)
                if self._status is not None and not waits:
                    self._watch_guards(cu, st, sh)
            for host, p, nbytes in host_outs:
                if nbytes:
                    _check(cu.cuMemcpyDtoHAsync(host.ctypes.data, p, nbytes, sh),
                           "copying an output back to the host")
        finally:
            if allocs:
                self._free(cu, st, allocs, sh)
        if waits:
            # (a call that waits for its kernels reads its guards' words too)
            words = self._queue_status_read(cu, st, sh)
            _check(cu.cuStreamSynchronize(sh), f"waiting for {plan.name!r} to finish")
            self._settle_watch(st, sh)
            if words is not None and words.any():
                self._raise_status(cu, st, sh, words)
        if self._n_out == 1:
            return recs[n_in].obj
        return tuple(a.obj for a in recs[n_in:])

    @staticmethod
    def _alloc(cu, st, nbytes: int, sh: int, allocs: List[int]) -> int:
        """A device buffer of `nbytes` for this call (freed at its end, in stream
        order where the device has memory pools), recorded in `allocs`."""
        if nbytes == 0:
            return 0
        if st.async_alloc:
            p = _check(cu.cuMemAllocAsync(nbytes, sh), f"allocating {nbytes} bytes")
        else:
            p = _check(cu.cuMemAlloc(nbytes), f"allocating {nbytes} bytes")
        p = int(p)
        allocs.append(p)
        return p

    def check_guards(self, stream=None, device: Optional[int] = None) -> None:
        """Waits for the calls queued on `stream` (default: the legacy default stream,
        what calls on device arrays without a library stream use) and raises
        GuardError if any of them read a tensor at an index outside it. A call on
        host (numpy) arrays checks by itself; a call on device arrays returns before
        its kernels end, so its bad indices are reported here, by the next call on
        the stream that waits for its kernels, or by a later call on the stream
        once they are known: each call on device arrays has the words copied back
        behind its kernels (without waiting), and the next call reads them if the
        copy has landed, raising before it runs anything."""
        if self._status is None:
            return
        cu = _driver()
        sh = stream_handle(stream) if stream is not None else 0
        st = self._state(device if device is not None else (self.device or 0))
        with st.current():
            words = self._queue_status_read(cu, st, sh)
            _check(cu.cuStreamSynchronize(sh), f"waiting for {self.plan.name!r} to finish")
            self._settle_watch(st, sh)
            if words.any():
                self._raise_status(cu, st, sh, words)

    def _watch_guards(self, cu, st, sh) -> None:
        """Queues the copy of the status words a call that does not wait leaves on
        `sh` to page-locked memory and an event after it, unless a copy is still
        in flight (the words only go from zero to set until reported, so the
        next copy sees what this one would have)."""
        b, nbytes = self._status
        w = st.guard_watch(sh, nbytes)
        if w.pending:
            return
        _check(cu.cuMemcpyDtoHAsync(w.host, st.counter(b, nbytes, sh), nbytes, sh),
               "copying the status words of the program's guards back")
        _check(cu.cuEventRecord(w.event, sh), "recording an event after the guards' copy")
        w.pending = True
        w.next_poll = time.perf_counter() + self.GUARD_POLL_INTERVAL

    def _poll_guards(self, cu, st, sh) -> None:
        """Raises GuardError, before this call queues anything, if the status words
        an earlier call on `sh` copied back have landed with a guard failed."""
        w = st.watches.get(sh)
        if w is None or not w.pending:
            return
        now = time.perf_counter()
        if now < w.next_poll:
            return
        err = cu.cuEventQuery(w.event)[0]
        if err == cu.CUresult.CUDA_ERROR_NOT_READY:
            w.next_poll = now + self.GUARD_POLL_INTERVAL
            return
        _check((err,), "asking whether the guards' status words are back")
        w.pending = False
        if w.any_set():
            # (read again after the calls since, which may have failed too)
            words = self._queue_status_read(cu, st, sh)
            _check(cu.cuStreamSynchronize(sh), f"waiting for {self.plan.name!r} to finish")
            self._raise_status(cu, st, sh, words,
                               " (in a call before this one on the stream, which did not "
                               "wait for its kernels; this call was not run)")

    @staticmethod
    def _settle_watch(st, sh) -> None:
        """After a wait on `sh`: the watched copy has landed, and the words were
        read afresh."""
        w = st.watches.get(sh)
        if w is not None:
            w.pending = False

    def _queue_status_read(self, cu, st, sh) -> Optional[np.ndarray]:
        """Queues the copy of the guards' status words on `sh` (None: no guards)."""
        if self._status is None:
            return None
        b, nbytes = self._status
        words = np.zeros(nbytes // 8, np.int64)
        _check(cu.cuMemcpyDtoHAsync(words.ctypes.data, st.counter(b, nbytes, sh), nbytes, sh),
               "reading the status words of the program's guards")
        return words

    def _raise_status(self, cu, st, sh, words, when: str = (
            " (this call, or one before it on the stream that did not wait for its "
            "kernels)")):
        """Zeroes the status words (for the next call) and raises their GuardError."""
        b, nbytes = self._status
        _check(cu.cuMemsetD8Async(st.counter(b, nbytes, sh), 0, nbytes, sh),
               "zeroing the status words of the program's guards")
        _check(cu.cuStreamSynchronize(sh), f"waiting for {self.plan.name!r} to finish")
        self._settle_watch(st, sh)
        raise self.plan.guard_error(words, when)

    def _queue(self, cu, st, sh, ptrs):
        """Queues the plan's steps on stream `sh`, its buffers at `ptrs`."""
        launch = cu.cuLaunchKernel
        for i, op, func, pack, grid in st.steps(self):
            if pack is not None:
                pack.fill(ptrs)
                if op[6] and st.programmatic:
                    config = st.launch_config(i, op)
                    config.hStream = sh
                    err = cu.cuLaunchKernelEx(config, func, pack.address, 0)[0]
                else:
                    block = op[3]
                    err = launch(func, grid[0], grid[1], grid[2], block[0], block[1],
                                 block[2], op[4], sh, pack.address, 0)[0]
                if err != _SUCCESS:
                    raise DeviceError(f"CUDA driver error while launching kernel "
                                      f"{op[1]!r} of {self.plan.name!r} (grid "
                                      f"{list(grid)}, block {list(op[3])}): "
                                      f"{_err_name(cu, err)}")
            else:
                _, src, dst, nbytes = op
                if nbytes:
                    _check(cu.cuMemcpyDtoDAsync(ptrs[dst], ptrs[src], nbytes, sh),
                           f"copying buffer {src} to buffer {dst} of {self.plan.name!r}")

    @staticmethod
    def _free(cu, st, allocs, sh):
        if not allocs:
            return
        if st.async_alloc:
            for p in allocs:
                cu.cuMemFreeAsync(p, sh)
        else:
            cu.cuStreamSynchronize(sh)
            for p in allocs:
                cu.cuMemFree(p)

    @staticmethod
    def _wait_stream(cu, producer: int, consumer: int):
        ev = _check(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING),
                    "creating an event")
        try:
            _check(cu.cuEventRecord(ev, producer), "recording an event on the producer stream")
            _check(cu.cuStreamWaitEvent(consumer, ev, 0), "waiting for the producer stream")
        finally:
            cu.cuEventDestroy(ev)

    @staticmethod
    def _output_library(in_recs: Sequence[_Arg]) -> str:
        libs = {a.lib for a in in_recs if not a.host}
        if "torch" in libs:
            return "torch"
        if "cupy" in libs:
            return "cupy"
        return "numpy"

    def _new_output(self, lib, spec, ordinal) -> _Arg:
        if lib == "torch":
            torch = _torch()
            t = torch.empty(spec.shape, dtype=_torch_maps[1][spec.dtype.name],
                            device=_torch_device(torch, ordinal))
            # allocated on torch's current stream: ordered before `sh` like an input
            return _Arg(t, "torch", False, spec.shape, spec.dtype, spec.name, t.data_ptr(),
                        ordinal, _torch_current_stream(torch, ordinal))
        npdt = _to_numpy(spec.dtype, f"output {spec.name!r}")
        if lib == "cupy":
            import cupy
            with cupy.cuda.Device(ordinal):
                a = cupy.empty(spec.shape, dtype=npdt)
                return _Arg(a, "cupy", False, spec.shape, spec.dtype, spec.name,
                            int(a.data.ptr), ordinal, int(cupy.cuda.get_current_stream().ptr))
        return _host_arg(np.empty(spec.shape, dtype=npdt))


def _to_numpy(dt: DType, what: str) -> np.dtype:
    try:
        return dtypes.to_numpy(dt)
    except KeyError as e:
        msg = e.args[0] if e.args else str(e)
        raise CallError(f"{what} has dtype {dt.name}: {msg} (pip install ml_dtypes), or pass "
                        f"torch tensors") from None


def _np_dtype(npdt) -> Optional[DType]:
    try:
        return dtypes.get(npdt)
    except (KeyError, TypeError, ValueError):
        return None


Executable = CudaExecutable
