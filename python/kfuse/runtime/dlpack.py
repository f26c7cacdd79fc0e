"""Zero-copy view of a foreign array: its data pointer, shape, dtype and device.

Reads the DLPack protocol (``__dlpack__`` / ``__dlpack_device__``) first, then
``__cuda_array_interface__``. Pure ctypes; no CUDA driver calls here.

The DLPack capsule is neither consumed nor renamed: it stays named ``"dltensor"`` so its
destructor calls the producer's deleter when the capsule is garbage collected. The
returned :class:`ArrayInfo` keeps the capsule alive (``keepalive``) for as long as the
pointer is used.
"""

from __future__ import annotations

import ctypes
import functools
import math
import struct
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from .. import dtypes
from ..dtypes import DType

# DLDeviceType values
kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLCUDAManaged = 13
CUDA_DEVICE_TYPES = (kDLCUDA, kDLCUDAManaged)

DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                10: "rocm", 11: "rocm_host", 13: "cuda_managed", 14: "oneapi"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
    ]


_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


class DLPackError(ValueError):
    """The object's DLPack / CUDA array interface export could not be read."""


@dataclass(slots=True)
class ArrayInfo:
    ptr: int                         # address of element 0 (data + byte_offset)
    shape: Tuple[int, ...]
    dtype: Optional[DType]           # None when kfuse has no such dtype (see dtype_label)
    dtype_label: str                 # how the dtype is spelled in messages
    device_type: int                 # DLDeviceType (kDLCUDA = 2)
    device_id: int
    contiguous: bool                 # C-contiguous (strides ignored for size-1 dims)
    strides: Optional[Tuple[int, ...]]   # in elements; None = C-contiguous
    keepalive: Any                   # keep this alive while ptr is used
    stream: Optional[int] = None     # CUDA array interface v3 'stream' (producer's stream)
    source: str = "dlpack"           # "dlpack" or "cai"

    @property
    def is_cuda(self) -> bool:
        return self.device_type in CUDA_DEVICE_TYPES

    @property
    def device_name(self) -> str:
        return DEVICE_NAMES.get(self.device_type, f"device type {self.device_type}")

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def is_c_contiguous(shape, strides) -> bool:
    """True if element ``strides`` describe a C-contiguous layout of ``shape``."""
    if strides is None:
        return True
    if any(s == 0 for s in shape):
        return True
    expected = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1 and st != expected:
            return False
        expected *= n
    return True


def _dlpack_label(code: int, bits: int, lanes: int) -> str:
    kind = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}.get(code, f"code{code}_")
    return f"{kind}{bits}" + (f"x{lanes}" if lanes != 1 else "")


# DLTensor read with one struct.unpack (much faster than walking ctypes fields); the
# layout is the one of the DLTensor Structure above (checked by the tests).
_DLTENSOR = struct.Struct("<QiiiBBHQQQ")
assert _DLTENSOR.size == ctypes.sizeof(DLTensor) == 48
_LABELS = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
           "i1": "bool", "i32": "int32", "i64": "int64"}
_DT_CACHE = {}


def _dl_dtype(code: int, bits: int, lanes: int):
    key = (code, bits, lanes)
    hit = _DT_CACHE.get(key)
    if hit is None:
        dt = None
        if lanes == 1:
            try:
                dt = dtypes.from_dlpack(code, bits)
            except KeyError:
                dt = None
        hit = (dt, _LABELS[dt.name] if dt is not None else _dlpack_label(code, bits, lanes))
        _DT_CACHE[key] = hit
    return hit


def parse_capsule(capsule) -> ArrayInfo:
    """Reads a ``"dltensor"`` PyCapsule (as returned by ``__dlpack__()``) without consuming it."""
    if not _PyCapsule_IsValid(capsule, b"dltensor"):
        raise DLPackError("not an unconsumed DLPack capsule named 'dltensor' "
                          "(versioned 'dltensor_versioned' capsules are not read)")
    addr = _PyCapsule_GetPointer(capsule, b"dltensor")
    if not addr:
        raise DLPackError("DLPack capsule holds a NULL pointer")
    # DLManagedTensor starts with its DLTensor
    (data, dev_type, dev_id, ndim, code, bits, lanes, shape_p, strides_p,
     byte_offset) = _DLTENSOR.unpack(ctypes.string_at(addr, _DLTENSOR.size))
    if ndim < 0:
        raise DLPackError(f"DLPack tensor has ndim {ndim}")
    if ndim:
        if not shape_p:
            raise DLPackError("DLPack tensor has a NULL shape")
        shape = struct.unpack(f"<{ndim}q", ctypes.string_at(shape_p, 8 * ndim))
        strides = struct.unpack(f"<{ndim}q", ctypes.string_at(strides_p, 8 * ndim)) \
            if strides_p else None
    else:
        shape, strides = (), (() if strides_p else None)
    dt, label = _dl_dtype(code, bits, lanes)
    return ArrayInfo(ptr=data + byte_offset, shape=shape, dtype=dt, dtype_label=label,
                     device_type=dev_type, device_id=dev_id,
                     contiguous=is_c_contiguous(shape, strides), strides=strides,
                     keepalive=capsule, source="dlpack")


@functools.lru_cache(maxsize=64)
def _typestr_dtype(typestr: str):
    # (cached: parsing a typestr with numpy costs ~10 us, on every call)
    try:
        npdt = np.dtype(typestr)
    except TypeError:
        return None, typestr
    try:
        return dtypes.get(npdt), npdt.name
    except KeyError:
        return None, npdt.name


def from_cuda_array_interface(obj, cai: Optional[dict] = None) -> ArrayInfo:
    """Reads ``obj.__cuda_array_interface__`` (versions 0-3)."""
    if cai is None:
        cai = obj.__cuda_array_interface__
    try:
        shape = tuple(map(int, cai["shape"]))
        typestr = cai["typestr"]
        ptr = int(cai["data"][0] or 0)
    except (KeyError, TypeError, IndexError, ValueError) as e:
        raise DLPackError(f"malformed __cuda_array_interface__: {e!r}") from None
    dt, label = (_typestr_dtype(typestr) if isinstance(typestr, str)
                 else (None, repr(typestr)))
    strides = cai.get("strides")
    contiguous = True
    if strides is not None:
        itemsize = np.dtype(typestr).itemsize if dt is None else dt.itemsize
        if any(int(s) % itemsize for s in strides):
            contiguous = False
            strides = tuple(int(s) for s in strides)
        else:
            strides = tuple(int(s) // itemsize for s in strides)
            contiguous = is_c_contiguous(shape, strides)
    if cai.get("mask") is not None:
        raise DLPackError("masked __cuda_array_interface__ arrays are not supported")
    stream = cai.get("stream")
    return ArrayInfo(ptr, shape, dt, label, kDLCUDA, -1, contiguous, strides, obj,
                     None if stream is None else int(stream), "cai")


def dlpack_stream_arg(stream_handle: Optional[int]) -> Optional[int]:
    """The ``stream=`` value to pass to ``__dlpack__`` for a CUDA stream handle.

    The DLPack protocol forbids 0 for CUDA: the legacy default stream (handle 0 / NULL) is
    spelled 1; 2 is the per-thread default stream; None asks for no synchronisation."""
    if stream_handle is None:
        return None
    return 1 if stream_handle == 0 else int(stream_handle)


def inspect(obj, stream: Optional[int] = None) -> ArrayInfo:
    """Returns the :class:`ArrayInfo` of a DLPack or CUDA-array-interface object.

    ``stream``: the CUDA stream handle the consumer (kfuse) will use the data on; passed to
    ``__dlpack__(stream=...)`` for CUDA producers so they order their pending work before
    it (``None`` = no synchronisation). Raises DLPackError if neither protocol is usable."""
    dl = getattr(obj, "__dlpack__", None)
    if dl is not None:
        dev = None
        get_dev = getattr(obj, "__dlpack_device__", None)
        if get_dev is not None:
            try:
                dev = tuple(int(v) for v in get_dev())
            except Exception:  # noqa: BLE001 - fall through to a plain __dlpack__()
                dev = None
        try:
            if dev is not None and dev[0] in CUDA_DEVICE_TYPES and stream is not None:
                capsule = dl(stream=dlpack_stream_arg(stream))
            else:
                capsule = dl()
        except (BufferError, TypeError, ValueError, RuntimeError) as e:
            if hasattr(obj, "__cuda_array_interface__"):
                return from_cuda_array_interface(obj)
            raise DLPackError(f"__dlpack__() failed: {e}") from None
        return parse_capsule(capsule)
    if hasattr(obj, "__cuda_array_interface__"):
        return from_cuda_array_interface(obj)
    raise DLPackError(f"{type(obj).__name__} supports neither __dlpack__ nor "
                      f"__cuda_array_interface__")
