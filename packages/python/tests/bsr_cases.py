"""Shared test helpers: random BSR operands, the float64 reference and the element-wise check.
Every checked product is compared element by element against float64 arithmetic on exactly the
values bsrmm was given (low-precision inputs are converted, not regenerated)."""

from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np

try:
    import ml_dtypes
except ImportError:  # bfloat16 cases skip with a reason
    ml_dtypes = None

DTYPES = ["float32", "float64", "float16", "bfloat16"]

# Unit roundoff of each storage type, and of the type the core accumulates in.
_OUTPUT_UNIT = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
_ACCUMULATE_UNIT = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-24, "bfloat16": 2.0**-24}


def np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        if ml_dtypes is None:
            import pytest

            pytest.skip("bfloat16 in numpy needs ml_dtypes, which is not installed")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def random_values(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(np_dtype(dtype))


def random_bsr(
    rng: np.random.Generator,
    block_rows: int,
    block_cols: int,
    blocksize: Tuple[int, int],
    density: float,
    dtype: str,
    empty_row_fraction: float = 0.0,
):
    """(indptr, indices, data) with sorted unique block columns; a fraction of block rows empty."""
    mask = rng.random((block_rows, block_cols)) < density
    if empty_row_fraction:
        mask[rng.random(block_rows) < empty_row_fraction] = False
    indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(np.int32)
    indices = np.nonzero(mask)[1].astype(np.int32)
    data = random_values(rng, (len(indices), *blocksize), dtype)
    return indptr, indices, data


def dense_from_bsr(indptr, indices, data, shape) -> np.ndarray:
    """The BSR arrays expanded to a float64 dense matrix, by the plain definition."""
    bh, bw = data.shape[1:]
    dense = np.zeros(shape, dtype=np.float64)
    for block_row in range(len(indptr) - 1):
        for k in range(indptr[block_row], indptr[block_row + 1]):
            c = indices[k]
            dense[block_row * bh : (block_row + 1) * bh, c * bw : (c + 1) * bw] = data[k].astype(
                np.float64
            )
    return dense


def activate(x: np.ndarray, activation: Optional[str]) -> np.ndarray:
    if activation is None:
        return x
    if activation == "relu":
        return np.maximum(x, 0.0)
    if activation == "gelu":  # tanh approximation, as the ABI documents
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    if activation == "silu":
        return x / (1.0 + np.exp(-x))
    raise ValueError(activation)


def reference(a_dense, b, *, alpha=1.0, beta=0.0, c0=None, transpose_a=False, bias=None,
              activation=None):
    """(value, scale): the float64 result and, per element, the sum of the magnitudes that
    went into it (the natural scale of its rounding error)."""
    op_a = a_dense.T if transpose_a else a_dense
    b64 = np.asarray(b).astype(np.float64)
    if b64.ndim == 1:
        b64 = b64[:, None]
    value = alpha * (op_a @ b64)
    scale = abs(alpha) * (np.abs(op_a) @ np.abs(b64))
    if beta != 0.0:
        c64 = np.asarray(c0).astype(np.float64).reshape(value.shape)
        value = value + beta * c64
        scale = scale + abs(beta) * np.abs(c64)
    if bias is not None:
        bias64 = np.asarray(bias).astype(np.float64)[:, None]
        value = value + bias64
        scale = scale + np.abs(bias64)
    return activate(value, activation), scale


def sddmm_reference(indptr, indices, blocksize, x, y, alpha=1.0, beta=0.0, before=None):
    """(value, scale) of shape (nnzb, bh, bw): alpha * (x @ y) at each block + beta * before."""
    bh, bw = blocksize
    x64 = np.asarray(x).astype(np.float64)
    y64 = np.asarray(y).astype(np.float64)
    product, scale = x64 @ y64, np.abs(x64) @ np.abs(y64)
    value = np.empty((len(indices), bh, bw))
    magnitude = np.empty_like(value)
    for row in range(len(indptr) - 1):
        for b in range(indptr[row], indptr[row + 1]):
            c = indices[b]
            rows, cols = slice(row * bh, (row + 1) * bh), slice(c * bw, (c + 1) * bw)
            value[b] = alpha * product[rows, cols]
            magnitude[b] = abs(alpha) * scale[rows, cols]
    if beta != 0.0:
        before64 = np.asarray(before).astype(np.float64)
        value += beta * before64
        magnitude += np.abs(beta * before64)
    return value, magnitude


def assert_matches(got, ref_value, ref_scale, dtype: str, inner: int, slack: float = 1.0) -> None:
    """Every element within the rounding bound of its dtype: output rounding relative to the
    value, accumulation error relative to the scale; NaN exactly where the reference has NaN."""
    got64 = np.asarray(got).astype(np.float64).reshape(ref_value.shape)
    tol = slack * (
        4 * _OUTPUT_UNIT[dtype] * np.abs(ref_value)
        + 4 * (inner + 8) * _ACCUMULATE_UNIT[dtype] * ref_scale
    )
    ref_nan = np.isnan(ref_value)
    got_nan = np.isnan(got64)
    assert np.array_equal(ref_nan, got_nan), (
        f"NaN mismatch at {np.argwhere(ref_nan != got_nan)[:5].tolist()}"
    )
    ref_inf = np.isinf(ref_value)
    assert np.array_equal(got64[ref_inf], ref_value[ref_inf]), "an infinity differs"
    finite = np.isfinite(ref_value)
    with np.errstate(invalid="ignore"):
        bad = finite & ~(np.abs(got64 - ref_value) <= tol)
    if bad.any():
        where = np.argwhere(bad)[:5]
        detail = ", ".join(
            f"{tuple(i)}: got {got64[tuple(i)]!r} want {ref_value[tuple(i)]!r} tol {tol[tuple(i)]:.3g}"
            for i in where
        )
        raise AssertionError(f"{int(bad.sum())} of {bad.size} elements out of tolerance: {detail}")


def strided_buffer(rng, rows: int, cols: int, dtype: str, layout: str, pad: int):
    """(view, backing): a rows x cols view into a larger buffer, row- ('C') or column-major ('F'),
    with `pad` extra elements per leading dimension, so ld > the minimum."""
    if layout == "C":
        backing = random_values(rng, (rows, cols + pad), dtype)
        return backing[:, :cols], backing
    backing = random_values(rng, (cols, rows + pad), dtype)
    return backing[:, :rows].T, backing
