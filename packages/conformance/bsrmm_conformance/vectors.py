"""Materialises a bench suite's cases as conformance vectors (manifest.py): operands from the
bench's own generator (packages/bench, PRNG.md), laid out as each case says (layouts, leading
dimensions), with every byte a runner must not read or write poisoned with NaN."""

from __future__ import annotations

import numpy as np

from bsrmm_bench import cases as bench_cases
from bsrmm_bench import operands, prng

from .manifest import VectorCase, buffer_length, element_offsets, nan_storage, to_storage


def vector_case(case: bench_cases.Case, **changes) -> VectorCase:
    """The manifest line of a bench case (changes override fields: bad inputs start here)."""
    rows, cols = case.stored_shape
    fields = dict(
        id=case.id, expect="ok", dtype=case.dtype, rows=rows, cols=cols, bh=case.block[0], bw=case.block[1],
        sort=0, op="transpose" if case.transpose_a else "none",
        b_rows=case.k, b_cols=case.n, b_layout=case.layout_b, b_ld=case.ld_b, b_dtype=case.dtype,
        c_rows=case.m, c_cols=case.n, c_layout=case.layout_c, c_ld=case.ld_c, c_dtype=case.dtype,
        alpha=float(case.alpha), beta=float(case.beta), bias=int(case.bias), bias_dtype=case.dtype,
        activation=case.activation,
        c_aliases_b=0,
        y_rows=0, y_cols=0, y_layout="row", y_ld=1, y_dtype=case.dtype,
    )
    fields.update(changes)
    return VectorCase(**fields)


def case_arrays(case: bench_cases.Case) -> dict[str, np.ndarray]:
    """The arrays of a bench case in storage form: A's three arrays, B and C as padded buffers
    (padding NaN; C all NaN when beta == 0, so a binding that reads it shows), and the bias."""
    if case.f32_mode != "exact":
        raise ValueError(f"{case.id}: conformance runs exact float32 only (tf32 is a kernel choice, not an API)")
    ops = operands.build(case, sets=1)
    dtype = case.dtype
    arrays = {
        "row_ptr": ops.pattern.indptr.astype(np.int32),
        "col_idx": ops.pattern.indices.astype(np.int32),
        "values": to_storage(ops.sets[0].data, dtype).reshape(-1),
        "b": dense_buffer(to_storage(ops.sets[0].b, dtype), dtype, case.ld_b, case.layout_b),
    }
    if case.beta != 0:
        c0 = prng.dense_values(case.seed, prng.STREAM_C, case.m, case.n, dtype)
        arrays["c"] = dense_buffer(to_storage(c0, dtype), dtype, case.ld_c, case.layout_c)
    else:
        length = buffer_length(case.m, case.n, case.ld_c, case.layout_c)
        arrays["c"] = np.repeat(nan_storage(dtype), length)
    if case.bias:
        arrays["bias"] = to_storage(prng.dense_values(case.seed, prng.STREAM_BIAS, 1, case.m, dtype), dtype).reshape(-1)
    return arrays


def dense_buffer(logical: np.ndarray, dtype: str, ld: int, layout: str) -> np.ndarray:
    """A rows x cols matrix (storage form of `dtype`) placed in a buffer with leading dimension
    ld; every other element is NaN."""
    rows, cols = logical.shape
    buffer = np.repeat(nan_storage(dtype), buffer_length(rows, cols, ld, layout))
    buffer[element_offsets(rows, cols, ld, layout)] = logical
    return buffer


def from_suite(suite: str, case_filter: str | None = None) -> list[tuple[VectorCase, dict[str, np.ndarray]]]:
    from bsrmm_bench.runner import select

    return [(vector_case(c), case_arrays(c)) for c in select(bench_cases.load_suite(suite), case_filter)]
