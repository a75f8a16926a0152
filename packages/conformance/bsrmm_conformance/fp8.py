"""fp8 vectors (issue 27; manifest.py's a_scales / b_scales): A's values and B in float8_e4m3 /
float8_e5m2 with float32 scales, C in float32 / float16 / bfloat16, quantised from the bench's
generator's values (PRNG.md) with scales that map each group's largest magnitude onto the
format's largest finite value; and the bad inputs every binding must report with the C ABI's
status. The checker's reference is exact in float64 over the dequantised operands (check.py), so
the bound is C's rounding and the f32 summation (check.output_dtype), as for f16 / bf16."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from bsrmm_bench import prng

from .bad_inputs import INVALID, Arrays
from .manifest import VectorCase, fp8_numpy, nan_storage, to_storage
from .vectors import dense_buffer

MAX_FINITE = {"float8_e4m3": 448.0, "float8_e5m2": 57344.0}


@dataclass(frozen=True)
class Fp8:
    name: str
    dtype: str  # A's
    b_dtype: str
    c_dtype: str
    a_scales: str  # per-tensor | per-block | per-block-row
    b_scales: str  # per-tensor | per-column
    rows: int = 64
    cols: int = 48
    block: tuple[int, int] = (16, 8)
    n: int = 24
    density: float = 0.5
    b_layout: str = "row"
    c_layout: str = "row"
    pad: int = 0
    alpha: float = 1.0
    beta: float = 0.0
    bias: bool = False
    activation: str = "none"
    seed: int = 27


CASES = (
    Fp8("fp8-e4m3xe4m3-block-tensor-f32", "float8_e4m3", "float8_e4m3", "float32", "per-block", "per-tensor"),
    Fp8("fp8-e4m3xe5m2-blockrow-column-bf16", "float8_e4m3", "float8_e5m2", "bfloat16", "per-block-row", "per-column",
        alpha=0.5, beta=-1.0, bias=True, activation="relu", seed=28),
    Fp8("fp8-e4m3xe4m3-tensor-column-f16-col", "float8_e4m3", "float8_e4m3", "float16", "per-tensor", "per-column",
        rows=32, cols=64, block=(8, 16), n=9, b_layout="col", c_layout="col", pad=3, seed=29),
    Fp8("fp8-e4m3xe5m2-block-column-bf16-b64", "float8_e4m3", "float8_e5m2", "bfloat16", "per-block", "per-column",
        rows=128, cols=128, block=(64, 64), n=16, bias=True, activation="gelu", seed=30),
    Fp8("fp8-e5m2xe4m3-block-tensor-f32-n1", "float8_e5m2", "float8_e4m3", "float32", "per-block", "per-tensor",
        n=1, beta=0.5, seed=31),
)


def _quantise(values: np.ndarray, groups: np.ndarray, count: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """(fp8 bytes, float32 scales): values[i] / scales[groups[i]] rounded to `dtype`."""
    amax = np.zeros(count)
    np.maximum.at(amax, groups, np.abs(values))
    scales = np.where(amax == 0, 1.0, amax / MAX_FINITE[dtype]).astype(np.float32)
    quantised = (values / scales[groups].astype(np.float64)).astype(fp8_numpy(dtype))
    return quantised.view(np.uint8), scales


def _pattern(f: Fp8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(f.seed)
    block_rows, block_cols = f.rows // f.block[0], f.cols // f.block[1]
    keep = rng.random((block_rows, block_cols)) < f.density
    keep[0, 0] = True  # at least one block
    return np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype(np.int32), np.nonzero(keep)[1].astype(np.int32)


def build(f: Fp8, **changes) -> tuple[VectorCase, Arrays]:
    row_ptr, col_idx = _pattern(f)
    nnzb, (bh, bw) = col_idx.size, f.block
    values = prng.dense_values(f.seed, prng.STREAM_A, nnzb * bh, bw, "float32").astype(np.float64).reshape(-1)
    block_of = np.repeat(np.arange(nnzb), bh * bw)
    if f.a_scales == "per-block":
        a_groups, a_count = block_of, nnzb
    elif f.a_scales == "per-block-row":
        a_groups, a_count = np.repeat(np.arange(row_ptr.size - 1), np.diff(row_ptr))[block_of], row_ptr.size - 1
    else:
        a_groups, a_count = np.zeros_like(block_of), 1
    a_bytes, a_scales = _quantise(values, a_groups, a_count, f.dtype)
    b = prng.dense_values(f.seed, prng.STREAM_B, f.cols, f.n, "float32").astype(np.float64) * 3.0
    per_column = f.b_scales == "per-column"
    b_groups = np.tile(np.arange(f.n), f.cols) if per_column else np.zeros(f.cols * f.n, dtype=np.int64)
    b_bytes, b_scales = _quantise(b.reshape(-1), b_groups, f.n if per_column else 1, f.b_dtype)
    b_ld = (f.n if f.b_layout == "row" else f.cols) + f.pad
    c_ld = (f.n if f.c_layout == "row" else f.rows) + f.pad
    arrays: Arrays = {
        "row_ptr": row_ptr, "col_idx": col_idx, "values": a_bytes,
        "b": _fp8_buffer(b_bytes.reshape(f.cols, f.n), b_ld, f.b_layout),
        "a_scales": a_scales, "b_scales": b_scales,
    }
    if f.beta != 0:
        c0 = prng.dense_values(f.seed, prng.STREAM_C, f.rows, f.n, f.c_dtype)
        arrays["c"] = dense_buffer(to_storage(c0, f.c_dtype), f.c_dtype, c_ld, f.c_layout)
    else:
        arrays["c"] = dense_buffer(np.repeat(nan_storage(f.c_dtype), f.rows * f.n).reshape(f.rows, f.n), f.c_dtype, c_ld, f.c_layout)
    if f.bias:
        arrays["bias"] = to_storage(prng.dense_values(f.seed, prng.STREAM_BIAS, 1, f.rows, f.c_dtype), f.c_dtype).reshape(-1)
    fields = dict(
        id=f.name, expect="ok", dtype=f.dtype, rows=f.rows, cols=f.cols, bh=bh, bw=bw, sort=0, op="none",
        b_rows=f.cols, b_cols=f.n, b_layout=f.b_layout, b_ld=b_ld, b_dtype=f.b_dtype,
        c_rows=f.rows, c_cols=f.n, c_layout=f.c_layout, c_ld=c_ld, c_dtype=f.c_dtype,
        alpha=f.alpha, beta=f.beta, bias=int(f.bias), bias_dtype=f.c_dtype, activation=f.activation, c_aliases_b=0,
        y_rows=0, y_cols=0, y_layout="row", y_ld=1, y_dtype=f.c_dtype, a_scales=f.a_scales, b_scales=f.b_scales,
    )
    fields.update(changes)
    return VectorCase(**fields), arrays


def _fp8_buffer(logical: np.ndarray, ld: int, layout: str) -> np.ndarray:
    """dense_buffer for fp8 bytes: the padding is 0x7F, E4M3's NaN and an E5M2 NaN."""
    from .manifest import buffer_length, element_offsets

    rows, cols = logical.shape
    buffer = np.full(buffer_length(rows, cols, ld, layout), 0x7F, dtype=np.uint8)
    buffer[element_offsets(rows, cols, ld, layout)] = logical
    return buffer


BASE = CASES[0]


def _short(name: str):
    def mutate(case: VectorCase, arrays: Arrays) -> VectorCase:
        arrays[name] = arrays[name][:-1]
        return case
    return mutate


def _nan_a_scale(case: VectorCase, arrays: Arrays) -> VectorCase:
    arrays["a_scales"] = arrays["a_scales"].copy()
    arrays["a_scales"][0] = np.nan
    return case


# name: (the status every binding reports, the product it starts from, its mutation).
BAD_INPUTS = {
    "a-scales-short": (INVALID, BASE, _short("a_scales")),
    "b-scales-short": (INVALID, CASES[1], _short("b_scales")),
    "a-scale-nan": (INVALID, BASE, _nan_a_scale),
}

# op(A) = A^T, each block keeping its scale; square, so B's and C's shapes stay the first case's
# (per-block-row scales of A become per-block ones of A^T inside bsrmm).
TRANSPOSED = (replace(BASE, name="fp8-e4m3xe4m3-block-tensor-f32-transposed", rows=48),
              replace(CASES[1], name="fp8-e4m3xe5m2-blockrow-column-bf16-transposed", rows=48))


def vectors() -> list[tuple[VectorCase, Arrays]]:
    """Every valid fp8 product, then every bad input."""
    out = [build(f) for f in CASES] + [build(f, op="transpose") for f in TRANSPOSED]
    for name, (expect, base, mutate) in BAD_INPUTS.items():
        case, arrays = build(base, id=f"bad-fp8-{name}", expect=expect)
        out.append((mutate(case, arrays), arrays))
    return out
