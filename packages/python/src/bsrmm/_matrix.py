"""bsrmm.BsrMatrix: a validated block-sparse matrix on one device, immutable once built (the
core keeps an execution plan with it, so a matrix used for many products is prepared once).

Construction always copies the arrays it is given into the core's own storage, so inputs may be
in any layout on the host (they are made contiguous first); device arrays must be contiguous.
Construction on a GPU finishes before it returns, so the matrix is ready on every stream.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays, _core, _dtypes
from ._context import Context, default_context
from ._devices import CPU, Device, device_name, is_cuda, parse_device, same_device
from ._errors import InvalidArgumentError, UnsupportedError

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1
_DESC_NAMES = "desc.row_ptr is indptr, desc.col_idx is indices, desc.values is data"


def _extent(value: Any, argument: str, limit: int = _INT64_MAX) -> int:
    """A size that the ABI stores as int64 (int32 for block sides)."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer))
        or not 0 <= value <= limit
    ):
        raise InvalidArgumentError(f"{argument} must be an int in 0..{limit}; got {value!r}")
    return int(value)


def _shape(shape: Any) -> Tuple[int, int]:
    if not isinstance(shape, Sequence) or len(shape) != 2:
        raise InvalidArgumentError(f"shape must be (rows, cols); got {shape!r}")
    return (_extent(shape[0], "shape[0]"), _extent(shape[1], "shape[1]"))


def _blocksize(blocksize: Any) -> Tuple[int, int]:
    pair = (blocksize, blocksize) if not isinstance(blocksize, Sequence) else tuple(blocksize)
    if len(pair) != 2:
        raise InvalidArgumentError(f"blocksize must be an int or (height, width); got {blocksize!r}")
    height = _extent(pair[0], "blocksize[0]", _INT32_MAX)
    width = _extent(pair[1], "blocksize[1]", _INT32_MAX)
    if height == 0 or width == 0:
        raise InvalidArgumentError(f"blocksize must be >= 1 in both dimensions; got {blocksize!r}")
    return (height, width)


def _host_or_device_view(obj: Any, argument: str, stream: Optional[int]) -> _arrays.ArrayView:
    """A contiguous view for construction. Host data that is not contiguous (or not an array at
    all) is copied first: the core copies it anyway. Device data is never copied here."""
    if _arrays.array_kind(obj) is not None:
        array_view = _arrays.view(obj, argument, stream=stream)
        if array_view.is_contiguous:
            return array_view
        if is_cuda(array_view.device):
            raise InvalidArgumentError(
                f"{argument} is a non-contiguous device array (shape {array_view.shape}, element "
                f"strides {array_view.strides}); make it contiguous first"
            )
    return _arrays.view(np.ascontiguousarray(_host_array(obj)), argument)


def _host_array(obj: Any) -> np.ndarray:
    """A host array as numpy (DLPack-only producers included), for construction's copies."""
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        return np.from_dlpack(obj)
    return np.asarray(obj)


def _index_views(
    indptr: _arrays.ArrayView, indices: _arrays.ArrayView
) -> Tuple[_arrays.ArrayView, _arrays.ArrayView, int]:
    """Both index arrays in one index type (the ABI takes one for both). Host arrays of other
    integer types, or of two different types, are widened to int64; device arrays must agree."""
    if indptr.dtype == indices.dtype and indptr.dtype in _dtypes.INDEX_CODES:
        return indptr, indices, _dtypes.index_code(indptr.dtype, "indptr")
    for name, v in (("indptr", indptr), ("indices", indices)):
        if is_cuda(v.device):
            _dtypes.index_code(v.dtype, name)
            raise InvalidArgumentError(
                f"indptr ({indptr.dtype}) and indices ({indices.dtype}) must share one index type "
                "on a device"
            )
        # An empty list arrives as float64: with no values there is nothing to misread.
        if v.size and not np.issubdtype(np.dtype(v.dtype), np.integer):
            raise UnsupportedError(f"{name} has dtype {v.dtype}; indices must be integers")
    widened = [
        _arrays.view(np.ascontiguousarray(_host_array(v.source), dtype=np.int64), name)
        for name, v in (("indptr", indptr), ("indices", indices))
    ]
    return widened[0], widened[1], _core.INDEX_I64


class BsrMatrix:
    """A block-sparse matrix (BSR) on one device. Build one with :meth:`from_arrays`,
    :meth:`from_dense`, :meth:`from_scipy` or :meth:`from_torch`; multiply with
    :func:`bsrmm.matmul` or ``A @ B``; ``A.T`` is a lazy transpose."""

    __slots__ = ("_handle", "_info", "_device", "_shape", "__weakref__")
    _handle: _core.Matrix
    _info: _core.MatrixInfo
    _device: Device
    _shape: Tuple[int, int]  # read on every multiply: kept as a tuple, not rebuilt from _info

    # Makes numpy defer `ndarray @ BsrMatrix` to BsrMatrix.__rmatmul__.
    __array_ufunc__ = None

    def __init__(self) -> None:
        raise TypeError(
            "build a BsrMatrix with BsrMatrix.from_arrays, from_dense, from_scipy or from_torch"
        )

    @classmethod
    def _wrap(cls, handle: Any) -> "BsrMatrix":
        matrix = cls.__new__(cls)
        matrix._handle = handle
        matrix._info = handle.info()
        matrix._device = (matrix._info.device_type, matrix._info.device_ordinal)
        matrix._shape = (matrix._info.rows, matrix._info.cols)
        return matrix

    # ---- construction ----

    @classmethod
    def from_arrays(
        cls,
        indptr: Any,
        indices: Any,
        data: Any,
        shape: Tuple[int, int],
        *,
        sort_indices: bool = False,
        device: Any = "cpu",
    ) -> "BsrMatrix":
        """From the three BSR arrays (the scipy / torch convention): ``indptr`` (block rows + 1),
        ``indices`` (block column of each block, sorted and unique within a row unless
        ``sort_indices``), ``data`` of shape (nnzb, block_height, block_width). The arrays may
        be on the host or all on one CUDA device."""
        target = parse_device(device)
        rows, cols = _shape(shape)
        source_context = cls._source_context([indptr, indices, data], target)
        stream = source_context._stream_for(indptr, indices, data)
        views = [
            _host_or_device_view(obj, name, stream)
            for name, obj in (("indptr", indptr), ("indices", indices), ("data", data))
        ]
        devices = {v.device for v in views}
        if len(devices) > 1:
            names = ", ".join(f"{n} on {device_name(v.device)}" for n, v in zip(("indptr", "indices", "data"), views))
            raise InvalidArgumentError(f"indptr, indices and data must be on one device; got {names}")
        ptr_view, idx_view, index_type = _index_views(views[0], views[1])
        data_view = views[2]
        if len(data_view.shape) != 3:
            raise InvalidArgumentError(
                f"data must have shape (nnzb, block_height, block_width); got shape {data_view.shape}"
            )
        nnzb, block_height, block_width = data_view.shape
        if not (1 <= block_height <= _INT32_MAX and 1 <= block_width <= _INT32_MAX):
            raise InvalidArgumentError(
                f"block_height and block_width must be in 1..{_INT32_MAX}; data has shape "
                f"{data_view.shape}"
            )
        # These lengths bound what the core reads at each address: checked here, not there.
        if rows % block_height or cols % block_width:
            raise InvalidArgumentError(
                f"shape {(rows, cols)} is not a whole number of {block_height}x{block_width} blocks"
            )
        if ptr_view.shape != (rows // block_height + 1,):
            raise InvalidArgumentError(
                f"indptr must be 1-D with {rows // block_height + 1} entries (block rows + 1); "
                f"got shape {ptr_view.shape}"
            )
        if idx_view.shape != (nnzb,):
            raise InvalidArgumentError(
                f"indices must be 1-D with one entry per block (nnzb = {nnzb} from data's shape); "
                f"got shape {idx_view.shape}"
            )
        dtype = _dtypes.value_code(data_view.dtype, "data")
        flags = _core.CREATE_SORT_INDICES if sort_indices else _core.CREATE_DEFAULT
        with source_context._session(stream) as ctx:
            try:
                handle = _core.Matrix.create(
                    ctx, rows, cols, block_height, block_width, nnzb,
                    ptr_view.address, idx_view.address, index_type,
                    data_view.address, dtype, *data_view.device, flags,
                )
            except InvalidArgumentError as error:
                # The core names the C descriptor's fields; say which Python argument each is.
                raise InvalidArgumentError(f"{error} [{_DESC_NAMES}]") from None
            if is_cuda(source_context._device):
                ctx.synchronize()
        return cls._wrap(handle).to(device_name(target))

    @classmethod
    def from_dense(cls, array: Any, blocksize: Any, device: Any = "cpu") -> "BsrMatrix":
        """Keeps every block of ``array`` that holds a non-zero (NaN counts as non-zero).
        ``blocksize`` is an int or (height, width)."""
        target = parse_device(device)
        block_height, block_width = _blocksize(blocksize)
        source_context = cls._source_context([array], target)
        stream = source_context._stream_for(array)
        array_view = _host_or_device_view(array, "array", stream)
        if len(array_view.shape) != 2:
            raise InvalidArgumentError(f"array must be 2-D; got shape {array_view.shape}")
        dense = _arrays.dense_operand(array_view, "array")
        with source_context._session(stream) as ctx:
            handle = _core.Matrix.from_dense(
                ctx, dense.descriptor(array_view.device), block_height, block_width
            )
            if is_cuda(source_context._device):
                ctx.synchronize()
        return cls._wrap(handle).to(device_name(target))

    @classmethod
    def from_scipy(cls, matrix: Any, *, device: Any = "cpu") -> "BsrMatrix":
        """From a ``scipy.sparse`` BSR array or matrix (its arrays are copied). scipy allows
        unsorted and duplicate blocks (duplicates add up); such a matrix is brought to scipy's
        canonical form on a copy first, so the result means what scipy means."""
        fmt = getattr(matrix, "format", None)
        if fmt != "bsr":
            hint = " (convert it with .tobsr(blocksize=(h, w)))" if fmt is not None else ""
            raise UnsupportedError(
                f"from_scipy expects a scipy.sparse BSR array or matrix; got "
                f"{type(matrix).__name__}{hint}"
            )
        if not matrix.has_canonical_format:
            matrix = matrix.copy()
            matrix.sum_duplicates()
        return cls.from_arrays(
            matrix.indptr, matrix.indices, matrix.data, matrix.shape, device=device
        )

    @classmethod
    def from_torch(cls, tensor: Any, *, device: Any = None) -> "BsrMatrix":
        """From a ``torch.sparse_bsr`` tensor on any device; the matrix lands on ``device``
        (default: the tensor's device)."""
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(tensor, torch.Tensor):
            raise UnsupportedError(f"from_torch expects a torch tensor; got {type(tensor).__name__}")
        if tensor.layout != torch.sparse_bsr:
            raise UnsupportedError(
                f"from_torch expects a torch.sparse_bsr tensor; got layout {tensor.layout} "
                "(convert it with tensor.to_sparse_bsr(blocksize))"
            )
        values = tensor.values()
        if values.dim() != 3 or tensor.dim() != 2:
            raise UnsupportedError(
                "from_torch takes a 2-D BSR tensor without batch or dense dimensions; got values of "
                f"shape {tuple(values.shape)}"
            )
        return cls.from_arrays(
            tensor.crow_indices(), tensor.col_indices(), values, tuple(tensor.shape),
            device=tensor.device if device is None else device,
        )

    @staticmethod
    def _source_context(arrays: Sequence[Any], target: Device) -> Context:
        """Host arrays are copied straight onto the target; device arrays are read on their own
        device (and the matrix moved afterwards if the target differs)."""
        for obj in arrays:
            source = _arrays.source_device(obj, "array")
            if is_cuda(source):
                return default_context(device_name(source))
        return default_context(device_name(target))

    # ---- conversion ----

    def to(self, device: Any) -> "BsrMatrix":
        """This matrix on ``device`` (itself when already there: matrices are immutable)."""
        target = parse_device(device)
        if same_device(target, self._device):
            return self
        context = default_context(device_name(target))
        with context._session(context._stream_for()) as ctx:
            handle = self._handle.copy_to(ctx)
            if is_cuda(target):
                ctx.synchronize()
        return BsrMatrix._wrap(handle)

    def to_dense(self) -> np.ndarray:
        """The matrix as a dense numpy array (a GPU matrix is copied to the host first)."""
        if is_cuda(self._device):
            return self.to("cpu").to_dense()
        out = np.empty(self.shape, dtype=_dtypes.numpy_dtype(self._dtype_name))
        dense = _arrays.dense_operand(_arrays.view(out, "out"), "out")
        context = default_context("cpu")
        with context._session(None) as ctx:
            self._handle.to_dense(ctx, dense.descriptor(CPU))
        return out

    def to_scipy(self) -> Any:
        """A ``scipy.sparse.bsr_array`` with copies of the three arrays (host memory)."""
        import scipy.sparse  # type: ignore[import-untyped]  # optional: only for this method

        if self._dtype_name == "bfloat16":
            raise UnsupportedError("scipy.sparse has no bfloat16; use to_dense() or the arrays")
        indptr, indices, data = self._export(indptr=True, indices=True, data=True)
        return scipy.sparse.bsr_array((data, indices, indptr), shape=self.shape)

    @property
    def indptr(self) -> np.ndarray:
        """Block-row pointers (block rows + 1), a host copy; int32 unless that overflows."""
        return self._export(indptr=True)[0]

    @property
    def indices(self) -> np.ndarray:
        """Block column of each block, sorted within each row, a host copy."""
        return self._export(indices=True)[1]

    @property
    def data(self) -> np.ndarray:
        """The blocks, shape (nnzb, block_height, block_width), a host copy."""
        return self._export(data=True)[2]

    def _export(
        self, *, indptr: bool = False, indices: bool = False, data: bool = False
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Host copies of the requested arrays (the others are skipped and returned empty)."""
        fits_int32 = self.nnzb <= _INT32_MAX and self._info.cols // self._info.block_width <= _INT32_MAX
        index_dtype = np.int32 if fits_int32 else np.int64
        index_type = _core.INDEX_I32 if fits_int32 else _core.INDEX_I64
        block_rows = self._info.rows // self._info.block_height
        value_dtype = _dtypes.numpy_dtype(self._dtype_name) if data else np.float32
        arrays = (
            np.empty(block_rows + 1 if indptr else 0, dtype=index_dtype),
            np.empty(self.nnzb if indices else 0, dtype=index_dtype),
            np.empty((self.nnzb, *self.blocksize) if data else 0, dtype=value_dtype),
        )
        wanted = (indptr, indices, data)
        addresses = [
            a.__array_interface__["data"][0] if want else 0 for a, want in zip(arrays, wanted)
        ]
        self._handle.export_to(index_type, *addresses)
        return arrays

    # ---- properties ----

    @property
    def shape(self) -> Tuple[int, int]:
        return self._shape

    @property
    def blocksize(self) -> Tuple[int, int]:
        return (self._info.block_height, self._info.block_width)

    @property
    def nnzb(self) -> int:
        """Stored blocks."""
        return self._info.nnzb

    @property
    def nnz(self) -> int:
        """Stored values (nnzb * block_height * block_width, as scipy counts them)."""
        return self._info.nnzb * self._info.block_height * self._info.block_width

    @property
    def dtype(self) -> np.dtype:
        """The value type as a numpy dtype (bfloat16 needs ml_dtypes)."""
        return _dtypes.numpy_dtype(self._dtype_name)

    @property
    def _dtype_name(self) -> str:
        return _dtypes.VALUE_NAMES[self._info.dtype]

    @property
    def device(self) -> str:
        return device_name(self._device)

    @property
    def T(self) -> "TransposedBsrMatrix":
        """A lazy transpose: nothing is copied; products run with transpose_a=True."""
        return TransposedBsrMatrix(self)

    def __matmul__(self, other: Any) -> Any:
        from ._matmul import matmul

        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        from ._matmul import dense_matmul

        return dense_matmul(other, self, transpose=False)

    def __repr__(self) -> str:
        return (
            f"bsrmm.BsrMatrix(shape={self.shape}, blocksize={self.blocksize}, nnzb={self.nnzb}, "
            f"dtype={self._dtype_name}, device={self.device!r})"
        )


class TransposedBsrMatrix:
    """``A.T``: the transpose of a BsrMatrix, read in place by the multiply (transpose_a=True)."""

    __slots__ = ("_base",)

    __array_ufunc__ = None

    def __init__(self, base: BsrMatrix) -> None:
        self._base = base

    @property
    def T(self) -> BsrMatrix:
        return self._base

    @property
    def shape(self) -> Tuple[int, int]:
        rows, cols = self._base.shape
        return (cols, rows)

    @property
    def blocksize(self) -> Tuple[int, int]:
        height, width = self._base.blocksize
        return (width, height)

    @property
    def nnzb(self) -> int:
        return self._base.nnzb

    @property
    def nnz(self) -> int:
        return self._base.nnz

    @property
    def dtype(self) -> np.dtype:
        return self._base.dtype

    @property
    def device(self) -> str:
        return self._base.device

    def to_dense(self) -> np.ndarray:
        return self._base.to_dense().T

    def __matmul__(self, other: Any) -> Any:
        from ._matmul import matmul

        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        from ._matmul import dense_matmul

        return dense_matmul(other, self._base, transpose=True)

    def __repr__(self) -> str:
        return f"{self._base!r}.T"


AnyBsr = Union[BsrMatrix, TransposedBsrMatrix]
