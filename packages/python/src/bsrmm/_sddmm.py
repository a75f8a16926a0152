"""bsrmm.sddmm: the sampled dense-dense multiply. For every stored block b of a pattern (a
:class:`BsrMatrix`), ``values[b] = alpha * (x @ y)[block b] + beta * values[b]``: the product
computed only where the pattern stores blocks. It is the weight gradient of ``Y = W @ X`` for a
block-sparse W: ``dW = sddmm(W, dY, X.T)``, whose result feeds ``W.with_values``."""

from __future__ import annotations

import re
from typing import Any, Optional, Tuple

from . import _arrays, _core, _dtypes
from ._context import Context
from ._devices import Device
from ._errors import Error, InvalidArgumentError, UnsupportedError
from ._matmul import _context_for, _device_of, _input, _scalar
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

    bh, bw = a.blocksize
    shape = (a.nnzb, bh, bw)
    if out is None:
        if beta != 0.0:
            raise InvalidArgumentError(f"beta = {beta} scales existing values: pass them as out=")
        out = _arrays.empty_like(x_view, shape, "x")
    out_view = _arrays.view(out, "out", stream=stream)
    values = _values_descriptor(out_view, shape, a._device)
    device = a._device
    try:
        with ctx._session(stream) as handle:
            _core.sddmm(
                handle, a._handle,
                x_op.descriptor(_device_of(x_view, "x", device)),
                y_op.descriptor(_device_of(y_view, "y", device)),
                values, alpha, beta,
            )
    except Error as error:
        raise _judged(error, a, x_op, y_op, out_view) from None
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


def _values_descriptor(
    out: _arrays.ArrayView, shape: Tuple[int, int, int], a_device: Device
) -> _core.Dense:
    """out (nnzb, bh, bw) as the core's values: nnzb rows of bh * bw, its first stride the
    leading dimension. What no descriptor of that kind can say is refused here (another rank or
    block shape, blocks not stored row-major, memory the caller did not let us write); whether
    the blocks lie one after another, out's dtype and device and overlap with x and y are the
    core's to judge (bsrmm_sddmm's check_operands; _judged words its verdict)."""
    if out.shape != shape:
        raise InvalidArgumentError(
            f"out has shape {out.shape}; the pattern's blocks need (nnzb, bh, bw) = {shape}"
        )
    if out.read_only:
        raise InvalidArgumentError(
            f"out ({type(out.source).__name__}) is read-only or cannot say it is writable"
        )
    nnzb, bh, bw = shape
    if nnzb and ((bh > 1 and out.strides[1] != bw) or (bw > 1 and out.strides[2] != 1)):
        raise _not_contiguous(out)
    return _core.Dense(
        out.address, nnzb, bh * bw, out.strides[0] if nnzb > 1 else bh * bw,
        _core.LAYOUT_ROW_MAJOR, _dtypes.value_code(out.dtype, "out"),
        *_device_of(out, "out", a_device),
    )


def _not_contiguous(out: _arrays.ArrayView) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"out must be C-contiguous (one row-major block after another) to be written in "
        f"place; it has element strides {out.strides}. Pass a contiguous array as out and "
        f"copy it into yours afterwards"
    )


def _judged(
    error: Error, a: BsrMatrix, x: _arrays.DenseOperand, y: _arrays.DenseOperand,
    out: _arrays.ArrayView,
) -> Error:
    """The core's verdict on the operands (bsrmm_sddmm's check_operands, the one judge of
    shapes, dtypes, devices, layout and overlap), said with sddmm's keywords: X, Y and values
    are x, y and out here."""
    message = error.message
    rows, cols = a.shape
    if message.startswith("X.rows = "):
        return InvalidArgumentError(
            f"x has {x.rows} rows but pattern has {rows} (pattern is {rows}x{cols}; x is (M, T))"
        )
    if message.startswith("Y.cols = "):
        return InvalidArgumentError(
            f"y has {y.cols} columns but pattern has {cols} (pattern is {rows}x{cols}; y is (T, K))"
        )
    if message.startswith("Y.rows = "):
        return InvalidArgumentError(
            f"y has {y.rows} rows but x has {x.cols} columns (x is (M, T), y is (T, K))"
        )
    if message.startswith("mixed dtypes"):  # x and y were converted or refused before: out differs
        return UnsupportedError(
            f"out has dtype {out.dtype} but the pattern has {a._dtype_name}, and out is written "
            f"in place, never converted: pass out of dtype {a._dtype_name} (or leave out=None "
            f"for a new array)"
        )
    if message.startswith(("values.ld = ", "values must be row-major")):
        return _not_contiguous(out)
    overlap = _OVERLAP.match(message)
    if overlap:
        return InvalidArgumentError(
            f"out overlaps {overlap['input'].lower()} in memory; the sddmm cannot be computed in "
            "place"
        )
    elsewhere = _ELSEWHERE.match(message)
    if elsewhere:
        argument = _ARGUMENTS[elsewhere["operand"]]
        return _arrays.device_mismatch(argument, elsewhere["where"], elsewhere["context"])
    return error


# check_operands' words in bsrmm_sddmm; the context is on the pattern's device (_context_for).
_OVERLAP = re.compile(r"^values overlaps (?P<input>X|Y) in memory")
_ELSEWHERE = re.compile(
    r"^(?P<operand>X|Y|values) is on (?P<where>\S+) but the context is on (?P<context>\S+)$"
)
_ARGUMENTS = {"X": "x", "Y": "y", "values": "out"}
