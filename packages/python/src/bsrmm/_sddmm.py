"""bsrmm.sddmm: the sampled dense-dense multiply. For every stored block b of a pattern (a
:class:`BsrMatrix`), ``values[b] = alpha * (x @ y)[block b] + beta * values[b]``: the product
computed only where the pattern stores blocks. It is the weight gradient of ``Y = W @ X`` for a
block-sparse W: ``dW = sddmm(W, dY, X.T)``, whose result feeds ``W.with_values``."""

from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _arrays, _core
from ._context import Context
from ._errors import InvalidArgumentError, UnsupportedError
from ._matmul import _context_for, _input, _scalar
from ._matrix import BsrMatrix, TransposedBsrMatrix
from ._typing import ArrayInput, DenseArray


def sddmm(
    pattern: BsrMatrix,
    x: ArrayInput,
    y: ArrayInput,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    out: Optional[DenseArray] = None,
    context: Optional[Context] = None,
) -> Any:
    """``out[b] = alpha * (x @ y)[rows and columns of block b] + beta * out[b]`` for every
    stored block b of ``pattern`` (M x K in blocks bh x bw; its own values are not read).

    x: (M, T), y: (T, K): numpy, torch, cupy or any ``__dlpack__`` /
    ``__cuda_array_interface__`` array on the pattern's device, read in place when row- or
    column-major with any leading dimension (a transposed view such as ``X.T`` costs no copy),
    else copied once; of the pattern's dtype, or converted to it when ``out`` is None.
    Returns ``out``, or a new array of x's type and device of shape (nnzb, bh, bw) in the
    pattern's dtype: the blocks in the order of ``pattern.data``, ready for
    ``pattern.with_values``. out: (nnzb, bh, bw), C-contiguous, the pattern's dtype, written in
    place; with beta == 0 it is only written, so it may hold anything. Accumulates in float32
    (float64 for float64). On a GPU the call is queued on the caller's current stream.
    """
    a = _pattern(pattern)
    ctx = _context_for(a, context)
    alpha, beta = _scalar(alpha, "alpha"), _scalar(beta, "beta")
    stream = ctx._stream_for(x, y, out)
    convert = out is None
    x_view = _input(x, "x", stream, a, _arrays.readable_layout, convert, (2,))
    y_view = _input(y, "y", stream, a, _arrays.readable_layout, convert, (2,))
    x_op = _arrays.dense_operand(x_view, "x")
    y_op = _arrays.dense_operand(y_view, "y")
    _check_shapes(a, x_op, y_op)

    bh, bw = a.blocksize
    shape = (a.nnzb, bh, bw)
    if out is None:
        if beta != 0.0:
            raise InvalidArgumentError(f"beta = {beta} scales existing values: pass them as out=")
        out = _arrays.empty_like(x_view, shape, "x")
    out_view = _output_view(out, shape, a, stream, (x_view, "x"), (y_view, "y"))
    if a.nnzb == 0:
        return out
    device = a._device
    values = _core.Dense(
        out_view.address, a.nnzb, bh * bw, bh * bw, _core.LAYOUT_ROW_MAJOR,
        x_op.dtype, *device,
    )
    with ctx._session(stream) as handle:
        _core.sddmm(
            handle, a._handle, x_op.descriptor(device), y_op.descriptor(device), values,
            alpha, beta,
        )
    return out


def _pattern(pattern: Any) -> BsrMatrix:
    if isinstance(pattern, BsrMatrix):
        return pattern
    if isinstance(pattern, TransposedBsrMatrix):
        raise UnsupportedError(
            "pattern is a transposed BsrMatrix (A.T); sddmm samples a stored pattern: pass "
            "the matrix itself (the blocks of A.T are A's blocks transposed: sddmm(A, y.T, x.T))"
        )
    raise UnsupportedError(
        "pattern must be a bsrmm.BsrMatrix (build one with BsrMatrix.from_scipy, from_dense or "
        f"from_arrays); got {type(pattern).__name__}"
    )


def _check_shapes(a: BsrMatrix, x: _arrays.DenseOperand, y: _arrays.DenseOperand) -> None:
    rows, cols = a.shape
    if x.rows != rows:
        raise InvalidArgumentError(
            f"x has {x.rows} rows but pattern has {rows} (pattern is {rows}x{cols}; x is (M, T))"
        )
    if y.cols != cols:
        raise InvalidArgumentError(
            f"y has {y.cols} columns but pattern has {cols} (pattern is {rows}x{cols}; y is (T, K))"
        )
    if y.rows != x.cols:
        raise InvalidArgumentError(
            f"y has {y.rows} rows but x has {x.cols} columns (x is (M, T), y is (T, K))"
        )


def _output_view(
    out: Any, shape: Tuple[int, int, int], a: BsrMatrix, stream: Optional[int],
    *inputs: Tuple[_arrays.ArrayView, str],
) -> _arrays.ArrayView:
    out_view = _arrays.view(out, "out", stream=stream)
    _arrays.check_device(out_view, "out", a._device)
    if out_view.shape != shape:
        raise InvalidArgumentError(
            f"out has shape {out_view.shape}; the pattern's blocks need (nnzb, bh, bw) = {shape}"
        )
    if out_view.dtype != a._dtype_name:
        raise UnsupportedError(
            f"out has dtype {out_view.dtype} but the pattern has {a._dtype_name}, and out is "
            f"written in place, never converted: pass out of dtype {a._dtype_name} (or leave "
            f"out=None for a new array)"
        )
    if out_view.read_only:
        raise InvalidArgumentError(
            f"out ({type(out).__name__}) is read-only or cannot say it is writable"
        )
    if not _arrays.readable_contiguous(out_view):
        raise InvalidArgumentError(
            f"out must be C-contiguous (one row-major block after another) to be written in "
            f"place; it has element strides {out_view.strides}. Pass a contiguous array as out "
            f"and copy it into yours afterwards"
        )
    low, high = out_view.byte_span()
    for view, argument in inputs:
        in_low, in_high = view.byte_span()
        if low < in_high and in_low < high:
            raise InvalidArgumentError(
                f"out overlaps {argument} in memory; the sddmm cannot be computed in place"
            )
    return out_view
