"""Arrays in, arrays out. Reading an array, whatever protocol it speaks, is _core's one reader
(csrc/array_view.cpp): an ArrayView (address, shape, element strides, element type, device) and
the layout the core reads it in, shared with the direct path. What stays here needs the caller's
array library: copies of inputs the core cannot read as they lie (converted to A's dtype where
bsrmm allocates the result), and results allocated as the caller's own array type.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, NamedTuple, Optional, Tuple

import numpy as np

from . import _core, _dtypes
from ._devices import Device, device_name, is_cuda, same_device
from ._errors import InvalidArgumentError, UnsupportedError

NUMPY = "numpy"
TORCH = "torch"
CUPY = "cupy"
DLPACK = "dlpack"
CUDA_ARRAY_INTERFACE = "cuda_array_interface"

ArrayView = _core.ArrayView
# The array protocol an object speaks (one of the names above), or None.
array_kind = _core.array_kind
# The caller's array as an ArrayView, without copying: view(obj, argument, stream=...). ``stream``
# is the CUDA stream the call will run on (handed to DLPack producers to order their work).
view = _core.read_array
# Where an array lives, read without exporting it: source_device(obj, argument).
source_device = _core.array_device
# Whether the core reads an input as it lies: aligned, 1-D or 2-D, row- or column-major ...
readable_layout = _core.readable_layout
# ... or, for a bias or values, aligned and compact.
readable_contiguous = _core.readable_contiguous


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
    """Refuses an input on another device than A's (``device``) before it would be copied."""
    if not same_device(array_view.device, device):
        raise device_mismatch(argument, device_name(array_view.device), device_name(device))


def device_mismatch(argument: str, where: str, a_device: str) -> InvalidArgumentError:
    """An array on ``where`` for A on ``a_device``, and the two ways out."""
    return InvalidArgumentError(
        f"{argument} is on {where} but A is on {a_device}: move A with A.to({where!r}) or the "
        f"array to {a_device}"
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


def dense_operand(array_view: ArrayView, argument: str, *, written: bool = False) -> DenseOperand:
    """The view as the core's dense descriptor (the reader's layout). A rank, dtype or layout no
    descriptor expresses is refused, and so is a ``written`` view the caller did not let us
    write; inputs were copied into a readable layout by input_view already, so a layout error
    reaches ``out`` (written where it lies) only."""
    return DenseOperand(array_view, *_core.dense_shape(array_view, argument, written))


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
