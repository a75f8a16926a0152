"""Element types: the four value types the core computes with, the two index types, and their
names in numpy (bfloat16 through ml_dtypes) and torch. The array reader (csrc/array_view.cpp)
describes every element type by its numpy-style name ("float32", "int64", ...); this module
turns names into the core's codes and back."""

from __future__ import annotations

from typing import Dict

import numpy as np

from . import _core
from ._errors import UnsupportedError

VALUE_CODES = {
    "float32": _core.DTYPE_F32,
    "float16": _core.DTYPE_F16,
    "bfloat16": _core.DTYPE_BF16,
    "float64": _core.DTYPE_F64,
}
# The 8-bit floats (OCP E4M3 and E5M2): A's values and B of a multiply only, each with float32
# scales (see _fp8.py). bsrmm names them "float8_e4m3" / "float8_e5m2"; numpy (ml_dtypes) and
# torch call E4M3 "float8_e4m3fn" (finite: no infinities), the name their arrays carry.
FP8_CODES = {
    "float8_e4m3": _core.DTYPE_FLOAT8_E4M3,
    "float8_e5m2": _core.DTYPE_FLOAT8_E5M2,
}
FP8_ARRAY_NAMES = {"float8_e4m3fn": "float8_e4m3", "float8_e5m2": "float8_e5m2"}
VALUE_NAMES = {code: name for name, code in (*VALUE_CODES.items(), *FP8_CODES.items())}

INDEX_CODES = {"int32": _core.INDEX_I32, "int64": _core.INDEX_I64}

INTEGER_NAMES = frozenset(
    f"{sign}int{bits}" for sign in ("", "u") for bits in (8, 16, 32, 64)
)
# Element types an input may have: real numbers, converted to A's dtype on a copy (as numpy
# converts them); "bool8" is DLPack's name for bool.
CONVERTIBLE = INTEGER_NAMES | VALUE_CODES.keys() | {"bool", "bool8"}

_SUPPORTED_VALUES = "float32, float16, bfloat16 or float64"


def value_code(dtype_name: str, argument: str) -> int:
    code = VALUE_CODES.get(dtype_name)
    if code is None:
        raise UnsupportedError(
            f"{argument} has dtype {dtype_name}; bsrmm computes with {_SUPPORTED_VALUES}"
        )
    return code


def index_code(dtype_name: str, argument: str) -> int:
    code = INDEX_CODES.get(dtype_name)
    if code is None:
        raise UnsupportedError(f"{argument} has dtype {dtype_name}; indices must be int32 or int64")
    return code


def value_name(dtype: object, argument: str) -> str:
    """A value type given as numpy does (a name, a numpy dtype or scalar type, ml_dtypes'
    bfloat16) or as a torch dtype, by its name here."""
    if isinstance(dtype, str) and dtype in VALUE_CODES:
        return dtype
    if type(dtype).__module__ == "torch":  # torch.float32 and friends, without importing torch
        name = torch_name(dtype)
    else:
        try:
            name = numpy_name(np.dtype(dtype))  # type: ignore[call-overload]
        except TypeError:
            raise UnsupportedError(
                f"{argument} must be a dtype ({_SUPPORTED_VALUES}); got {dtype!r}"
            ) from None
    value_code(name, argument)
    return name


_numpy_names: Dict[np.dtype, str] = {}


def numpy_name(dtype: np.dtype) -> str:
    """The name of a numpy dtype; ml_dtypes' bfloat16 is named "bfloat16" like everywhere else.
    Cached: numpy computes ``dtype.name`` in Python, slowly, and this is on every call's path."""
    name = _numpy_names.get(dtype)
    if name is None:
        name = _numpy_names[dtype] = np.dtype(dtype).name
    return name


def numpy_dtype(dtype_name: str) -> np.dtype:
    """The numpy dtype for a value type; bfloat16 and the fp8 types need the ml_dtypes package."""
    if dtype_name in FP8_CODES:
        try:
            import ml_dtypes
        except ImportError:
            raise UnsupportedError(
                f"{dtype_name} arrays in numpy need the ml_dtypes package (pip install ml_dtypes)"
            ) from None
        return np.dtype(ml_dtypes.float8_e4m3fn if dtype_name == "float8_e4m3" else ml_dtypes.float8_e5m2)
    if dtype_name == "bfloat16":
        try:  # imported only when a bfloat16 numpy array is asked for
            import ml_dtypes
        except ImportError:
            raise UnsupportedError(
                "bfloat16 arrays in numpy need the ml_dtypes package (pip install ml_dtypes)"
            ) from None
        bfloat16: np.dtype = np.dtype(ml_dtypes.bfloat16)
        return bfloat16
    return np.dtype(dtype_name)


_torch_names: Dict[object, str] = {}


def torch_name(torch_dtype: object) -> str:
    """torch.float32 -> "float32" without importing torch (cached: on every call's path)."""
    name = _torch_names.get(torch_dtype)
    if name is None:
        name = _torch_names[torch_dtype] = str(torch_dtype).rsplit(".", 1)[-1]
    return name
