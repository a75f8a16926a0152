"""bsrmm.matmul: C = alpha * op(A) @ B + beta * C, then + bias (one value per row of C), then
the activation. B, out and bias are used in place, whatever their array type (B and bias are
copied once when the core cannot read them as they lie); the result is ``out``, or a new
row-major array of B's type and device in A's dtype."""

from __future__ import annotations

import numbers
import re
from typing import TYPE_CHECKING, Any, Callable, Optional, Tuple, overload

import numpy as np
import numpy.typing as npt

from . import _arrays, _core, _dtypes, _fp8
from ._context import Context, default_context
from ._devices import ANY_CUDA_ORDINAL, Device, device_name, is_cuda, same_device
from ._errors import Error, InvalidArgumentError, UnsupportedError
from ._typing import ArrayInput, ArrayT, BsrOperand, DenseArray

if TYPE_CHECKING:  # _matrix imports this module: the matrices are only named here
    from ._matrix import BsrMatrix

_ACTIVATIONS = {
    None: _core.ACTIVATION_NONE,
    "none": _core.ACTIVATION_NONE,
    "relu": _core.ACTIVATION_RELU,
    "gelu": _core.ACTIVATION_GELU,
    "silu": _core.ACTIVATION_SILU,
}


@overload
def matmul(
    A: BsrOperand, B: ArrayInput, *, alpha: float = ..., beta: float = ..., out: ArrayT,
    transpose_a: bool = ..., bias: Optional[ArrayInput] = ..., activation: Optional[str] = ...,
    context: Optional[Context] = ..., b_scales: Optional[ArrayInput] = ...,
) -> ArrayT: ...
@overload
def matmul(
    A: BsrOperand, B: ArrayT, *, alpha: float = ..., beta: float = ..., out: None = ...,
    transpose_a: bool = ..., bias: Optional[ArrayInput] = ..., activation: Optional[str] = ...,
    context: Optional[Context] = ..., b_scales: Optional[ArrayInput] = ...,
) -> ArrayT: ...
@overload
def matmul(
    A: BsrOperand, B: npt.ArrayLike, *, alpha: float = ..., beta: float = ..., out: None = ...,
    transpose_a: bool = ..., bias: Optional[ArrayInput] = ..., activation: Optional[str] = ...,
    context: Optional[Context] = ..., b_scales: Optional[ArrayInput] = ...,
) -> np.ndarray: ...
def matmul(
    A: BsrOperand,
    B: ArrayInput,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    out: Optional[DenseArray] = None,
    transpose_a: bool = False,
    bias: Optional[ArrayInput] = None,
    activation: Optional[str] = None,
    context: Optional[Context] = None,
    b_scales: Optional[ArrayInput] = None,
) -> Any:  # the overloads above say which array type
    """``out = activation(alpha * op(A) @ B + beta * out + bias)``.

    A: a :class:`BsrMatrix` (or ``A.T``). B: 2-D (K, N), or 1-D (K,) for a vector result; numpy,
    torch, cupy or any ``__dlpack__`` / ``__cuda_array_interface__`` array on A's device (or,
    on the host, anything numpy reads as one), read in place when row- or column-major with any
    leading dimension, else copied once; of A's dtype, or converted to it when ``out`` is None.
    out: (M, N) (or (M,)) of A's dtype, written in place (never copied: other layouts are
    refused); with beta == 0 it is only written, so it may hold anything. bias: 1-D, one value
    per row of C, read like B. activation: None, "relu", "gelu"
    (tanh approximation) or "silu". On a GPU the call is queued on the caller's current stream
    (see :class:`Context`) and returns without waiting.

    fp8 (A built with ``dtype="float8_e4m3"`` or ``"float8_e5m2"``): B is an fp8 host array
    (ml_dtypes' float8_e4m3fn / float8_e5m2, or a torch float8 CPU tensor) and ``b_scales`` its
    float32 scales, a number or one per column (:func:`bsrmm.quantize_fp8` makes both); the
    product accumulates in float32 or better and lands in ``out`` (float32, float16 or
    bfloat16; a new float32 array by default), bias in out's dtype.
    """
    return _multiply(A, B, alpha, beta, out, transpose_a, bias, activation, context, b_scales, tune=False)


@overload
def tune(
    A: BsrOperand, B: ArrayInput, *, alpha: float = ..., beta: float = ..., out: ArrayT,
    transpose_a: bool = ..., bias: Optional[ArrayInput] = ..., activation: Optional[str] = ...,
    context: Optional[Context] = ..., b_scales: Optional[ArrayInput] = ...,
) -> ArrayT: ...
@overload
def tune(
    A: BsrOperand, B: ArrayT, *, alpha: float = ..., beta: float = ..., out: None = ...,
    transpose_a: bool = ..., bias: Optional[ArrayInput] = ..., activation: Optional[str] = ...,
    context: Optional[Context] = ..., b_scales: Optional[ArrayInput] = ...,
) -> ArrayT: ...
@overload
def tune(
    A: BsrOperand, B: npt.ArrayLike, *, alpha: float = ..., beta: float = ..., out: None = ...,
    transpose_a: bool = ..., bias: Optional[ArrayInput] = ..., activation: Optional[str] = ...,
    context: Optional[Context] = ..., b_scales: Optional[ArrayInput] = ...,
) -> np.ndarray: ...
def tune(
    A: BsrOperand,
    B: ArrayInput,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    out: Optional[DenseArray] = None,
    transpose_a: bool = False,
    bias: Optional[ArrayInput] = None,
    activation: Optional[str] = None,
    context: Optional[Context] = None,
    b_scales: Optional[ArrayInput] = None,
) -> Any:  # the overloads above say which array type
    """:func:`matmul`, after measuring the eligible kernel variants on these very operands
    (whatever the context's tuning mode or forced variant; on the CPU, candidates that cannot
    win are skipped: the reference on all but tiny problems, thread counts past the point where
    fewer threads were clearly slower): the fastest is stored in the tuner cache, shared by every
    process and binding, and runs to produce the result. The choice is
    then ``context.last_variant``. Arguments and result are those of :func:`matmul`."""
    return _multiply(A, B, alpha, beta, out, transpose_a, bias, activation, context, b_scales, tune=True)


def _multiply(
    A: Any,
    B: Any,
    alpha: Any,
    beta: Any,
    out: Any,
    transpose_a: bool,
    bias: Any,
    activation: Optional[str],
    context: Optional[Context],
    b_scales: Any,
    *,
    tune: bool,
) -> Any:
    a, transpose = _unwrap(A, transpose_a)
    ctx = _context_for(a, context)
    alpha, beta = _scalar(alpha, "alpha"), _scalar(beta, "beta")
    if not (activation is None or isinstance(activation, str)) or activation not in _ACTIVATIONS:
        raise InvalidArgumentError(
            f"activation must be None, 'relu', 'gelu' or 'silu'; got {activation!r}"
        )
    code = _ACTIVATIONS[activation]
    if a._dtype_name in _dtypes.FP8_CODES:
        # The direct path takes what the general one would read in place (B, out, b_scales and
        # bias; csrc/direct_matmul.cpp's fp8_direct) and declines the rest untouched. The core's
        # own verdicts come through unworded, as on the general path.
        if out is not None and b_scales is not None and not tune:
            with ctx._session(ctx._stream_for(B, out, bias)) as handle:
                if _core.matmul_direct(handle, a._handle, B, out, transpose, alpha, beta, code, b_scales, bias):
                    return out
        return _fp8.multiply(ctx, a, transpose, B, b_scales, alpha, beta, out, bias, code, tune=tune)
    if b_scales is not None:
        raise InvalidArgumentError(
            f"b_scales is for fp8 products; A is {a._dtype_name} (build an fp8 A with "
            "BsrMatrix.from_dense(..., dtype='float8_e4m3'))"
        )
    stream = ctx._stream_for(B, out, bias)
    if out is not None and not tune:
        try:
            with ctx._session(stream) as handle:
                if _core.matmul_direct(handle, a._handle, B, out, transpose, alpha, beta, code, None, bias):
                    return out
        except Error as error:
            raise _judged(error, a, transpose, B, out) from None

    # Inputs are converted to A's dtype only for a result bsrmm allocates: a caller who passes
    # out chose the dtype, and a silent conversion would hide a copy on that path.
    convert = out is None
    b_view = _input(B, "B", stream, a, _arrays.readable_layout, convert, (1, 2))
    b = _arrays.dense_operand(b_view, "B")
    rows = _op_shape(a, transpose)[0]
    result_shape = (rows,) if len(b_view.shape) == 1 else (rows, b.cols)
    if out is None:
        if beta != 0.0:
            raise InvalidArgumentError(f"beta = {beta} scales an existing C: pass it as out=")
        out = _arrays.empty_like(b_view, result_shape, "B")
    c_view = _arrays.view(out, "out", stream=stream)
    if len(c_view.shape) != len(result_shape):  # a vector in, a vector out: Python's rule
        raise InvalidArgumentError(
            f"out has shape {c_view.shape}; this product has shape {result_shape}"
        )
    c = _arrays.dense_operand(c_view, "out", written=True)
    bias_view = _bias_view(bias, rows, a, stream, convert)
    try:
        _execute(ctx, stream, a, transpose, b, c, alpha, beta, bias_view, code, tune=tune)
    except Error as error:
        raise _judged(error, a, transpose, b_view.source, out) from None
    return out


def _judged(error: Error, a: BsrMatrix, transpose: bool, B: Any, out: Any) -> Error:
    """The core's verdict on matmul's operands (check_operands: the one judge of shapes,
    dtypes, devices and overlap), said with matmul's keywords and shapes. Runs only on the
    error path, so it may read B and out again."""
    message = error.message
    rows, inner = _op_shape(a, transpose)
    if message.startswith("B.shape[0] = "):
        return InvalidArgumentError(
            f"B has {_arrays.view(B, 'B').shape[0]} rows but op(A) has {inner} columns "
            f"({_described(a, transpose)})"
        )
    if message.startswith("out.shape["):
        b_shape = _arrays.view(B, "B").shape
        result = (rows,) if len(b_shape) == 1 else (rows, b_shape[1])
        return InvalidArgumentError(
            f"out has shape {_arrays.view(out, 'out').shape}; this product has shape {result}"
        )
    if message.startswith("mixed dtypes"):  # B was converted or refused before: out differs
        dtype = _arrays.view(out, "out").dtype
        return UnsupportedError(
            f"out has dtype {dtype} but A has {a._dtype_name}, and out is written in "
            f"place, never converted: pass out of dtype {a._dtype_name} (or leave out=None "
            f"for a new array), or convert A with A.astype({dtype!r})"
        )
    elsewhere = _ELSEWHERE.match(message)
    if elsewhere:
        argument = "out" if elsewhere["operand"] == "C" else elsewhere["operand"]
        return _arrays.device_mismatch(argument, elsewhere["where"], elsewhere["context"])
    return error


# check_on_context's words; the context is on A's device (_context_for).
_ELSEWHERE = re.compile(r"^(?P<operand>B|C) is on (?P<where>\S+) but the context is on (?P<context>\S+)$")


def _described(a: BsrMatrix, transpose: bool) -> str:
    return f"A is {a.shape[0]}x{a.shape[1]}{', transposed' if transpose else ''}"


def dense_matmul(B: Any, a: BsrMatrix, *, transpose: bool) -> Any:
    """``B @ op(A)`` (the ``@`` operator with the sparse matrix on the right), computed as
    ``(op(A)^T @ B^T)^T``: both transposes are views of the same memory, nothing is copied."""
    if _arrays.array_kind(B) is None and not isinstance(B, (list, tuple)):
        return NotImplemented
    ctx = default_context(a.device)
    rows, inner = _op_shape(a, transpose)
    stream = ctx._stream_for(B)
    b_view = _input(B, "B", stream, a, _arrays.readable_layout, True, (1, 2))
    if len(b_view.shape) == 1:  # v @ op(A) == op(A)^T @ v
        return matmul(a, b_view.source, transpose_a=not transpose)
    b = _arrays.dense_operand(b_view, "B")
    out = _arrays.empty_like(b_view, (b.rows, inner), "B")
    c = _arrays.dense_operand(_arrays.view(out, "out", stream=stream), "out", written=True)
    try:
        _execute(
            ctx, stream, a, not transpose, b.transposed(), c.transposed(), 1.0, 0.0, None,
            _core.ACTIVATION_NONE, tune=False,
        )
    except Error as error:
        if error.message.startswith("B.shape[0] = "):  # B's columns: it was read transposed
            raise InvalidArgumentError(
                f"B has {b.cols} columns but op(A) has {rows} rows ({_described(a, transpose)})"
            ) from None
        raise
    return out


def _execute(
    ctx: Context,
    stream: Optional[int],
    a: BsrMatrix,
    transpose: bool,
    b: _arrays.DenseOperand,
    c: _arrays.DenseOperand,
    alpha: float,
    beta: float,
    bias: Optional[_arrays.ArrayView],
    activation: int,
    *,
    tune: bool,
) -> None:
    run = _core.tune if tune else _core.matmul
    with ctx._session(stream) as handle:
        run(
            handle, a._handle, b.descriptor(_device_of(b.view, "B", a._device)),
            c.descriptor(_device_of(c.view, "out", a._device)), transpose,
            alpha, beta, 0 if bias is None else bias.address, activation,
        )


def _device_of(array_view: _arrays.ArrayView, argument: str, a_device: Device) -> Device:
    """Where the core is told an operand lies: its own device. A bare __cuda_array_interface__
    names no ordinal: on a CUDA A it is said to be on A's (the core checks the pointer); on a
    CPU A no descriptor can say where it is, so the mismatch is refused here."""
    device: Device = array_view.device
    if device[1] != ANY_CUDA_ORDINAL:
        return device
    if is_cuda(a_device):
        return a_device
    raise _arrays.device_mismatch(argument, device_name(device), device_name(a_device))


def _unwrap(A: Any, transpose_a: bool) -> Tuple[BsrMatrix, bool]:
    operand = getattr(A, "_product_operand", None)  # BsrMatrix's and TransposedBsrMatrix's
    if operand is not None:
        result: Tuple[BsrMatrix, bool] = operand(bool(transpose_a))
        return result
    raise UnsupportedError(
        "A must be a bsrmm.BsrMatrix (build one with BsrMatrix.from_scipy, from_dense or "
        f"from_arrays); got {type(A).__name__}"
    )


def _op_shape(a: BsrMatrix, transpose: bool) -> Tuple[int, int]:
    rows, cols = a.shape
    return (cols, rows) if transpose else (rows, cols)


def _context_for(a: BsrMatrix, context: Optional[Context]) -> Context:
    if context is None:
        return default_context(a.device)
    if not isinstance(context, Context):
        raise UnsupportedError(f"context must be a bsrmm.Context; got {type(context).__name__}")
    if not same_device(context._device, a._device):
        raise InvalidArgumentError(f"context is on {context.device} but A is on {a.device}")
    return context


def _scalar(value: Any, argument: str) -> float:
    if type(value) is float:  # the common case, without the slower ABC check below
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError(f"{argument} must be a real number; got {value!r}")
    try:
        return float(value)
    except OverflowError:
        text = repr(value)
        shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
        raise InvalidArgumentError(
            f"{argument} = {shown} is outside the float64 range (|{argument}| < 1.8e308)"
        ) from None


def _input(
    obj: Any, argument: str, stream: Optional[int], a: BsrMatrix,
    readable: Callable[[_arrays.ArrayView], bool], convert: bool, ranks: Tuple[int, ...],
) -> _arrays.ArrayView:
    return _arrays.input_view(
        obj, argument, stream=stream, device=a._device, dtype=a._dtype_name, readable=readable,
        convert=convert, ranks=ranks,
    )


def _bias_view(
    bias: Any, rows: int, a: BsrMatrix, stream: Optional[int], convert: bool
) -> Optional[_arrays.ArrayView]:
    """The bias reaches the core as a bare address, so its length, dtype and stride are all
    settled here (a contiguous copy when strided; in A's dtype when it has another and
    ``convert``)."""
    if bias is None:
        return None
    bias_view = _input(bias, "bias", stream, a, _arrays.readable_contiguous, convert, (1,))
    if bias_view.shape != (rows,):
        raise InvalidArgumentError(
            f"bias must be 1-D with one value per row of C ({rows}); got shape {bias_view.shape}"
        )
    return bias_view
