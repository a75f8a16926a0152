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
from typing import Any, Callable, NamedTuple, Optional, Tuple

import numpy as np

from . import _core, _dtypes
from ._devices import ANY_CUDA_ORDINAL, CPU, Device, cuda, device_name, is_cuda, same_device
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
        """Compact row-major (C order); dimensions of extent 1 may have any stride, and an empty
        array is contiguous whatever its strides (numpy gives empty arrays stride 0)."""
        if 0 in self.shape:
            return True
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
        f"__cuda_array_interface__); got {type(obj).__name__}"
    )


def scipy_sparse_format(obj: Any) -> Optional[str]:
    scipy_sparse = sys.modules.get("scipy.sparse")
    if scipy_sparse is not None and scipy_sparse.issparse(obj):
        return str(obj.format)
    return None


def input_view(
    obj: Any, argument: str, *, stream: Optional[int], device: Device, dtype: str,
    readable: Callable[[ArrayView], bool], convert: bool = True,
    ranks: Optional[Tuple[int, ...]] = None,
) -> ArrayView:
    """An input (B, bias, values) as the core will read it: in ``dtype`` and a layout
    ``readable`` accepts. Anything else numpy would accept is copied once, in the caller's own
    library (numpy for array-likes on the host); an input on the wrong device is refused before
    anything is copied. With ``convert`` False (the caller passed ``out``, so it chose the
    dtype) an input of another dtype is refused, saying how to call instead. An input of a rank
    not in ``ranks`` (when given) is refused before anything is copied."""
    if array_kind(obj) is None:
        fmt = scipy_sparse_format(obj)
        if fmt is not None:
            raise UnsupportedError(
                f"{argument} is a scipy.sparse {type(obj).__name__}; bsrmm multiplies by "
                f"dense arrays: pass {argument}.toarray()"
            )
        if is_cuda(device):
            raise UnsupportedError(
                f"{argument} must be an array on {device_name(device)} (torch, cupy, or an object "
                f"with __dlpack__ or __cuda_array_interface__); got {type(obj).__name__}"
            )
        obj = as_numpy(obj, argument)
    array_view = view(obj, argument, stream=stream)
    check_device(array_view, argument, device)
    if array_view.dtype not in _dtypes.CONVERTIBLE:
        raise UnsupportedError(
            f"{argument} has dtype {array_view.dtype}; bsrmm converts real numbers (bool, "
            f"integers, floats) to A's dtype {dtype}"
        )
    if ranks is not None and len(array_view.shape) not in ranks:
        allowed = " or ".join(f"{rank}-D" for rank in ranks)
        raise InvalidArgumentError(
            f"{argument} must be {allowed}; got {len(array_view.shape)}-D with shape "
            f"{array_view.shape}"
        )
    if array_view.dtype == dtype and readable(array_view):
        return array_view
    if not convert and array_view.dtype != dtype:
        raise UnsupportedError(
            f"{argument} has dtype {array_view.dtype} but A and out have {dtype}: pass "
            f"{argument} in {dtype} ({argument}.astype(...)), or leave out=None and bsrmm "
            f"converts {argument} and allocates the result"
        )
    return view(contiguous_copy(obj, array_view, argument, dtype, stream), argument, stream=stream)


def check_device(array_view: ArrayView, argument: str, device: Device) -> None:
    """Refuses an array on another device than A's (``device``), naming both."""
    if not same_device(array_view.device, device):
        where = device_name(array_view.device)
        raise InvalidArgumentError(
            f"{argument} is on {where} but A is on {device_name(device)}: move A with "
            f"A.to({where!r}) or the array to {device_name(device)}"
        )


def as_numpy(obj: Any, argument: str) -> np.ndarray:
    """A host array-like (list, memoryview, ...) as numpy reads it."""
    try:
        return np.asarray(obj)
    except (TypeError, ValueError) as error:  # numpy's own words, after the argument's name
        raise UnsupportedError(
            f"{argument} ({type(obj).__name__}) is not an array numpy can read: {error}"
        ) from None


def from_dlpack(obj: Any, argument: str) -> np.ndarray:
    """A host DLPack producer's array as numpy (without a copy where numpy can)."""
    try:
        return np.from_dlpack(obj)
    except (BufferError, TypeError, RuntimeError) as error:
        raise UnsupportedError(
            f"{argument} ({type(obj).__name__}) cannot be read through numpy: {error}"
        ) from None


def contiguous_copy(
    obj: Any, array_view: ArrayView, argument: str, dtype: Optional[str], stream: Optional[int]
) -> Any:
    """A compact row-major copy of ``obj`` (converted to ``dtype`` when given), made by the
    library that owns it: numpy, torch or cupy. Other producers are read through numpy on the
    host; on a GPU only they can copy their arrays. A GPU copy is made on ``stream``, the
    stream the call runs on: it is then written before the call reads it, and torch's and
    cupy's pools reuse its memory only after that stream's later work (the call) is done."""
    kind = array_view.kind
    on_gpu = is_cuda(array_view.device) and stream is not None
    if kind == TORCH:
        torch = sys.modules["torch"]
        target = getattr(torch, dtype or array_view.dtype)

        def torch_copy() -> Any:  # one copy, whatever differs (dtype, strides or both)
            copy = torch.empty_like(obj, dtype=target, memory_format=torch.contiguous_format)
            return copy.copy_(obj)

        if not on_gpu:
            return torch_copy()
        index = array_view.device[1]
        on = torch.cuda.default_stream(index) if stream == 0 else torch.cuda.ExternalStream(
            stream, device=index)
        with torch.cuda.stream(on):
            return torch_copy()
    if kind == CUPY:
        cupy = sys.modules["cupy"]
        on = cupy.cuda.Stream.null if not stream else cupy.cuda.ExternalStream(stream)
        with cupy.cuda.Device(array_view.device[1]), on:
            return obj.astype(dtype or obj.dtype, order="C", copy=True)
    if is_cuda(array_view.device):
        raise UnsupportedError(
            f"{argument} ({type(obj).__name__}, dtype {array_view.dtype}, element strides "
            f"{array_view.strides}) cannot be read in place, and bsrmm copies only numpy, torch "
            f"and cupy arrays: pass a contiguous {dtype or array_view.dtype} array"
        )
    if kind != NUMPY:
        obj = from_dlpack(obj, argument)
    target = None if dtype is None else _dtypes.numpy_dtype(dtype)
    return np.array(obj, dtype=target, order="C")  # not ascontiguousarray: that makes 0-d 1-D


def aligned(array_view: ArrayView) -> bool:
    return array_view.address % _dtypes.ITEMSIZE.get(array_view.dtype, 1) == 0


def readable_contiguous(array_view: ArrayView) -> bool:
    """Whether the core reads this input (a bias, values) as it lies: aligned and contiguous."""
    return array_view.is_contiguous and aligned(array_view)


def readable_layout(array_view: ArrayView) -> bool:
    """Whether the core reads this input as it lies: aligned, 1-D or 2-D, row- or column-major."""
    return (
        len(array_view.shape) in (1, 2)
        and aligned(array_view)
        and _layout(array_view.shape, array_view.strides) is not None
    )


def _layout(shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Optional[Tuple[int, int, int, int]]:
    """(rows, cols, ld, layout) of a 1-D or 2-D view the core reads in place, else None.
    Row-major when the last dimension has unit stride, column-major when the first has; the
    other stride becomes the leading dimension."""
    if len(shape) == 1:
        shape, strides = (shape[0], 1), (strides[0], 1)
    rows, cols = shape
    if rows == 0 or cols == 0:
        return rows, cols, max(cols, 1), _core.LAYOUT_ROW_MAJOR
    row_stride, col_stride = strides
    if (cols == 1 or col_stride == 1) and (rows == 1 or row_stride >= cols):
        return rows, cols, row_stride if rows > 1 else cols, _core.LAYOUT_ROW_MAJOR
    if (rows == 1 or row_stride == 1) and (cols == 1 or col_stride >= rows):
        return rows, cols, col_stride if cols > 1 else rows, _core.LAYOUT_COL_MAJOR
    return None


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
    """The view as the core's dense descriptor. Layouts the core cannot read are refused here;
    inputs were copied into one by input_view already, so what reaches this is ``out`` (which
    must be written where it lies) or an array bsrmm made."""
    if len(array_view.shape) not in (1, 2):
        raise InvalidArgumentError(
            f"{argument} must be 1-D or 2-D; got {len(array_view.shape)}-D with shape "
            f"{array_view.shape}"
        )
    dtype = _dtypes.value_code(array_view.dtype, argument)
    layout = _layout(array_view.shape, array_view.strides)
    if layout is None:
        raise InvalidArgumentError(
            f"{argument} must be row-major or column-major (unit stride along one dimension, "
            f"the other at least that dimension's extent) to be written in place; it has shape "
            f"{array_view.shape} and element strides {array_view.strides}. Pass a contiguous "
            f"array as {argument} and copy it into yours afterwards"
        )
    rows, cols, ld, order = layout
    return DenseOperand(array_view, rows, cols, ld, order, dtype)


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
