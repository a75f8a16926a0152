"""bsrmm.BsrMatrix: a validated block-sparse matrix on one device, immutable once built (the
core keeps an execution plan with it, so a matrix used for many products is prepared once).

Construction always copies the arrays it is given into the core's own storage, so inputs may be
in any layout (they are made contiguous first: by numpy on the host, by torch or cupy on a GPU;
other GPU producers must be contiguous).
Construction on a GPU finishes before it returns, so the matrix is ready on every stream.
"""

from __future__ import annotations

import numbers
import sys
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple, Union, cast, overload

import numpy as np
import numpy.typing as npt

from . import _arrays, _core, _dtypes, _fp8
from ._context import Context, default_context
from ._devices import CPU, Device, device_name, is_cuda, parse_device, same_device
from ._errors import CONSTRUCTION_WORDS, InvalidArgumentError, UnsupportedError, reworded
from ._matmul import dense_matmul, matmul
from ._typing import (
    ArrayInput,
    ArrayT,
    BlockSize,
    DenseArray,
    DeviceLike,
    DTypeLike,
    ScipySparse,
    SupportsDLPack,
)

if TYPE_CHECKING:
    from ._linear_operator import BsrLinearOperator

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


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


def _threshold(value: Any) -> float:
    message = f"threshold must be a real number >= 0 within the float64 range; got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError(message)
    try:
        threshold = float(value)
    except OverflowError:
        raise InvalidArgumentError(message) from None
    if not threshold >= 0.0:  # NaN too
        raise InvalidArgumentError(message)
    return threshold


def _pruned(
    array_view: _arrays.ArrayView, block_height: int, block_width: int, threshold: float
) -> _arrays.ArrayView:
    """A copy of a host array with every block whose values are all <= threshold in magnitude
    set to zero, so the core's from_dense drops exactly those blocks."""
    if is_cuda(array_view.device):
        raise UnsupportedError(
            f"threshold > 0 needs array on the host (it is on {device_name(array_view.device)}): "
            "copy it to the host, or zero the blocks yourself and pass threshold=0"
        )
    rows, cols = array_view.shape
    if rows % block_height or cols % block_width:
        raise InvalidArgumentError(
            f"array has shape {array_view.shape}, not a whole number of "
            f"{block_height}x{block_width} blocks (blocksize)"
        )
    host = array_view.source
    if not isinstance(host, np.ndarray):
        host = _arrays.from_dlpack(host, "array")
    pruned = np.array(host, order="C")
    blocks = pruned.reshape(rows // block_height, block_height, cols // block_width, block_width)
    # `not <=` keeps NaN blocks, as from_dense keeps them at threshold 0.
    keep = (~(np.abs(blocks) <= threshold)).any(axis=(1, 3))
    blocks.transpose(0, 2, 1, 3)[~keep] = 0  # a view: (block row, block column, bh, bw)
    return _arrays.view(pruned, "array")


def _rebuild(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, shape: Tuple[int, int], device: str,
    scales: Optional[np.ndarray] = None, scale: str = "block",
) -> "BsrMatrix":
    """Unpickling: the three arrays (and an fp8 matrix's scales) back into a matrix on the
    device it was pickled from."""
    return BsrMatrix.from_arrays(indptr, indices, data, shape, device=device, scales=scales, scale=scale)


def _host_or_device_view(obj: Any, argument: str, stream: Optional[int]) -> _arrays.ArrayView:
    """A contiguous view for construction. Data that is not contiguous (or not an array at all)
    is copied first, by the library that owns it: the core copies it anyway."""
    if _arrays.array_kind(obj) is None:
        obj = _host_array(obj, argument)
    array_view = _arrays.view(obj, argument, stream=stream)
    if array_view.is_contiguous:
        return array_view
    copy = _arrays.contiguous_copy(obj, array_view, argument, None, stream)
    return _arrays.view(copy, argument, stream=stream)


def _host_array(obj: Any, argument: str) -> np.ndarray:
    """A host array as numpy (DLPack-only producers included), for construction's copies."""
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        return _arrays.from_dlpack(obj, argument)
    if isinstance(obj, (BsrMatrix, TransposedBsrMatrix)):
        raise UnsupportedError(f"{argument} is a bsrmm matrix; its arrays are A.indptr, A.indices, A.data")
    return _arrays.as_numpy(obj, argument)


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
        if v.size and v.dtype not in _dtypes.INTEGER_NAMES:
            raise UnsupportedError(f"{name} has dtype {v.dtype}; indices must be integers")
    widened = [
        _arrays.view(np.ascontiguousarray(_host_array(v.source, name), dtype=np.int64), name)
        for name, v in (("indptr", indptr), ("indices", indices))
    ]
    return widened[0], widened[1], _core.INDEX_I64


class _SparseManners:
    """What scipy.sparse users reach for, on a matrix and on its lazy transpose alike: scipy's
    names, the LinearOperator protocol, and a clear refusal to become a numpy array."""

    __slots__ = ()
    ndim = 2

    # Makes numpy defer `ndarray @ A` to A.__rmatmul__.
    __array_ufunc__ = None

    @property
    def shape(self) -> Tuple[int, int]:
        raise NotImplementedError

    @property
    def dtype(self) -> np.dtype:
        raise NotImplementedError

    @property
    def T(self) -> "AnyBsr":
        raise NotImplementedError

    def to_dense(self) -> np.ndarray:
        raise NotImplementedError

    def to_scipy(self) -> Any:
        raise NotImplementedError

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        # Without this numpy would wrap the matrix in a 0-d object array, which fails later
        # and far from here.
        raise UnsupportedError(
            f"a bsrmm matrix is not a dense array: A.toarray() gives one, A @ x and x @ A "
            f"multiply, A.aslinearoperator() serves scipy.sparse.linalg (A is {self!r})"
        )

    def toarray(self) -> np.ndarray:
        """scipy's name for :meth:`to_dense`."""
        return self.to_dense()

    def todense(self) -> np.ndarray:
        """scipy's name for :meth:`to_dense` (an ndarray, as scipy's sparse arrays give)."""
        return self.to_dense()

    def tocsr(self) -> Any:
        """A ``scipy.sparse.csr_array`` of this matrix (host copies)."""
        return self.to_scipy().tocsr()

    def transpose(self, axes: Optional[Tuple[int, int]] = None) -> "AnyBsr":
        """``A.T`` (lazy), as scipy spells it."""
        if axes is not None and tuple(axes) != (1, 0):
            raise InvalidArgumentError(f"axes must be None or (1, 0) for a 2-D matrix; got {axes!r}")
        return self.T

    # A @ B returns B's array type (numpy for array-likes), as matmul does.
    @overload
    def __matmul__(self, other: ArrayT) -> ArrayT: ...
    @overload
    def __matmul__(self, other: npt.ArrayLike) -> np.ndarray: ...
    def __matmul__(self, other: ArrayInput) -> Any:  # the overloads above say which array type
        return matmul(cast("AnyBsr", self), other)

    dot = __matmul__  # scipy's name for the product

    # scipy.sparse.linalg.aslinearoperator(A) builds its operator from these.
    def matvec(self, x: ArrayInput) -> DenseArray:
        """``A @ x`` for a vector (shape (n,) or (n, 1))."""
        return self @ x

    def rmatvec(self, x: ArrayInput) -> DenseArray:
        """``A.T @ x`` (the adjoint: the values are real)."""
        return self.T @ x

    def matmat(self, x: ArrayInput) -> DenseArray:
        return self @ x

    def rmatmat(self, x: ArrayInput) -> DenseArray:
        return self.T @ x

    def aslinearoperator(self) -> "BsrLinearOperator":
        """A ``scipy.sparse.linalg.LinearOperator`` that multiplies whole blocks of vectors in
        one call (``scipy.sparse.linalg.aslinearoperator(A)`` works too, one vector a call)."""
        from ._linear_operator import BsrLinearOperator

        return BsrLinearOperator(cast("AnyBsr", self))


class BsrMatrix(_SparseManners):
    """A block-sparse matrix (BSR) on one device. Build one with :meth:`from_arrays`,
    :meth:`from_dense`, :meth:`from_scipy` or :meth:`from_torch`; multiply with
    :func:`bsrmm.matmul` or ``A @ B``; ``A.T`` is a lazy transpose."""

    __slots__ = ("_handle", "_info", "_device", "_shape", "_borrowed", "__weakref__")
    _handle: _core.Matrix
    _info: _core.MatrixInfo
    _device: Device
    _shape: Tuple[int, int]  # read on every multiply: kept as a tuple, not rebuilt from _info
    _borrowed: Any  # with_values(borrow=True)'s array, which the core reads in place; else None

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
        matrix._borrowed = None
        return matrix

    # ---- construction ----

    @classmethod
    def from_arrays(
        cls,
        indptr: ArrayInput,
        indices: ArrayInput,
        data: ArrayInput,
        shape: Tuple[int, int],
        *,
        sort_indices: bool = False,
        device: DeviceLike = "cpu",
        dtype: Optional[DTypeLike] = None,
        scales: Optional[ArrayInput] = None,
        scale: str = "block",
    ) -> "BsrMatrix":
        """From the three BSR arrays (the scipy / torch convention): ``indptr`` (block rows + 1),
        ``indices`` (block column of each block, sorted and unique within a row unless
        ``sort_indices``), ``data`` of shape (nnzb, block_height, block_width). The arrays may
        be on the host or all on one CUDA device.

        fp8: ``dtype="float8_e4m3"`` (or ``"float8_e5m2"``) quantises ``data`` with float32
        scales, one per stored block (``scale="block"``), per block row (``"block_row"``) or for
        the matrix (``"tensor"``): the given ``scales`` (1-D, in ``data``'s block order), else
        ``amax / max_finite`` of the elements each covers. ``data`` already in fp8 (ml_dtypes'
        float8_e4m3fn / float8_e5m2) is taken as it is, with its ``scales``. The values are
        quantised on the host and the matrix then moves to ``device``."""
        fp8 = _fp8.fp8_name(dtype) or _fp8.fp8_name(getattr(data, "dtype", None))
        if fp8 is not None:
            return cls._from_fp8_arrays(
                indptr, indices, data, shape, _fp8.fp8_name(dtype), scales, scale, sort_indices, device
            )
        if scales is not None:
            raise InvalidArgumentError(
                "scales are for fp8 values only: pass dtype='float8_e4m3' or 'float8_e5m2'"
            )
        if dtype is not None:
            return cls.from_arrays(indptr, indices, data, shape, sort_indices=sort_indices, device=device).astype(dtype)
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
                # The core names the C descriptor's fields: say the Python arguments instead.
                raise reworded(error, CONSTRUCTION_WORDS) from None
            if is_cuda(source_context._device):
                ctx.synchronize()
        return cls._wrap(handle).to(device_name(target))

    @classmethod
    def _from_fp8_arrays(
        cls, indptr: Any, indices: Any, data: Any, shape: Tuple[int, int], fp8: Optional[str],
        scales: Any, scale: str, sort_indices: bool, device: DeviceLike,
    ) -> "BsrMatrix":
        """from_arrays for fp8 values: quantised here (or taken as fp8), created on the host, then
        moved to ``device`` with its scales."""
        target = parse_device(device)
        kind = _fp8.scale_kind(scale)
        rows, cols = _shape(shape)
        ptr = np.ascontiguousarray(_host_array(indptr, "indptr"), dtype=np.int64)
        idx = np.ascontiguousarray(_host_array(indices, "indices"), dtype=np.int64)
        values = _fp8.host_array(data, "data")
        if values.ndim != 3:
            raise InvalidArgumentError(
                f"data must have shape (nnzb, block_height, block_width); got shape {values.shape}"
            )
        nnzb, block_height, block_width = values.shape
        if block_height < 1 or block_width < 1 or rows % block_height or cols % block_width:
            raise InvalidArgumentError(
                f"shape {(rows, cols)} is not a whole number of {block_height}x{block_width} blocks"
            )
        if ptr.shape != (rows // block_height + 1,) or idx.shape != (nnzb,):
            raise InvalidArgumentError(
                f"indptr must be 1-D with {rows // block_height + 1} entries and indices 1-D with "
                f"{nnzb} (one per block); got shapes {ptr.shape} and {idx.shape}"
            )
        given = _fp8.fp8_name(values.dtype)
        if given is not None:
            if fp8 is not None and fp8 != given:
                raise UnsupportedError(f"data is {given} but dtype={fp8!r}: convert the values first")
            if scales is None:
                raise InvalidArgumentError(
                    f"data is {given}: pass its scales (scales=, scale='block', 'block_row' or 'tensor')"
                )
            fp8 = given
            quantised = np.ascontiguousarray(values)  # taken as given, with its scales
            checked = _fp8.given_block_scales(ptr, nnzb, kind, scales)
        else:
            assert fp8 is not None
            quantised, checked = _fp8.block_values(ptr, values, fp8, kind, scales)
        flags = _core.CREATE_SORT_INDICES if sort_indices else _core.CREATE_DEFAULT
        context = default_context("cpu")
        with context._session(None) as ctx:
            try:
                handle = _core.Matrix.create_scaled(
                    ctx, rows, cols, block_height, block_width, nnzb, _fp8.address(ptr),
                    _fp8.address(idx), _core.INDEX_I64, _fp8.address(quantised),
                    _dtypes.FP8_CODES[fp8], flags, _fp8.address(checked), kind, checked.shape[0],
                )
            except InvalidArgumentError as error:
                raise reworded(error, CONSTRUCTION_WORDS) from None
        return cls._wrap(handle).to(device_name(target))

    @classmethod
    def from_dense(
        cls, array: ArrayInput, blocksize: BlockSize, device: DeviceLike = "cpu", *,
        threshold: float = 0.0, dtype: Optional[DTypeLike] = None, scales: Optional[ArrayInput] = None,
        scale: str = "block",
    ) -> "BsrMatrix":
        """Keeps every block of ``array`` that holds a value with ``abs(value) > threshold``
        (NaN counts as such a value); dropped blocks are zeros in the result, kept blocks keep
        every value, small ones included. ``blocksize`` is an int or (height, width).
        ``threshold`` > 0 (block pruning) needs ``array`` on the host. ``dtype``, ``scales`` and
        ``scale``: fp8 quantisation of the kept blocks, as in :meth:`from_arrays` (``scales`` in
        the stored blocks' order: block rows top to bottom, columns ascending)."""
        if dtype is not None or scales is not None:
            kept = cls.from_dense(array, blocksize, threshold=threshold)
            indptr, indices, data = kept._export(indptr=True, indices=True, data=True)
            return cls.from_arrays(
                indptr, indices, data, kept.shape, device=device, dtype=dtype, scales=scales, scale=scale
            )
        target = parse_device(device)
        block_height, block_width = _blocksize(blocksize)
        threshold = _threshold(threshold)
        source_context = cls._source_context([array], target)
        stream = source_context._stream_for(array)
        array_view = _host_or_device_view(array, "array", stream)
        if len(array_view.shape) != 2:
            raise InvalidArgumentError(f"array must be 2-D; got shape {array_view.shape}")
        if threshold > 0.0:
            array_view = _pruned(array_view, block_height, block_width, threshold)
        dense = _arrays.dense_operand(array_view, "array")
        with source_context._session(stream) as ctx:
            try:
                handle = _core.Matrix.from_dense(
                    ctx, dense.descriptor(array_view.device), block_height, block_width
                )
            except InvalidArgumentError as error:
                raise reworded(error, CONSTRUCTION_WORDS) from None
            if is_cuda(source_context._device):
                ctx.synchronize()
        return cls._wrap(handle).to(device_name(target))

    @classmethod
    def from_scipy(
        cls, matrix: ScipySparse, *, blocksize: Optional[BlockSize] = None,
        device: DeviceLike = "cpu", dtype: Optional[DTypeLike] = None, scales: Optional[ArrayInput] = None,
        scale: str = "block",
    ) -> "BsrMatrix":
        """From a ``scipy.sparse`` array or matrix (its arrays are copied). BSR keeps its own
        blocks unless ``blocksize`` asks for others; any other format (CSR, CSC, COO, ...) is
        converted to blocks of ``blocksize``, which it then needs. scipy allows unsorted and
        duplicate entries (duplicates add up); such a matrix is brought to scipy's canonical
        form on a copy first, so the result means what scipy means. ``dtype``, ``scales`` and
        ``scale``: fp8 quantisation, as in :meth:`from_arrays`."""
        fmt = _arrays.scipy_sparse_format(matrix)
        if fmt is None:
            raise UnsupportedError(
                f"from_scipy expects a scipy.sparse array or matrix; got {type(matrix).__name__}"
                " (from_dense takes dense arrays)"
            )
        sparse: Any = matrix  # scipy ships no types: its attributes go unchecked from here
        wanted = None if blocksize is None else _blocksize(blocksize)
        if fmt != "bsr" or (wanted is not None and wanted != tuple(sparse.blocksize)):
            if wanted is None:
                raise InvalidArgumentError(
                    f"from_scipy needs blocksize=(height, width) to group a {fmt} matrix into "
                    "blocks (only BSR matrices have their own)"
                )
            rows, cols = sparse.shape
            if rows % wanted[0] or cols % wanted[1]:
                raise InvalidArgumentError(
                    f"shape {sparse.shape} is not a whole number of {wanted[0]}x{wanted[1]} "
                    f"blocks (blocksize={blocksize!r})"
                )
            sparse = sparse.tobsr(blocksize=wanted)
        if not sparse.has_canonical_format:
            sparse = sparse.copy()
            sparse.sum_duplicates()
        return cls.from_arrays(
            sparse.indptr, sparse.indices, sparse.data, sparse.shape, device=device, dtype=dtype,
            scales=scales, scale=scale,
        )

    @classmethod
    def from_torch(
        cls, tensor: SupportsDLPack, *, device: Optional[DeviceLike] = None
    ) -> "BsrMatrix":
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

    def to(self, device: DeviceLike) -> "BsrMatrix":
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

    def with_values(self, data: ArrayInput, *, borrow: bool = False) -> "BsrMatrix":
        """A matrix with this one's pattern and device and other values: ``data`` has shape
        (nnzb, block_height, block_width), blocks in this matrix's order (that of ``A.data``
        and ``A.indices``). Nothing about the pattern is validated or planned again, so this
        costs a copy of the values (converted to this matrix's dtype if they have another);
        for weights that change every step. ``data`` may be on the host or on this matrix's
        device.

        ``borrow=True`` costs no copy: the new matrix reads ``data`` where it lies, so nothing
        is allocated, copied or waited for (on a GPU a CUDA graph capture can hold it; on the
        host it spares a copy into fresh memory). ``data`` must then be on this matrix's
        device, of its dtype, C-contiguous and
        aligned, of shape (nnzb, block_height, block_width); anything that would need a copy
        is refused. The matrix keeps a reference to ``data``, so the array outlives it, but
        the caller keeps its contents unchanged while the matrix lives and until the products
        queued with it have run: writing into ``data`` changes the matrix."""
        context = default_context(self.device)
        stream = context._stream_for(data)
        if borrow:
            return self._borrowing(data, context, stream)
        # Host values serve a matrix anywhere (the core uploads them); device values must be
        # on the matrix's device.
        source = CPU if not is_cuda(_arrays.source_device(data, "data")) else self._device
        values = _arrays.input_view(
            data, "data", stream=stream, device=source, dtype=self._dtype_name,
            readable=_arrays.readable_contiguous,
        )
        expected = (self.nnzb, *self.blocksize)
        if values.shape != expected:
            raise InvalidArgumentError(
                f"data must have shape {expected} (nnzb, block_height, block_width, as A.data "
                f"has); got shape {values.shape}"
            )
        with context._session(stream) as ctx:
            handle = self._handle.with_values(ctx, values.address, *values.device)
        return BsrMatrix._wrap(handle)

    def _borrowing(self, data: Any, context: Context, stream: Optional[int]) -> "BsrMatrix":
        """with_values(data, borrow=True): ``data`` read in place, or refused when it is not
        exactly what the core reads (no copy is ever made: a copy is what borrowing avoids)."""
        where = self.device
        values = _arrays.view(data, "data", stream=stream)
        if not same_device(values.device, self._device):
            raise InvalidArgumentError(
                f"data is on {device_name(values.device)} but the matrix is on {where}, and "
                f"borrow=True reads data where it lies: move data to {where}, or pass "
                "borrow=False to copy it"
            )
        if values.dtype != self._dtype_name:
            raise UnsupportedError(
                f"data has dtype {values.dtype} but the matrix has {self._dtype_name}, and "
                f"borrow=True reads data as it lies, never converted: pass data in "
                f"{self._dtype_name}, or borrow=False to convert a copy"
            )
        expected = (self.nnzb, *self.blocksize)
        if values.shape != expected:
            raise InvalidArgumentError(
                f"data must have shape {expected} (nnzb, block_height, block_width, as A.data "
                f"has); got shape {values.shape}"
            )
        if not _arrays.readable_contiguous(values):
            raise InvalidArgumentError(
                f"data must be C-contiguous and aligned for borrow=True (it is read in place); "
                f"it has element strides {values.strides}: pass a contiguous copy, or "
                "borrow=False to let bsrmm copy it"
            )
        with context._session(stream) as ctx:
            handle = self._handle.with_values(
                ctx, values.address, *values.device, _core.CREATE_BORROW_VALUES
            )
        matrix = BsrMatrix._wrap(handle)
        matrix._borrowed = data
        return matrix

    def _materialized_transpose(self) -> "BsrMatrix":
        """A^T as a matrix of its own, on this matrix's device (``A.T`` stays lazy: the
        multiply reads A transposed). bsrmm.torch keeps one per pattern and borrows each
        step's transposed values into it; making it plans the transposition of this pattern
        for every matrix that shares it."""
        context = default_context(self.device)
        with context._session(context._stream_for()) as ctx:
            handle = self._handle.transpose(ctx)
        return BsrMatrix._wrap(handle)

    def astype(self, dtype: DTypeLike) -> "BsrMatrix":
        """This matrix with its values converted to ``dtype`` (itself if it has it already:
        matrices are immutable). A new matrix of another dtype is built, and validated, anew."""
        fp8 = _fp8.fp8_name(dtype)
        name = fp8 or _dtypes.value_name(dtype, "dtype")
        if name == self._dtype_name:
            return self
        indptr, indices, data = self._export(indptr=True, indices=True, data=True)
        if self.scales is not None:  # fp8 values mean nothing without their scales
            data = _fp8.dequantised(data, indptr, self.scales, self._scale_code)
        if fp8 is not None:
            return BsrMatrix.from_arrays(indptr, indices, data, self.shape, device=self.device, dtype=fp8)
        return BsrMatrix.from_arrays(
            indptr, indices, data.astype(_dtypes.numpy_dtype(name)), self.shape,
            device=self.device,
        )

    def to_dense(self) -> np.ndarray:
        """The matrix as a dense numpy array (a GPU matrix is copied to the host first)."""
        if is_cuda(self._device):
            return self.to("cpu").to_dense()
        if self.scales is not None:  # fp8: the values it stands for, in float32
            indptr, indices, data = self._export(indptr=True, indices=True, data=True)
            bh, bw = self.blocksize
            blocks = _fp8.dequantised(data, indptr, self.scales, self._scale_code)
            dense = np.zeros((self.shape[0] // bh, bh, self.shape[1] // bw, bw), dtype=np.float32)
            rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr).astype(np.int64))
            dense[rows, :, indices, :] = blocks
            return dense.reshape(self.shape)
        out = np.empty(self.shape, dtype=_dtypes.numpy_dtype(self._dtype_name))
        dense = _arrays.dense_operand(_arrays.view(out, "out"), "out", written=True)
        context = default_context("cpu")
        with context._session(None) as ctx:
            self._handle.to_dense(ctx, dense.descriptor(CPU))
        return out

    def to_scipy(self) -> Any:
        """A ``scipy.sparse.bsr_array`` with copies of the three arrays (host memory)."""
        import scipy.sparse  # type: ignore[import-untyped]  # optional: only for this method

        if self._dtype_name == "bfloat16" or self.scales is not None:
            raise UnsupportedError(
                f"scipy.sparse has no {self._dtype_name}; use to_dense() or the arrays"
            )
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
    def scales(self) -> Optional[np.ndarray]:
        """An fp8 matrix's float32 scales (a host copy; see :attr:`scale`); None for other dtypes."""
        if self._dtype_name not in _dtypes.FP8_CODES:
            return None
        count = self._handle.scale_info()[1]
        out = np.empty(count, dtype=np.float32)
        self._handle.export_scales(_fp8.address(out))
        return out

    @property
    def scale(self) -> Optional[str]:
        """What one scale of an fp8 matrix covers: "block", "block_row" or "tensor" (None for
        other dtypes)."""
        if self._dtype_name not in _dtypes.FP8_CODES:
            return None
        return _fp8.SCALE_NAMES[self._scale_code]

    @property
    def _scale_code(self) -> int:
        code: int = self._handle.scale_info()[0]
        return code

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

    @overload
    def __rmatmul__(self, other: ArrayT) -> ArrayT: ...
    @overload
    def __rmatmul__(self, other: npt.ArrayLike) -> np.ndarray: ...
    def __rmatmul__(self, other: ArrayInput) -> Any:  # the overloads above say which array type
        return dense_matmul(other, self, transpose=False)

    def _product_operand(self, transpose_a: bool) -> Tuple["BsrMatrix", bool]:
        """What matmul multiplies: this matrix, transposed as asked."""
        return self, transpose_a

    # Pickled as its three arrays and device; copies are the matrix itself (it is immutable).
    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        indptr, indices, data = self._export(indptr=True, indices=True, data=True)
        if self.scales is not None:
            return (_rebuild, (indptr, indices, data, self.shape, self.device, self.scales, self.scale))
        return (_rebuild, (indptr, indices, data, self.shape, self.device))

    def __copy__(self) -> "BsrMatrix":
        return self

    def __deepcopy__(self, memo: Any) -> "BsrMatrix":
        return self

    def __repr__(self) -> str:
        return (
            f"bsrmm.BsrMatrix(shape={self.shape}, blocksize={self.blocksize}, nnzb={self.nnzb}, "
            f"dtype={self._dtype_name}, device={self.device!r})"
        )


class TransposedBsrMatrix(_SparseManners):
    """``A.T``: the transpose of a BsrMatrix, read in place by the multiply (transpose_a=True)."""

    __slots__ = ("_base",)

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

    def to_scipy(self) -> Any:
        return self._base.to_scipy().T

    def astype(self, dtype: DTypeLike) -> "TransposedBsrMatrix":
        return self._base.astype(dtype).T

    @overload
    def __rmatmul__(self, other: ArrayT) -> ArrayT: ...
    @overload
    def __rmatmul__(self, other: npt.ArrayLike) -> np.ndarray: ...
    def __rmatmul__(self, other: ArrayInput) -> Any:  # the overloads above say which array type
        return dense_matmul(other, self._base, transpose=True)

    def _product_operand(self, transpose_a: bool) -> Tuple[BsrMatrix, bool]:
        """What matmul multiplies: the base matrix, with the transpose undone or added."""
        return self._base, not transpose_a

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        return (TransposedBsrMatrix, (self._base,))

    def __repr__(self) -> str:
        return f"{self._base!r}.T"


AnyBsr = Union[BsrMatrix, TransposedBsrMatrix]
