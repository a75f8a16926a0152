"""Bad inputs, and the status every binding must report for each: the C ABI's (bsrmm.h). Each
starts from a small valid case and breaks one rule, in the arrays or in an argument. A runner
whose API cannot express a bad input (a length the C ABI never sees, a negative usize, two
dtypes in one generic Rust call) reports it as skipped, with the reason; the checker requires
every binding that ran it to report the same status (check.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from bsrmm_bench import cases as bench_cases

from .manifest import VectorCase, to_storage
from .vectors import case_arrays, dense_buffer, vector_case

INVALID = "BSRMM_STATUS_INVALID_ARGUMENT"
UNSUPPORTED = "BSRMM_STATUS_UNSUPPORTED"

# 32 x 24 stored A of 8 x 4 blocks (4 x 6 block grid, 3 blocks per row), B 24 x 4, C 32 x 4.
BASE = bench_cases.make_case({
    **bench_cases._DEFAULTS, "m": 32, "k": 24, "n": 4, "block": [8, 4], "dtype": "float32",
    "pattern": {"kind": "uniform", "density": 0.5}, "seed": 7,
})
# Square, so that C may be B's memory.
SQUARE = bench_cases.make_case({**bench_cases._DEFAULTS, "m": 24, "k": 24, "n": 4, "block": 8,
                                "dtype": "float32", "pattern": {"kind": "uniform", "density": 0.5}, "seed": 7})

Arrays = dict[str, np.ndarray]
Mutation = Callable[[VectorCase, Arrays], VectorCase]


def _row0(arrays: Arrays) -> slice:
    ptr = arrays["row_ptr"]
    return slice(int(ptr[0]), int(ptr[1]))


def _set(name: str, index: int, value) -> Mutation:
    def mutate(case: VectorCase, arrays: Arrays) -> VectorCase:
        arrays[name] = arrays[name].copy()
        arrays[name][index] = value
        return case
    return mutate


def _row_ptr_decreasing(case: VectorCase, arrays: Arrays) -> VectorCase:
    ptr = arrays["row_ptr"] = arrays["row_ptr"].copy()
    ptr[1] = ptr[2] + 1
    return case


def _extra_block(case: VectorCase, arrays: Arrays) -> VectorCase:
    """One more block than row_ptr's last entry says."""
    arrays["col_idx"] = np.append(arrays["col_idx"], np.int32(0))
    arrays["values"] = np.append(arrays["values"], arrays["values"][: case.bh * case.bw])
    return case


def _col_out_of_range(case: VectorCase, arrays: Arrays) -> VectorCase:
    arrays["col_idx"] = arrays["col_idx"].copy()
    arrays["col_idx"][_row0(arrays).stop - 1] = case.cols // case.bw
    return case


def _col_unsorted(case: VectorCase, arrays: Arrays) -> VectorCase:
    idx = arrays["col_idx"] = arrays["col_idx"].copy()
    first = _row0(arrays).start
    idx[first], idx[first + 1] = idx[first + 1], idx[first]
    return case


def _col_duplicate(case: VectorCase, arrays: Arrays) -> VectorCase:
    idx = arrays["col_idx"] = arrays["col_idx"].copy()
    first = _row0(arrays).start
    idx[first + 1] = idx[first]
    return case


def _drop_last(name: str, count: Callable[[VectorCase], int] = lambda case: 1) -> Mutation:
    def mutate(case: VectorCase, arrays: Arrays) -> VectorCase:
        arrays[name] = arrays[name][: arrays[name].size - count(case)]
        return case
    return mutate


def _no_values(case: VectorCase, arrays: Arrays) -> VectorCase:
    arrays["values"] = arrays["values"][:0]
    return replace(case, bh=0)


def _b_rows(case: VectorCase, arrays: Arrays) -> VectorCase:
    """B with one more row than op(A) has columns (its buffer grows to match)."""
    rows = case.b_rows + 1
    logical = np.zeros((rows, case.b_cols), dtype=arrays["b"].dtype)
    arrays["b"] = dense_buffer(logical, case.b_dtype, case.b_cols, "row")
    return replace(case, b_rows=rows, b_layout="row", b_ld=case.b_cols)


def _c_shape(extra_rows: int, extra_cols: int) -> Mutation:
    """C of another shape, with beta = 1 so that every binding is handed the existing C."""
    def mutate(case: VectorCase, arrays: Arrays) -> VectorCase:
        rows, cols = case.c_rows + extra_rows, case.c_cols + extra_cols
        logical = to_storage(np.ones((rows, cols), dtype=np.float32), case.c_dtype)
        arrays["c"] = dense_buffer(logical, case.c_dtype, cols, "row")
        return replace(case, c_rows=rows, c_cols=cols, c_layout="row", c_ld=cols, beta=1.0)
    return mutate


def _ld_too_small(operand: str) -> Mutation:
    """A leading dimension one below the minimum (B row-major: < cols; C column-major: < rows)."""
    def mutate(case: VectorCase, arrays: Arrays) -> VectorCase:
        if operand == "b":
            return replace(case, b_layout="row", b_ld=case.b_cols - 1)
        return replace(case, c_layout="col", c_ld=case.c_rows - 1)
    return mutate


def _dtype(operand: str, dtype: str) -> Mutation:
    """One operand in another dtype than A (same values); C with beta = 1, so it is passed."""
    def mutate(case: VectorCase, arrays: Arrays) -> VectorCase:
        rows, cols = (case.b_rows, case.b_cols) if operand == "b" else (case.c_rows, case.c_cols)
        logical = to_storage(np.full((rows, cols), 0.5, dtype=np.float32), dtype)
        arrays[operand] = dense_buffer(logical, dtype, cols, "row")
        if operand == "b":
            return replace(case, b_dtype=dtype, b_layout="row", b_ld=cols)
        return replace(case, c_dtype=dtype, c_layout="row", c_ld=cols, beta=1.0)
    return mutate


def _bias(length: int, dtype: str | None = None) -> Mutation:
    """A bias of C.rows + length values, in C's dtype unless another is given."""
    def mutate(case: VectorCase, arrays: Arrays) -> VectorCase:
        bias_dtype = dtype or case.c_dtype
        arrays["bias"] = to_storage(np.ones(case.c_rows + length, dtype=np.float32), bias_dtype)
        return replace(case, bias=1, bias_dtype=bias_dtype)
    return mutate


def _activation(case: VectorCase, arrays: Arrays) -> VectorCase:
    return replace(case, activation="unknown")


def _alias(case: VectorCase, arrays: Arrays) -> VectorCase:
    return replace(case, c_aliases_b=1, c_layout=case.b_layout, c_ld=case.b_ld)


def _negative_rows(case: VectorCase, arrays: Arrays) -> VectorCase:
    return replace(case, rows=-case.rows)


def _rows_indivisible(case: VectorCase, arrays: Arrays) -> VectorCase:
    return replace(case, rows=case.rows + 1)


# name -> (expected status, base case, mutation)
BAD_INPUTS: dict[str, tuple[str, bench_cases.Case, Mutation]] = {
    "row_ptr_not_from_zero": (INVALID, BASE, _set("row_ptr", 0, 1)),
    "row_ptr_decreasing": (INVALID, BASE, _row_ptr_decreasing),
    "row_ptr_end_is_not_nnzb": (INVALID, BASE, _extra_block),
    "row_ptr_too_short": (INVALID, BASE, _drop_last("row_ptr")),
    "col_idx_out_of_range": (INVALID, BASE, _col_out_of_range),
    "col_idx_negative": (INVALID, BASE, _set("col_idx", 0, -1)),
    "col_idx_unsorted": (INVALID, BASE, _col_unsorted),
    "col_idx_duplicate": (INVALID, BASE, _col_duplicate),
    "values_one_block_short": (INVALID, BASE, _drop_last("values", lambda case: case.bh * case.bw)),
    "block_height_zero": (INVALID, BASE, _no_values),
    "rows_not_a_multiple_of_block_height": (INVALID, BASE, _rows_indivisible),
    "rows_negative": (INVALID, BASE, _negative_rows),
    "b_rows_differ_from_op_a_cols": (INVALID, BASE, _b_rows),
    "c_rows_differ_from_op_a_rows": (INVALID, BASE, _c_shape(1, 0)),
    "c_cols_differ_from_b_cols": (INVALID, BASE, _c_shape(0, 1)),
    "b_ld_below_cols": (INVALID, BASE, _ld_too_small("b")),
    "c_ld_below_rows": (INVALID, BASE, _ld_too_small("c")),
    "b_dtype_differs_from_a": (UNSUPPORTED, BASE, _dtype("b", "float64")),
    "c_dtype_differs_from_a": (UNSUPPORTED, BASE, _dtype("c", "float16")),
    "bias_length_differs_from_c_rows": (INVALID, BASE, _bias(1)),
    "bias_dtype_differs_from_c": (UNSUPPORTED, BASE, _bias(0, "float64")),
    "activation_unknown": (INVALID, BASE, _activation),
    "c_is_b": (INVALID, SQUARE, _alias),
}


def _unsorted_with_sort_flag(case: VectorCase, arrays: Arrays) -> VectorCase:
    """Blocks reversed within every block row (values move with their column): valid with sort=1."""
    ptr, idx = arrays["row_ptr"], arrays["col_idx"].copy()
    values = arrays["values"].reshape(idx.size, -1).copy()
    for r in range(ptr.size - 1):
        row = slice(int(ptr[r]), int(ptr[r + 1]))
        idx[row], values[row] = idx[row][::-1], values[row][::-1]
    arrays["col_idx"], arrays["values"] = idx, values.reshape(-1)
    return replace(case, sort=1)


def _alpha_nan(case: VectorCase, arrays: Arrays) -> VectorCase:
    """alpha = NaN is a valid number: every element of C is NaN (IEEE), in every binding."""
    return replace(case, alpha=float("nan"))


# Valid inputs built the same way (checked against float64 like every suite case; the suite
# format keeps alpha finite, so the NaN case lives here).
MUTATED_VALID: dict[str, tuple[bench_cases.Case, Mutation]] = {
    "unsorted_blocks_with_sort_flag": (BASE, _unsorted_with_sort_flag),
    "alpha_nan": (BASE, _alpha_nan),
}


def vectors() -> list[tuple[VectorCase, Arrays]]:
    out = []
    for name, (expect, base, mutate) in BAD_INPUTS.items():
        arrays = case_arrays(base)
        case = mutate(vector_case(base, id=f"bad-{name}", expect=expect), arrays)
        out.append((case, arrays))
    for name, (base, mutate) in MUTATED_VALID.items():
        arrays = case_arrays(base)
        out.append((mutate(vector_case(base, id=f"valid-{name}"), arrays), arrays))
    return out
