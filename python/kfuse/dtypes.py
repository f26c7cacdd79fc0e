"""Element types kfuse knows, and how they are spelled in MLIR, numpy and DLPack.

Pure Python: the runtime uses it on machines without MLIR."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    name: str          # kfuse / MLIR spelling: "f32"
    itemsize: int      # bytes per element
    kind: str          # "float", "int", "bool"
    dlpack_code: int   # DLDataTypeCode: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool
    bits: int

    @property
    def mlir(self) -> str:
        return self.name

    @property
    def is_float(self) -> bool:
        return self.kind == "float"


F32 = DType("f32", 4, "float", 2, 32)
F16 = DType("f16", 2, "float", 2, 16)
BF16 = DType("bf16", 2, "float", 4, 16)
F64 = DType("f64", 8, "float", 2, 64)
I1 = DType("i1", 1, "bool", 6, 8)
I8 = DType("i8", 1, "int", 0, 8)
I32 = DType("i32", 4, "int", 0, 32)
I64 = DType("i64", 8, "int", 0, 64)

ALL = {d.name: d for d in (F32, F16, BF16, F64, I1, I8, I32, I64)}
_ALIASES = {
    "float32": F32, "float": F32, "float16": F16, "half": F16, "bfloat16": BF16,
    "float64": F64, "double": F64, "bool": I1, "int8": I8, "int32": I32, "int64": I64,
}


def _bf16_numpy():
    try:
        import ml_dtypes  # optional: numpy has no bfloat16 of its own
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def get(spec) -> DType:
    """Returns the DType for a name ('f32', 'float16', ...), a numpy dtype or a DType."""
    if isinstance(spec, DType):
        return spec
    if isinstance(spec, str):
        key = spec.lower()
        if key in ALL:
            return ALL[key]
        if key in _ALIASES:
            return _ALIASES[key]
        raise KeyError(spec)
    name = getattr(spec, "name", None)  # numpy dtype, numpy scalar type, torch dtype
    if name is None and isinstance(spec, type):
        name = np.dtype(spec).name
    if name is None:
        name = str(spec).replace("torch.", "")
    return get(str(name))


def to_numpy(dt: DType) -> np.dtype:
    if dt is BF16:
        bf = _bf16_numpy()
        if bf is None:
            raise KeyError("bf16 arrays on the host need the ml_dtypes package")
        return bf
    return np.dtype({"f32": "float32", "f16": "float16", "f64": "float64",
                     "i1": "bool", "i8": "int8", "i32": "int32", "i64": "int64"}[dt.name])


def from_dlpack(code: int, bits: int) -> DType:
    for d in ALL.values():
        if d.dlpack_code == code and d.bits == bits:
            return d
    if code == 1 and bits == 8:  # some producers export bool as uint8
        return I1
    raise KeyError(f"DLPack dtype (code={code}, bits={bits})")
