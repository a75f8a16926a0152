"""The SDDMM's vectors (op=sddmm, manifest.py): values = alpha * (X Y)[A's stored blocks] +
beta * values, on patterns and operands from the bench's own generator (PRNG.md), with X and Y
in either layout and padded leading dimensions, and the bad inputs every binding must report
with the C ABI's status. X lives in the b fields, Y in the y fields, the values in the c fields
(nnzb x bh * bw, row-major); A's own values are not read."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from bsrmm_bench import cases as bench_cases
from bsrmm_bench import operands, prng

from .bad_inputs import INVALID, UNSUPPORTED, Arrays
from .manifest import VectorCase, buffer_length, nan_storage, to_storage
from .vectors import dense_buffer

# X and Y draw from the B and bias streams of the case's seed, the existing values from C's.
STREAM_X, STREAM_Y = prng.STREAM_B, prng.STREAM_BIAS


@dataclass(frozen=True)
class Sddmm:
    """One SDDMM: a pattern (rows x cols, blocks, density, seed) and the dense operands."""

    name: str
    dtype: str
    rows: int
    cols: int
    block: tuple[int, int]
    density: float
    t: int
    x_layout: str = "row"
    y_layout: str = "row"
    pad: int = 0  # extra elements per leading dimension of X and Y (NaN: never read)
    alpha: float = 1.0
    beta: float = 0.0
    pattern: str = "uniform"
    seed: int = 11


# Small enough for the whole matrix to run in seconds on two cores; blocks 64 and 128 reach the
# GPU's tensor-core kernels. The training layout (X^T as a column-major Y) is the first case.
CASES = (
    Sddmm("f32-grad-b16x8", "float32", 64, 48, (16, 8), 0.5, 24, "row", "col"),
    Sddmm("f64-b4-padded-beta", "float64", 32, 40, (4, 4), 0.4, 7, "col", "row", pad=3, alpha=-0.5, beta=0.75),
    Sddmm("f16-b32", "float16", 64, 64, (32, 32), 0.5, 40, "row", "row"),
    Sddmm("bf16-b8x16-skewed", "bfloat16", 48, 64, (8, 16), 0.3, 33, "col", "col", pad=1, alpha=2.0, beta=1.0,
          pattern="power_law"),
    Sddmm("f32-b1-empty-rows", "float32", 24, 20, (1, 1), 0.06, 5, "col", "row", pad=2, pattern="bernoulli"),
    Sddmm("f32-t0-beta", "float32", 16, 16, (4, 4), 0.5, 0, beta=0.5),
    Sddmm("f16-b64-grad", "float16", 128, 192, (64, 64), 0.5, 96, "row", "col"),
    Sddmm("bf16-b128", "bfloat16", 256, 256, (128, 128), 0.5, 64, "row", "row", alpha=0.25),
)


def _pattern_spec(s: Sddmm) -> dict:
    spec = {"kind": s.pattern, "density": s.density}
    if s.pattern == "power_law":
        spec["alpha"] = 1.5
    return spec


def _bench_case(s: Sddmm) -> bench_cases.Case:
    """A bench case with this pattern (its A operands give the pattern and A's values)."""
    return bench_cases.make_case({**bench_cases._DEFAULTS, "m": s.rows, "k": s.cols, "n": 1, "block": list(s.block),
                                  "dtype": s.dtype, "pattern": _pattern_spec(s), "seed": s.seed})


def _ld(rows: int, cols: int, layout: str, pad: int) -> int:
    return max(1, cols if layout == "row" else rows) + pad


def build(s: Sddmm, **changes) -> tuple[VectorCase, Arrays]:
    """The manifest line and arrays of one SDDMM; `changes` override manifest fields."""
    ops = operands.build(_bench_case(s), sets=1)
    bh, bw = s.block
    nnzb = ops.pattern.nnzb
    x_ld, y_ld = _ld(s.rows, s.t, s.x_layout, s.pad), _ld(s.t, s.cols, s.y_layout, s.pad)
    arrays = {
        "row_ptr": ops.pattern.indptr.astype(np.int32),
        "col_idx": ops.pattern.indices.astype(np.int32),
        "values": to_storage(ops.sets[0].data, s.dtype).reshape(-1),
        "b": dense_buffer(to_storage(prng.dense_values(s.seed, STREAM_X, s.rows, s.t, s.dtype), s.dtype), s.dtype, x_ld, s.x_layout),
        "y": dense_buffer(to_storage(prng.dense_values(s.seed, STREAM_Y, s.t, s.cols, s.dtype), s.dtype), s.dtype, y_ld, s.y_layout),
    }
    if s.beta != 0:
        v0 = prng.dense_values(s.seed, prng.STREAM_C, nnzb, bh * bw, s.dtype)
        arrays["c"] = dense_buffer(to_storage(v0, s.dtype), s.dtype, bh * bw, "row")
    else:  # only written: NaN shows an element the SDDMM skipped or read
        arrays["c"] = np.repeat(nan_storage(s.dtype), buffer_length(nnzb, bh * bw, bh * bw, "row"))
    fields = dict(
        id=f"sddmm-{s.name}", expect="ok", dtype=s.dtype, rows=s.rows, cols=s.cols, bh=bh, bw=bw, sort=0, op="sddmm",
        b_rows=s.rows, b_cols=s.t, b_layout=s.x_layout, b_ld=x_ld, b_dtype=s.dtype,
        c_rows=nnzb, c_cols=bh * bw, c_layout="row", c_ld=max(1, bh * bw), c_dtype=s.dtype,
        alpha=float(s.alpha), beta=float(s.beta), bias=0, bias_dtype=s.dtype, activation="none", c_aliases_b=0,
        y_rows=s.t, y_cols=s.cols, y_layout=s.y_layout, y_ld=y_ld, y_dtype=s.dtype,
    )
    fields.update(changes)
    return VectorCase(**fields), arrays


def reference(case: VectorCase, x: np.ndarray, y: np.ndarray, c0: np.ndarray | None,
              row_ptr: np.ndarray, col_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float64 values, the magnitude tolerance.bound scales with), nnzb x bh * bw, from X, Y, the
    existing values c0 (None when beta = 0: they hold NaN poison) and the pattern."""
    bh, bw = case.bh, case.bw
    rows = np.repeat(np.arange(row_ptr.size - 1), np.diff(row_ptr))
    with np.errstate(invalid="ignore", over="ignore"):
        product, size = x @ y, np.abs(x) @ np.abs(y)
        def blocks(full: np.ndarray) -> np.ndarray:
            grid = full.reshape(full.shape[0] // bh, bh, full.shape[1] // bw, bw)
            return grid[rows, :, col_idx, :].reshape(col_idx.size, bh * bw)
        value, magnitude = case.alpha * blocks(product), abs(case.alpha) * blocks(size)
        if c0 is not None:
            value, magnitude = value + case.beta * c0, magnitude + abs(case.beta) * np.abs(c0)
    return value, magnitude


# Bad inputs: each breaks one rule of a valid SDDMM (f32, 32 x 24 of 8 x 4 blocks, T = 6).
BASE = Sddmm("base", "float32", 32, 24, (8, 4), 0.5, 6, "row", "col")


def _x_rows(case: VectorCase, arrays: Arrays) -> VectorCase:
    rows = case.b_rows + 1
    arrays["b"] = np.ones(rows * case.b_cols, dtype=np.float32)
    return replace(case, b_rows=rows, b_layout="row", b_ld=case.b_cols)


def _x_cols(case: VectorCase, arrays: Arrays) -> VectorCase:
    cols = case.b_cols + 1
    arrays["b"] = np.ones(case.b_rows * cols, dtype=np.float32)
    return replace(case, b_cols=cols, b_layout="row", b_ld=cols)


def _y_cols(case: VectorCase, arrays: Arrays) -> VectorCase:
    cols = case.y_cols + case.bw
    arrays["y"] = np.ones(case.y_rows * cols, dtype=np.float32)
    return replace(case, y_cols=cols, y_layout="row", y_ld=cols)


def _values_shape(extra_rows: int, extra_width: int):
    """Values of nnzb + extra_rows rows of bh * (bw + extra_width), passed with beta = 1 so
    that every binding is handed them (a block one element wider in every row: expressible as
    (rows, bh, bw + 1) in Python)."""
    def mutate(case: VectorCase, arrays: Arrays) -> VectorCase:
        rows, cols = case.c_rows + extra_rows, case.bh * (case.bw + extra_width)
        arrays["c"] = np.ones(rows * cols, dtype=np.float32)
        return replace(case, c_rows=rows, c_cols=cols, c_ld=cols, beta=1.0)
    return mutate


def _dtype(operand: str):
    """X, Y or the values (beta = 1) in float64 beside a float32 pattern."""
    def mutate(case: VectorCase, arrays: Arrays) -> VectorCase:
        rows, cols, layout, ld = {"b": (case.b_rows, case.b_cols, "row", case.b_cols),
                                  "y": (case.y_rows, case.y_cols, "row", case.y_cols),
                                  "c": (case.c_rows, case.c_cols, "row", case.c_cols)}[operand]
        arrays[operand] = np.full(buffer_length(rows, cols, ld, layout), 0.5, dtype=np.float64)
        if operand == "b":
            return replace(case, b_dtype="float64", b_layout=layout, b_ld=ld)
        if operand == "y":
            return replace(case, y_dtype="float64", y_layout=layout, y_ld=ld)
        return replace(case, c_dtype="float64", beta=1.0)
    return mutate


BAD_INPUTS = {
    "x_rows_differ_from_a_rows": (INVALID, _x_rows),
    "x_cols_differ_from_y_rows": (INVALID, _x_cols),
    "y_cols_differ_from_a_cols": (INVALID, _y_cols),
    "values_rows_differ_from_nnzb": (INVALID, _values_shape(1, 0)),
    "values_cols_differ_from_block_size": (INVALID, _values_shape(0, 1)),
    "x_dtype_differs_from_a": (UNSUPPORTED, _dtype("b")),
    "y_dtype_differs_from_a": (UNSUPPORTED, _dtype("y")),
    "values_dtype_differs_from_a": (UNSUPPORTED, _dtype("c")),
}


def vectors() -> list[tuple[VectorCase, Arrays]]:
    """Every valid SDDMM, then every bad input."""
    out = [build(s) for s in CASES]
    for name, (expect, mutate) in BAD_INPUTS.items():
        case, arrays = build(BASE, id=f"bad-sddmm-{name}", expect=expect)
        out.append((mutate(case, arrays), arrays))
    return out
