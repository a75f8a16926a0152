"""fp8 operands (OCP E4M3 and E5M2, as ml_dtypes' float8_e4m3fn / float8_e5m2 and torch's store
them): quantisation with float32 scales, fp8 matrices and their multiplies.

The value an fp8 element stands for is its fp8 value times its scale. A's scales are one per
stored block ("block", what block-wise quantisation makes), one per block row ("block_row") or
one for the whole matrix ("tensor"); B's one per tensor (a number) or one per column. Computed
scales are ``amax / max_finite`` of the elements they cover (448 for E4M3, 57344 for E5M2;
1 where every element is 0), so the largest magnitude lands on the format's largest value.

The core multiplies fp8 on the CPU at float32 speed (A's values dequantised into float32 once
per matrix, B widened per call; the float64 reference kernel when forced) and on CUDA devices: on Hopper with fp8 tensor cores where B is column-major (as
``torch._scaled_mm`` takes it, and as X of a linear layer is: ``x.t()``) and blocks 64 or 128,
elsewhere by converting on load. A matrix is quantised on the host and moved to its device;
on a GPU, B (and per-column ``b_scales``) are arrays on A's device, read in place.
"""

from __future__ import annotations

import numbers
import sys
from typing import Any, Optional, Tuple

import numpy as np

from . import _arrays, _core, _dtypes
from ._devices import Device, device_name, is_cuda
from ._errors import InvalidArgumentError, UnsupportedError

MAX_FINITE = {"float8_e4m3": 448.0, "float8_e5m2": 57344.0}
SCALE_KINDS = {
    "block": _core.SCALE_PER_BLOCK,
    "block_row": _core.SCALE_PER_BLOCK_ROW,
    "tensor": _core.SCALE_PER_TENSOR,
}
SCALE_NAMES = {code: name for name, code in SCALE_KINDS.items()}
SCALE_NAMES[_core.SCALE_PER_COLUMN] = "column"


def fp8_name(dtype: Any) -> Optional[str]:
    """"float8_e4m3" / "float8_e5m2" for an fp8 dtype given by bsrmm's name, numpy's or torch's
    (float8_e4m3fn), a numpy dtype or an ml_dtypes type; None for any other dtype."""
    if dtype is None:
        return None
    if isinstance(dtype, str):
        name = dtype
    elif type(dtype).__module__ == "torch":
        name = _dtypes.torch_name(dtype)
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            return None
    if name in _dtypes.FP8_CODES:
        return name
    return _dtypes.FP8_ARRAY_NAMES.get(name)


def scale_kind(scale: Any) -> int:
    if not isinstance(scale, str) or scale not in SCALE_KINDS:
        raise InvalidArgumentError(f"scale must be 'block', 'block_row' or 'tensor'; got {scale!r}")
    return SCALE_KINDS[scale]


def _scale_of(amax: np.ndarray, fp8: str) -> np.ndarray:
    """amax / max_finite as float32 (1 where amax is 0). Rounded to float32 the scale may fall
    just below amax / max_finite, so amax / scale may pass max_finite by that rounding: the
    clip in _quantised makes it max_finite, never NaN."""
    return np.where(amax > 0, amax / MAX_FINITE[fp8], 1.0).astype(np.float32)


def _quantised(values: np.ndarray, scales: np.ndarray, fp8: str) -> np.ndarray:
    """values / scales (scales broadcast), clipped to the format's range (ml_dtypes turns an
    out-of-range E4M3 value into NaN, not into the largest value) and rounded to nearest."""
    limit = MAX_FINITE[fp8]
    return np.clip(values / scales, -limit, limit).astype(_dtypes.numpy_dtype(fp8))


def _checked_scales(scales: Any, count: int, what: str, argument: str = "scales") -> np.ndarray:
    given = _scale_values(scales, argument)
    array = given.reshape(1) if given.ndim == 0 else given
    if array.ndim != 1 or array.shape[0] != count:
        raise InvalidArgumentError(f"{argument} must hold {what} ({count}); got shape {given.shape}")
    with np.errstate(over="ignore"):  # past float32's range is inf: refused below, by name
        single = np.ascontiguousarray(array, dtype=np.float32)
    finite = np.isfinite(single)
    if not finite.all():
        raise InvalidArgumentError(
            f"{argument} must be finite in float32 (magnitude at most 3.4e38); got {float(array[~finite][0])}"
        )
    return single


def _scale_values(scales: Any, argument: str) -> np.ndarray:
    """Scales as float64 values from a number or any host array. They are data, never part of a
    graph: a torch tensor is read detached, whether or not it requires grad."""
    if isinstance(scales, numbers.Real) and not isinstance(scales, bool):
        try:
            return np.array(float(scales))
        except OverflowError:  # an int past float64's range
            raise InvalidArgumentError(
                f"{argument} must be finite in float32; got {type(scales).__name__} past float64's range"
            ) from None
    values = host_array(scales, argument)
    if _dtypes.numpy_name(values.dtype) not in _dtypes.CONVERTIBLE and fp8_name(values.dtype) is None:
        raise UnsupportedError(f"{argument} has dtype {values.dtype}; scales are real numbers")
    return values.astype(np.float64)


def given_block_scales(indptr: np.ndarray, nnzb: int, kind: int, scales: Any) -> np.ndarray:
    """A's ``scales`` argument checked against ``kind`` (count, finiteness) as float32."""
    if kind == _core.SCALE_PER_BLOCK:
        return _checked_scales(scales, nnzb, "one scale per stored block (nnzb)")
    if kind == _core.SCALE_PER_BLOCK_ROW:
        return _checked_scales(scales, indptr.shape[0] - 1, "one scale per block row")
    return _checked_scales(scales, 1, "one scale for the matrix")


def block_values(
    indptr: np.ndarray, data: np.ndarray, fp8: str, kind: int, scales: Any
) -> Tuple[np.ndarray, np.ndarray]:
    """A's blocks (nnzb, bh, bw) quantised to ``fp8`` with scales of ``kind``: the given ones
    (checked), else computed from the blocks' amax. Returns (fp8 blocks, float32 scales)."""
    values = np.asarray(data, dtype=np.float64)
    nnzb = values.shape[0]
    block_rows = indptr.shape[0] - 1
    row_of_block = np.repeat(np.arange(block_rows), np.diff(indptr).astype(np.int64))
    if scales is not None:
        checked = given_block_scales(indptr, nnzb, kind, scales)
    else:
        amax_blocks = np.abs(values).max(axis=(1, 2)) if nnzb else np.zeros(0)
        if kind == _core.SCALE_PER_BLOCK:
            amax = amax_blocks
        elif kind == _core.SCALE_PER_BLOCK_ROW:
            amax = np.zeros(block_rows)
            np.maximum.at(amax, row_of_block, amax_blocks)
        else:
            amax = np.array([amax_blocks.max() if nnzb else 0.0])
        checked = _scale_of(amax, fp8)
    per_block = {
        _core.SCALE_PER_BLOCK: lambda: checked,
        _core.SCALE_PER_BLOCK_ROW: lambda: checked[row_of_block],
        _core.SCALE_PER_TENSOR: lambda: np.full(nnzb, checked[0], dtype=np.float32),
    }[kind]()
    return _quantised(values, per_block.astype(np.float64)[:, None, None], fp8), checked


def quantize(x: Any, dtype: str = "float8_e4m3", *, per_column: bool = False) -> Tuple[np.ndarray, Any]:
    """A dense host array quantised to ``dtype`` ("float8_e4m3" or "float8_e5m2") for B of
    :func:`bsrmm.matmul`: returns ``(values, scales)`` with one scale (a float) or, with
    ``per_column``, one per column (a float32 array), each ``amax / max_finite``. Pass them as
    ``matmul(A, values, b_scales=scales)``."""
    fp8 = fp8_name(dtype)
    if fp8 is None:
        raise UnsupportedError(f"dtype must be 'float8_e4m3' or 'float8_e5m2'; got {dtype!r}")
    values = np.asarray(x, dtype=np.float64)
    if values.ndim not in (1, 2):
        raise InvalidArgumentError(f"x must be 1-D or 2-D; got shape {values.shape}")
    if per_column:
        if values.ndim != 2:
            raise InvalidArgumentError("per_column needs a 2-D x")
        amax = np.abs(values).max(axis=0) if values.shape[0] else np.zeros(values.shape[1])
        scales = _scale_of(amax, fp8)
        return _quantised(values, scales.astype(np.float64)[None, :], fp8), scales
    amax_one = float(np.abs(values).max()) if values.size else 0.0
    scale = _scale_of(np.array([amax_one]), fp8)
    return _quantised(values, float(scale[0]), fp8), float(scale[0])


def b_scale_array(b_scales: Any, columns: int) -> Tuple[np.ndarray, int]:
    """matmul's ``b_scales``: a real number (one per tensor) or a 1-D array of one per column."""
    if b_scales is None:
        raise InvalidArgumentError(
            "b_scales is required when B is fp8: a number (one scale for B) or one per column "
            "(bsrmm.quantize_fp8 returns them)"
        )
    array = _scale_values(b_scales, "b_scales")
    if array.ndim == 0:
        return _checked_scales(array, 1, "one scale", "b_scales"), _core.SCALE_PER_TENSOR
    return (
        _checked_scales(array, columns, "one scale per column of B", "b_scales"),
        _core.SCALE_PER_COLUMN,
    )


def address(array: np.ndarray) -> int:
    value: int = array.__array_interface__["data"][0]
    return value


def host_array(obj: Any, argument: str) -> np.ndarray:
    """An operand of an fp8 product (or construction) on the host as numpy. torch's .numpy()
    has no fp8 and no bfloat16, so such a CPU tensor's bytes are viewed as ml_dtypes' type."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        if obj.device.type != "cpu":
            raise UnsupportedError(
                f"{argument} is on {obj.device} but is read on the host here (an fp8 A on the host, or "
                "A's scales): move it to the CPU, or A to its GPU with A.to('cuda')"
            )
        name = fp8_name(obj.dtype) or ("bfloat16" if obj.dtype == torch.bfloat16 else None)
        tensor = obj.detach().contiguous()
        if name is None:
            try:
                return np.asarray(tensor.numpy())
            except TypeError:  # a dtype numpy lacks (complex32, ...), in torch's words
                raise UnsupportedError(f"{argument} has dtype {obj.dtype}, which numpy cannot read") from None
        # reshape(-1): a 0-d tensor's bytes cannot be viewed as uint8
        return tensor.reshape(-1).view(torch.uint8).numpy().view(_dtypes.numpy_dtype(name)).reshape(tensor.shape)
    return _arrays.as_numpy(obj, argument)


def multiply(
    ctx: Any, a: Any, transpose: bool, B: Any, b_scales: Any, alpha: float, beta: float,
    out: Any, bias: Any, activation: int, *, tune: bool,
) -> Any:
    """matmul with an fp8 A (see bsrmm.matmul): B an fp8 array on A's device with ``b_scales``;
    the result ``out`` (float32, float16 or bfloat16; a new float32 array when None)."""
    if is_cuda(a._device):
        return _multiply_on_device(ctx, a, transpose, B, b_scales, alpha, beta, out, bias, activation, tune=tune)
    b = host_array(B, "B")
    fp8_b = fp8_name(b.dtype)
    if fp8_b is None:
        raise _not_fp8_b(str(b.dtype), a)
    if b.ndim not in (1, 2):
        raise InvalidArgumentError(f"B must be 1-D or 2-D; got shape {b.shape}")
    vector = b.ndim == 1
    b2 = b.reshape(-1, 1) if vector else b
    scales, kind = b_scale_array(b_scales, b2.shape[1])
    rows = a.shape[1] if transpose else a.shape[0]
    if out is None:
        if beta != 0.0:
            raise InvalidArgumentError(f"beta = {beta} scales an existing C: pass it as out=")
        out = np.empty((rows,) if vector else (rows, b2.shape[1]), dtype=np.float32)
    c_view = _arrays.view(out, "out")
    # The descriptor below says host memory: an out elsewhere would be written as if it were.
    _arrays.check_device(c_view, "out", a._device)
    _check_out_dtype(c_view)
    b_operand = _arrays.dense_operand(_arrays.view(b2, "B"), "B")
    c_operand = _arrays.dense_operand(c_view, "out", written=True)
    bias_view = _bias_view(bias, rows, c_view.dtype, a._device, None)
    run = _core.tune if tune else _core.matmul
    cpu = (_core.DEVICE_CPU, 0)
    with ctx._session(None) as handle:
        run(
            handle, a._handle, b_operand.descriptor(cpu), c_operand.descriptor(cpu), transpose,
            alpha, beta, 0 if bias_view is None else bias_view.address, activation,
            address(scales), kind, scales.shape[0],
        )
    return out


def _check_out_dtype(c_view: _arrays.ArrayView) -> None:
    if c_view.dtype not in ("float32", "float16", "bfloat16"):
        raise UnsupportedError(
            f"out has dtype {c_view.dtype}; an fp8 product is written in float32, float16 or bfloat16"
        )


def _bias_view(
    bias: Any, rows: int, dtype: str, device: Device, stream: Optional[int]
) -> Optional[_arrays.ArrayView]:
    """The bias (None when none) as the core reads it: 1-D, compact, one value per row of C, on
    A's device, in out's dtype (converted by the caller's own library, as the other products do:
    numpy has no bfloat16 for a torch one)."""
    if bias is None:
        return None
    bias_view = _arrays.input_view(
        bias, "bias", stream=stream, device=device, dtype=dtype,
        readable=_arrays.readable_contiguous, convert=True, ranks=(1,),
    )
    if bias_view.shape != (rows,):
        raise InvalidArgumentError(
            f"bias must be 1-D with one value per row of C ({rows}); got shape {bias_view.shape}"
        )
    return bias_view


def _not_fp8_b(dtype: str, a: Any) -> UnsupportedError:
    return UnsupportedError(
        f"B has dtype {dtype} but A is {a._dtype_name}: an fp8 A multiplies an fp8 B "
        "(float8_e4m3 or float8_e5m2); quantise it with bsrmm.quantize_fp8(B) and pass the "
        "scales as b_scales"
    )


def _device_b_scales(
    b_scales: Any, columns: int, device: Device, stream: Optional[int], held: list
) -> Tuple[int, int, int, Device]:
    """``b_scales`` of a product on a GPU as (address, kind, count, device): one number on the
    host (the core folds it into alpha), or one float32 per column in the device's memory, read
    in place by the kernel. Per-column scales on the host are refused: a copy would have to
    outlive the queued product. ``held`` keeps a host array alive through the call."""
    if not isinstance(b_scales, numbers.Real) and _arrays.array_kind(b_scales) is not None:
        view = _arrays.view(b_scales, "b_scales", stream=stream)
        if is_cuda(view.device) and (view.shape == () or (view.shape == (1,) and columns != 1)):
            # One scale for B, computed on the device (x.abs().max() / 448): read to the host,
            # where the core folds it into alpha (this waits for it).
            b_scales = float(b_scales)
        elif is_cuda(view.device):
            _arrays.check_device(view, "b_scales", device)
            if view.dtype != "float32" or view.shape != (columns,) or not _arrays.readable_contiguous(view):
                raise InvalidArgumentError(
                    f"b_scales on {device_name(view.device)} must be 1-D contiguous float32 with one "
                    f"scale per column of B ({columns}); got {view.dtype} of shape {view.shape}"
                )
            return view.address, _core.SCALE_PER_COLUMN, columns, device
    scales, kind = b_scale_array(b_scales, columns)
    if kind == _core.SCALE_PER_COLUMN:
        raise UnsupportedError(
            f"b_scales holds one scale per column in host memory; a product on "
            f"{device_name(device)} reads them in place there: pass them as a float32 array on "
            f"{device_name(device)} (e.g. torch.as_tensor(scales, device='{device_name(device)}'))"
        )
    held.append(scales)
    return address(scales), kind, 1, (_core.DEVICE_CPU, 0)


def _multiply_on_device(
    ctx: Any, a: Any, transpose: bool, B: Any, b_scales: Any, alpha: float, beta: float,
    out: Any, bias: Any, activation: int, *, tune: bool,
) -> Any:
    """multiply for an fp8 A on a GPU: B an fp8 array (torch float8 tensors, or any array the
    reader takes) on A's device in either layout, read in place; out on that device."""
    device = a._device
    stream = ctx._stream_for(B, out, bias)
    if _arrays.array_kind(B) is None:
        raise UnsupportedError(
            f"B must be an fp8 array on {device_name(device)} (a torch float8_e4m3fn or "
            f"float8_e5m2 tensor there); got {type(B).__name__}"
        )
    b_view = _arrays.view(B, "B", stream=stream)
    _arrays.check_device(b_view, "B", device)
    if fp8_name(b_view.dtype) is None:
        raise _not_fp8_b(b_view.dtype, a)
    if len(b_view.shape) not in (1, 2):
        raise InvalidArgumentError(f"B must be 1-D or 2-D; got shape {b_view.shape}")
    if not _arrays.readable_layout(b_view):
        raise InvalidArgumentError(
            f"B (shape {b_view.shape}, strides {b_view.strides}) must be row- or column-major: "
            "pass B.contiguous() (or a column-major B, e.g. x.t() of a row-major x)"
        )
    vector = len(b_view.shape) == 1
    columns = 1 if vector else b_view.shape[1]
    rows = a.shape[1] if transpose else a.shape[0]
    result_shape = (rows,) if vector else (rows, columns)
    if out is None:
        if beta != 0.0:
            raise InvalidArgumentError(f"beta = {beta} scales an existing C: pass it as out=")
        out = _empty_float32_like(b_view, result_shape)
    c_view = _arrays.view(out, "out", stream=stream)
    _arrays.check_device(c_view, "out", device)
    _check_out_dtype(c_view)
    b_operand = _arrays.dense_operand(b_view, "B")
    c_operand = _arrays.dense_operand(c_view, "out", written=True)
    bias_view = _bias_view(bias, rows, c_view.dtype, device, stream)
    bias_address = 0 if bias_view is None else bias_view.address
    held: list = []  # a host scale's array, alive through the call
    scale_address, kind, count, scale_device = _device_b_scales(b_scales, columns, device, stream, held)
    run = _core.tune if tune else _core.matmul
    with ctx._session(stream) as handle:
        run(
            handle, a._handle, b_operand.descriptor(device), c_operand.descriptor(device), transpose,
            alpha, beta, bias_address, activation, scale_address, kind, count, *scale_device,
        )
    return out


def _empty_float32_like(template: Any, shape: Tuple[int, ...]) -> Any:
    """A new float32 result on the template's device, of its array library (torch or cupy)."""
    if template.kind == _arrays.TORCH:
        torch = sys.modules["torch"]
        return torch.empty(shape, dtype=torch.float32, device=template.source.device)
    if template.kind == _arrays.CUPY:
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(template.device[1]):
            return cupy.empty(shape, dtype=np.float32)
    raise UnsupportedError(
        f"B is a {type(template.source).__name__} in {device_name(template.device)} memory; "
        "bsrmm allocates results only as torch or cupy arrays: pass out="
    )


def dequantised(values: np.ndarray, indptr: np.ndarray, scales: np.ndarray, kind: int) -> np.ndarray:
    """A's blocks (nnzb, bh, bw) as float32: each fp8 value times its scale."""
    nnzb = values.shape[0]
    if kind == _core.SCALE_PER_BLOCK:
        per_block = scales
    elif kind == _core.SCALE_PER_BLOCK_ROW:
        per_block = scales[np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr).astype(np.int64))]
    else:
        per_block = np.full(nnzb, scales[0], dtype=np.float32)
    return values.astype(np.float32) * per_block[:, None, None]
