"""Braze's dtypes under the names nvFuser's Python frontend uses (DataType.Float, .Half, ...)."""

from braze import _braze

_Core = _braze.CoreDataType


_UNSUPPORTED = ("ComplexFloat", "ComplexDouble", "Float8_e8m0fnu")


class _DataTypeNames(type):
    def __getattr__(cls, name):
        if name in _UNSUPPORTED:
            raise AttributeError(
                f"DataType.{name} is not a Braze dtype yet; Braze has Bool, Int32, Int (int64), "
                "Half, BFloat16, Float, Double, Float8_e4m3fn, Float8_e5m2 and Index"
            )
        raise AttributeError(f"DataType has no member {name!r}")


class DataType(metaclass=_DataTypeNames):
    """Dtypes of fusion values. ``Null`` means "not given" (the op's default)."""

    Bool = _Core.Bool
    Int32 = _Core.Int32
    Int = _Core.Int64
    Int64 = _Core.Int64
    Half = _Core.Float16
    Float16 = _Core.Float16
    BFloat16 = _Core.BFloat16
    Float = _Core.Float32
    Float32 = _Core.Float32
    Double = _Core.Float64
    Float64 = _Core.Float64
    Index = _Core.Index
    # float8 as PyTorch's torch.float8_e4m3fn / torch.float8_e5m2. NumPy has none: host results
    # come back as uint8 arrays of the bits; CUDA tensors cross through DLPack.
    Float8_e4m3fn = _Core.Float8_e4m3fn
    Float8_e5m2 = _Core.Float8_e5m2
    Null = None


def from_torch(dtype):
    """The DataType of a torch.dtype (for from_pytorch)."""
    import torch

    table = {
        torch.bool: DataType.Bool,
        torch.int32: DataType.Int32,
        torch.int64: DataType.Int,
        torch.float16: DataType.Half,
        torch.bfloat16: DataType.BFloat16,
        torch.float32: DataType.Float,
        torch.float64: DataType.Double,
    }
    for name in ("float8_e4m3fn", "float8_e5m2"):
        if hasattr(torch, name):
            table[getattr(torch, name)] = getattr(DataType, name.capitalize())
    if dtype not in table:
        raise _braze.Error(f"torch dtype {dtype} has no Braze dtype")
    return table[dtype]
