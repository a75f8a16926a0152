"""Arrays in, arrays out: every array protocol bsrmm accepts, reduced to one ArrayView (address,
shape, element strides, element type, device), and results allocated as the caller's own type.

Accepted, in order of preference: numpy arrays, torch tensors, cupy arrays, then any object with
``__dlpack__`` (the producer makes its data ready on the stream we name) or
``__cuda_array_interface__``. torch and cupy are never imported here: a tensor of theirs can only
exist if the caller already imported them, so ``sys.modules`` says whether to look.
"""

from __future__ import annotations

import math
import sys
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from . import _core, _dtypes
from ._devices import ANY_CUDA_ORDINAL, CPU, Device, cuda, device_name, is_cuda
from ._errors import InvalidArgumentError, UnsupportedError

NUMPY = "numpy"
TORCH = "torch"
CUPY = "cupy"
DLPACK = "dlpack"
CUDA_ARRAY_INTERFACE = "cuda_array_interface"

# DLPack device types (DLDeviceType) that the core can address.
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13


# NamedTuples, not dataclasses: these are built on every call, and tuples build fastest.
class ArrayView(NamedTuple):
    """An array the core can read or write where it lies."""

    kind: str
    source: Any  # the caller's object: keeps the memory alive while the view is in use
    address: int
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]  # in elements
    dtype: str  # numpy-style name, e.g. "float32", "bfloat16", "int64"
    device: Device
    read_only: bool
    holder: Any = None  # a consumed DLPack capsule, released when the view is dropped

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def is_contiguous(self) -> bool:
        """Compact row-major (C order); dimensions of extent 1 may have any stride."""
        expected = 1
        for extent, stride in zip(reversed(self.shape), reversed(self.strides)):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True

    def byte_span(self) -> Tuple[int, int]:
        """[first, past-the-end) bytes this view can touch; empty for an empty array."""
        low = high = 0
        for extent, stride in zip(self.shape, self.strides):
            if extent == 0:
                return (self.address, self.address)
            if stride < 0:
                low += (extent - 1) * stride
            else:
                high += (extent - 1) * stride
        itemsize = _dtypes.ITEMSIZE.get(self.dtype, 1)
        return (self.address + low * itemsize, self.address + (high + 1) * itemsize)


def _module_instance(obj: Any, module: str, type_name: str) -> bool:
    lib = sys.modules.get(module)
    return lib is not None and isinstance(obj, getattr(lib, type_name))


def array_kind(obj: Any) -> Optional[str]:
    if isinstance(obj, np.ndarray):
        return NUMPY
    if _module_instance(obj, "torch", "Tensor"):
        return TORCH
    if _module_instance(obj, "cupy", "ndarray"):
        return CUPY
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return DLPACK
    if hasattr(obj, "__cuda_array_interface__"):
        return CUDA_ARRAY_INTERFACE
    return None


def _element_strides(byte_strides: Tuple[int, ...], itemsize: int, argument: str) -> Tuple[int, ...]:
    strides = tuple(s // itemsize for s in byte_strides)
    for element_stride, byte_stride in zip(strides, byte_strides):
        if element_stride * itemsize != byte_stride:
            raise InvalidArgumentError(
                f"{argument} has byte strides {tuple(byte_strides)} that are not multiples of its "
                f"element size {itemsize}"
            )
    return strides


def _compact_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _native(dtype: np.dtype, argument: str) -> np.dtype:
    if not dtype.isnative:
        raise UnsupportedError(f"{argument} has non-native byte order ({dtype.str})")
    return dtype


def _numpy_view(array: np.ndarray, argument: str) -> ArrayView:
    dtype = _native(array.dtype, argument)
    return ArrayView(  # positional: measurably faster than keywords on this hot path
        NUMPY,
        array,
        array.__array_interface__["data"][0],
        array.shape,
        _element_strides(array.strides, dtype.itemsize, argument),
        _dtypes.numpy_name(dtype),
        CPU,
        not array.flags.writeable,
    )


def _torch_device(tensor: Any, argument: str) -> Device:
    if tensor.device.type == "cpu":
        return CPU
    if tensor.device.type == "cuda":
        return cuda(tensor.device.index if tensor.device.index is not None else 0)
    raise UnsupportedError(
        f"{argument} is on torch device '{tensor.device}'; bsrmm reads cpu and cuda memory"
    )


def _torch_view(tensor: Any, argument: str) -> ArrayView:
    torch = sys.modules["torch"]
    if tensor.layout != torch.strided:
        raise UnsupportedError(
            f"{argument} is a torch tensor with layout {tensor.layout}; a dense (strided) tensor "
            "is needed here"
        )
    return ArrayView(
        TORCH,
        tensor,
        tensor.data_ptr(),  # includes the storage offset
        tuple(tensor.shape),
        tensor.stride(),
        _dtypes.torch_name(tensor.dtype),
        _torch_device(tensor, argument),
        False,
    )


def _cuda_interface_view(obj: Any, argument: str, kind: str, device: Device) -> ArrayView:
    interface = obj.__cuda_array_interface__
    if interface.get("mask") is not None:
        raise UnsupportedError(f"{argument} is a masked array; bsrmm reads plain arrays")
    dtype = _native(np.dtype(interface["typestr"]), argument)
    shape = tuple(int(n) for n in interface["shape"])
    byte_strides = interface.get("strides")
    strides = (
        _compact_strides(shape)
        if byte_strides is None
        else _element_strides(tuple(byte_strides), dtype.itemsize, argument)
    )
    address, read_only = interface["data"]
    return ArrayView(
        kind=kind,
        source=obj,
        address=int(address),
        shape=shape,
        strides=strides,
        dtype=_dtypes.numpy_name(dtype),
        device=device,
        read_only=bool(read_only),
    )


def _cupy_view(array: Any, argument: str) -> ArrayView:
    return _cuda_interface_view(array, argument, CUPY, cuda(array.device.id))


def _dlpack_device(obj: Any, argument: str) -> Device:
    device_type, device_id = obj.__dlpack_device__()
    if device_type in (_DL_CPU, _DL_CUDA_HOST):
        return CPU
    if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        return cuda(int(device_id))
    raise UnsupportedError(
        f"{argument} lives on DLPack device type {int(device_type)}; bsrmm reads CPU and CUDA memory"
    )


def _dlpack_view(obj: Any, argument: str, stream: Optional[int]) -> ArrayView:
    device = _dlpack_device(obj, argument)
    # DLPack names CUDA's legacy default stream 1 (0 is reserved); CPU exports take no stream.
    export_stream = (stream or 1) if is_cuda(device) else None
    try:
        capsule = obj.__dlpack__(stream=export_stream, max_version=(1, 0), copy=False)
    except TypeError:  # a producer that predates DLPack 1.0's keywords
        capsule = obj.__dlpack__(stream=export_stream)
    except BufferError as error:
        raise UnsupportedError(f"{argument} cannot be exported in place through DLPack: {error}") from None
    holder = _core.DLPackTensor(capsule)
    shape = tuple(int(n) for n in holder.shape)
    strides = holder.strides
    return ArrayView(
        kind=DLPACK,
        source=obj,
        address=holder.data,
        shape=shape,
        strides=_compact_strides(shape) if strides is None else tuple(int(s) for s in strides),
        dtype=_dtypes.dlpack_name(holder.dtype, argument),
        device=device,
        # A pre-1.0 capsule cannot say whether writing is allowed (JAX arrays are immutable);
        # treat it as read-only so it is never used as `out`.
        read_only=holder.read_only or not holder.versioned,
        holder=holder,
    )


def source_device(obj: Any, argument: str) -> Device:
    """Where an array lives, read without exporting it."""
    kind = array_kind(obj)
    if kind == TORCH:
        return _torch_device(obj, argument)
    if kind == CUPY:
        return cuda(obj.device.id)
    if kind == DLPACK:
        return _dlpack_device(obj, argument)
    if kind == CUDA_ARRAY_INTERFACE:
        return cuda(ANY_CUDA_ORDINAL)
    return CPU


def view(obj: Any, argument: str, *, stream: Optional[int] = None) -> ArrayView:
    """The caller's array as an ArrayView, without copying. ``stream`` is the CUDA stream the
    call will run on (handed to DLPack producers so they can order their work before it)."""
    kind = array_kind(obj)
    if kind == NUMPY:
        return _numpy_view(obj, argument)
    if kind == TORCH:
        return _torch_view(obj, argument)
    if kind == CUPY:
        return _cupy_view(obj, argument)
    if kind == DLPACK:
        return _dlpack_view(obj, argument, stream)
    if kind == CUDA_ARRAY_INTERFACE:
        return _cuda_interface_view(obj, argument, kind, cuda(ANY_CUDA_ORDINAL))
    raise UnsupportedError(
        f"{argument} must be an array (numpy, torch, cupy, or an object with __dlpack__ or "
        f"__cuda_array_interface__); got {type(obj).__name__}. Wrap it with numpy.asarray() first"
    )


class DenseOperand(NamedTuple):
    """A 1-D or 2-D view as the core's dense descriptor: a vector is one column."""

    view: ArrayView
    rows: int
    cols: int
    ld: int
    layout: int
    dtype: int

    def descriptor(self, device: Device) -> _core.Dense:
        return _core.Dense(
            self.view.address, self.rows, self.cols, self.ld, self.layout, self.dtype, *device
        )

    def transposed(self) -> "DenseOperand":
        """The same memory read as its transpose: rows and columns swap, the layout flips."""
        flipped = (
            _core.LAYOUT_COL_MAJOR
            if self.layout == _core.LAYOUT_ROW_MAJOR
            else _core.LAYOUT_ROW_MAJOR
        )
        return DenseOperand(self.view, self.cols, self.rows, self.ld, flipped, self.dtype)


def dense_operand(array_view: ArrayView, argument: str) -> DenseOperand:
    """Row-major when the last dimension has unit stride, column-major when the first has; the
    other stride becomes the leading dimension. Any other layout is refused, never copied: a
    silent copy would hide a slow path (and, for ``out``, lose the result)."""
    shape, strides = array_view.shape, array_view.strides
    if len(shape) == 1:
        shape, strides = (shape[0], 1), (strides[0], 1)
    elif len(shape) != 2:
        raise InvalidArgumentError(
            f"{argument} must be 1-D or 2-D; got {len(shape)}-D with shape {array_view.shape}"
        )
    dtype = _dtypes.value_code(array_view.dtype, argument)
    rows, cols = shape
    if rows == 0 or cols == 0:
        return DenseOperand(array_view, rows, cols, max(cols, 1), _core.LAYOUT_ROW_MAJOR, dtype)
    row_stride, col_stride = strides
    if (cols == 1 or col_stride == 1) and (rows == 1 or row_stride >= cols):
        ld = row_stride if rows > 1 else cols
        return DenseOperand(array_view, rows, cols, ld, _core.LAYOUT_ROW_MAJOR, dtype)
    if (rows == 1 or row_stride == 1) and (cols == 1 or col_stride >= rows):
        ld = col_stride if cols > 1 else rows
        return DenseOperand(array_view, rows, cols, ld, _core.LAYOUT_COL_MAJOR, dtype)
    raise InvalidArgumentError(
        f"{argument} must be row-major or column-major (unit stride along one dimension, the "
        f"other at least that dimension's extent); it has shape {array_view.shape} and element "
        f"strides {array_view.strides}. Make a contiguous copy first (numpy.ascontiguousarray, "
        "tensor.contiguous())"
    )


def empty_like(template: ArrayView, shape: Tuple[int, ...], argument: str) -> Any:
    """An uninitialised array of the template's array type, dtype and device (row-major).
    Objects of other types get numpy on the CPU; on a GPU only the caller can allocate them."""
    if template.kind == TORCH:
        torch = sys.modules["torch"]
        return torch.empty(shape, dtype=template.source.dtype, device=template.source.device)
    if template.kind == CUPY:
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(template.device[1]):
            return cupy.empty(shape, dtype=template.source.dtype)
    if is_cuda(template.device):
        raise UnsupportedError(
            f"{argument} is a {type(template.source).__name__} in {device_name(template.device)} "
            "memory; bsrmm allocates results only as numpy, torch or cupy arrays: pass out="
        )
    if template.kind == NUMPY:
        return np.empty(shape, dtype=template.source.dtype)
    return np.empty(shape, dtype=_dtypes.numpy_dtype(template.dtype))
