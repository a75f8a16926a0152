"""matmul against the float64 reference on randomized cases: block shapes (square and
rectangular), densities 0..1, empty block rows, N = 1, alpha/beta, both layouts of B and C with
padded leading dimensions, transposed A, bias and activations, every dtype. `out` is poisoned
with NaN before every run whose beta is 0, and the padding around it must stay untouched."""

from __future__ import annotations

import os

import numpy as np
import pytest

import bsrmm
from bsr_cases import (
    DTYPES,
    assert_matches,
    dense_from_bsr,
    np_dtype,
    random_bsr,
    random_values,
    reference,
    strided_buffer,
)

BLOCKSIZES = [(1, 1), (2, 3), (4, 4), (3, 8), (8, 2), (16, 16), (5, 7), (32, 32), (16, 64)]
DENSITIES = [0.0, 0.05, 0.3, 0.7, 1.0]
ACTIVATIONS = [None, "relu", "gelu", "silu"]


def _random_case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    bh, bw = BLOCKSIZES[rng.integers(len(BLOCKSIZES))]
    return dict(
        seed=seed,
        dtype=DTYPES[seed % len(DTYPES)],
        blocksize=(bh, bw),
        block_rows=int(rng.integers(1, max(2, 96 // bh) + 1)),
        block_cols=int(rng.integers(1, max(2, 96 // bw) + 1)),
        density=float(DENSITIES[rng.integers(len(DENSITIES))]),
        empty_rows=float(rng.choice([0.0, 0.3])),
        n=int(rng.choice([1, 2, 7, 16, 33, 64])),
        transpose_a=bool(rng.integers(2)),
        layout_b=str(rng.choice(["C", "F"])),
        layout_c=str(rng.choice(["C", "F"])),
        pad_b=int(rng.choice([0, 3])),
        pad_c=int(rng.choice([0, 5])),
        alpha=float(rng.choice([1.0, 0.5, -1.25])),
        beta=float(rng.choice([0.0, 0.0, 1.0, -0.75])),
        bias=bool(rng.integers(2)),
        activation=ACTIVATIONS[rng.integers(len(ACTIVATIONS))],
    )


CASES = [_random_case(seed) for seed in range(160)]


def _case_id(case: dict) -> str:
    return (
        f"{case['seed']}-{case['dtype']}-b{case['blocksize'][0]}x{case['blocksize'][1]}"
        f"-d{case['density']}-n{case['n']}{'-T' if case['transpose_a'] else ''}"
        f"-{case['layout_b']}{case['layout_c']}"
    )


def run_case(case: dict) -> None:
    rng = np.random.default_rng(case["seed"] + 10_000)
    dtype = case["dtype"]
    bh, bw = case["blocksize"]
    rows, cols = case["block_rows"] * bh, case["block_cols"] * bw
    indptr, indices, data = random_bsr(
        rng, case["block_rows"], case["block_cols"], (bh, bw), case["density"], dtype,
        case["empty_rows"],
    )
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (rows, cols))
    m, k = (cols, rows) if case["transpose_a"] else (rows, cols)
    n = case["n"]
    b, _ = strided_buffer(rng, k, n, dtype, case["layout_b"], case["pad_b"])
    c, c_backing = strided_buffer(rng, m, n, dtype, case["layout_c"], case["pad_c"])
    c0 = c.copy()
    if case["beta"] == 0.0:
        c[...] = np.nan
    sentinel = c_backing.copy()
    bias = random_values(rng, m, dtype) if case["bias"] else None

    result = bsrmm.matmul(
        a, b, alpha=case["alpha"], beta=case["beta"], out=c, transpose_a=case["transpose_a"],
        bias=bias, activation=case["activation"],
    )

    assert result is c
    value, scale = reference(
        dense_from_bsr(indptr, indices, data, (rows, cols)), b, alpha=case["alpha"],
        beta=case["beta"], c0=c0, transpose_a=case["transpose_a"], bias=bias,
        activation=case["activation"],
    )
    assert_matches(c, value, scale, dtype, inner=k)
    # Padding past each leading dimension: never written.
    untouched = np.ones(c_backing.shape, dtype=bool)
    if case["layout_c"] == "C":
        untouched[:, :n] = False
    else:
        untouched[:, :m] = False
    np.testing.assert_array_equal(
        c_backing[untouched].astype(np.float64), sentinel[untouched].astype(np.float64)
    )


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_random_case_matches_float64_reference(case):
    run_case(case)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transpose_a", [False, True])
def test_new_result_has_b_type_dtype_and_row_major_layout(dtype, transpose_a):
    rng = np.random.default_rng(7)
    indptr, indices, data = random_bsr(rng, 6, 4, (4, 3), 0.5, dtype)
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (24, 12))
    k = 24 if transpose_a else 12
    b = np.asfortranarray(random_values(rng, (k, 5), dtype))
    c = bsrmm.matmul(a, b, transpose_a=transpose_a)
    assert type(c) is np.ndarray and c.dtype == np_dtype(dtype) and c.flags.c_contiguous
    value, scale = reference(dense_from_bsr(indptr, indices, data, (24, 12)), b,
                             transpose_a=transpose_a)
    assert_matches(c, value, scale, dtype, inner=k)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vector_b_gives_vector_result(dtype):
    rng = np.random.default_rng(3)
    indptr, indices, data = random_bsr(rng, 5, 7, (3, 2), 0.4, dtype)
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (15, 14))
    backing = random_values(rng, 28, dtype)
    v = backing[::2]  # a strided vector is a column with ld = 2
    y = a @ v
    assert y.shape == (15,)
    value, scale = reference(dense_from_bsr(indptr, indices, data, (15, 14)), v)
    assert_matches(y, value, scale, dtype, inner=14)


def test_operator_forms_match_matmul():
    rng = np.random.default_rng(11)
    indptr, indices, data = random_bsr(rng, 4, 6, (8, 4), 0.5, "float64")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (32, 24))
    dense = dense_from_bsr(indptr, indices, data, (32, 24))
    x = rng.standard_normal((24, 9))
    y = rng.standard_normal((32, 9))
    w = rng.standard_normal((5, 32))
    z = rng.standard_normal((5, 24))
    np.testing.assert_allclose(a @ x, dense @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.T @ y, dense.T @ y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w @ a, w @ dense, rtol=1e-12, atol=1e-12)  # dense @ sparse
    np.testing.assert_allclose(z @ a.T, z @ dense.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y[:, 0] @ a, y[:, 0] @ dense, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        bsrmm.matmul(a.T, x, transpose_a=True), dense @ x, rtol=1e-12, atol=1e-12
    )


def test_beta_scales_existing_out_and_alpha_zero_keeps_only_beta_c():
    rng = np.random.default_rng(5)
    indptr, indices, data = random_bsr(rng, 3, 3, (4, 4), 1.0, "float64")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (12, 12))
    b = rng.standard_normal((12, 4))
    c = rng.standard_normal((12, 4))
    expected = 0.5 * c
    bsrmm.matmul(a, b, alpha=0.0, beta=0.5, out=c)
    np.testing.assert_allclose(c, expected, rtol=1e-15, atol=0)


def test_empty_matrix_writes_bias_and_activation_only():
    rng = np.random.default_rng(9)
    indptr, indices, data = random_bsr(rng, 4, 5, (2, 2), 0.0, "float32")
    assert len(indices) == 0
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (8, 10))
    b = random_values(rng, (10, 3), "float32")
    bias = random_values(rng, 8, "float32")
    c = np.full((8, 3), np.nan, dtype=np.float32)
    bsrmm.matmul(a, b, out=c, bias=bias, activation="relu")
    np.testing.assert_array_equal(c, np.repeat(np.maximum(bias, 0)[:, None], 3, axis=1))


def test_zero_sized_products_return_empty_results():
    a = bsrmm.BsrMatrix.from_arrays(np.zeros(3, np.int32), np.zeros(0, np.int32),
                                    np.zeros((0, 2, 2), np.float32), (4, 6))
    assert bsrmm.matmul(a, np.zeros((6, 0), np.float32)).shape == (4, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_inf_propagate_per_ieee(dtype):
    rng = np.random.default_rng(21)
    indptr, indices, data = random_bsr(rng, 4, 4, (2, 2), 1.0, dtype)
    data[1, 0, 1] = np.nan  # block (0, 1): row 0, column 3
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (8, 8))
    b = random_values(rng, (8, 3), dtype)
    b[5, 2] = np.inf
    c = bsrmm.matmul(a, b)
    value, scale = reference(dense_from_bsr(indptr, indices, data, (8, 8)), b)
    assert np.isnan(c[0]).all()  # NaN in A poisons its whole row of C
    assert_matches(c, value, scale, dtype, inner=8)


def test_nan_in_out_is_ignored_when_beta_is_zero():
    rng = np.random.default_rng(2)
    indptr, indices, data = random_bsr(rng, 2, 2, (2, 2), 1.0, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (4, 4))
    b = random_values(rng, (4, 2), "float32")
    c = np.full((4, 2), np.nan, np.float32)
    bsrmm.matmul(a, b, out=c)
    assert np.isfinite(c).all()


def test_context_reports_the_variant_it_ran():
    rng = np.random.default_rng(4)
    indptr, indices, data = random_bsr(rng, 3, 3, (4, 4), 0.6, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (12, 12))
    ctx = bsrmm.Context("cpu", num_threads=1)
    assert ctx.last_variant == ""
    bsrmm.matmul(a, random_values(rng, (12, 4), "float32"), context=ctx)
    assert ctx.last_variant in bsrmm.variants()


def test_every_cpu_variant_forced_by_name_matches_reference():
    rng = np.random.default_rng(8)
    indptr, indices, data = random_bsr(rng, 5, 4, (4, 8), 0.5, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (20, 32))
    b = random_values(rng, (32, 6), "float32")
    value, scale = reference(dense_from_bsr(indptr, indices, data, (20, 32)), b)
    cpu_variants = [v for v in bsrmm.variants(kind="matmul") if v.startswith("cpu_")]
    assert cpu_variants, bsrmm.variants()
    for name in cpu_variants:
        ctx = bsrmm.Context("cpu", variant=name)
        c = np.full((20, 6), np.nan, np.float32)
        try:
            bsrmm.matmul(a, b, out=c, context=ctx)
        except bsrmm.UnsupportedError as error:
            # No CBLAS on this machine (none installed, none bundled with numpy): forcing the
            # dense fallback says so instead of running. No row-wise kernels (a CPU without AVX2 +
            # FMA or AVX-512, a sanitized build): forcing cpu_rowwise_simd says so.
            no_blas = name == "cpu_dense_blas" and "no CBLAS" in str(error)
            no_avx512 = name == "cpu_rowwise_simd" and "AVX-512" in str(error)
            assert no_blas or no_avx512, error
            assert not (no_blas and os.environ.get("BSRMM_BLAS")), error
            continue
        assert ctx.last_variant == name
        assert_matches(c, value, scale, "float32", inner=32)
