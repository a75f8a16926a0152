"""fp8 (E4M3 / E5M2) matrices and products on the CPU (on a GPU: test_fp8_gpu.py).

Two kinds of check, both on fresh random inputs with ``out`` poisoned with NaN first:

* the product against a float64 product of the *dequantised* operands (fp8 value x scale):
  only accumulation and C's rounding differ, bounded by ``gamma_k * sum|a||b| + u_C * |ref|``
  (gamma_k = (k + 2) * 2^-24: float32 accumulation, the contract, over operands each rounded
  once to float32 (value times scale); u_C: half an ulp of out's dtype);
* the product against float64 of the *unquantised* operands, within the bound quantisation
  allows. Rounding to a format with t mantissa bits moves a normal value by at most 2^-(t+1) of
  itself (2^-4 for E4M3, 2^-3 for E5M2) and a subnormal one by at most half the subnormal step
  (2^-10 for E4M3, 2^-17 for E5M2), each times the element's scale. With e_x that bound per
  element, |a^ b^ - a b| <= e_a |b| + |a| e_b + e_a e_b, summed over k: the test computes that
  sum exactly (dense matrices of |a|, |b|, e_a, e_b) and adds the accumulation term above.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import bsrmm

ml_dtypes = pytest.importorskip("ml_dtypes", reason="fp8 arrays in numpy need ml_dtypes")

FP8 = {
    "float8_e4m3": (np.dtype(ml_dtypes.float8_e4m3fn), 448.0, 2.0**-4, 2.0**-10),
    "float8_e5m2": (np.dtype(ml_dtypes.float8_e5m2), 57344.0, 2.0**-3, 2.0**-17),
}
OUT_ULP = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}


def _out_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _sparse_dense(rng: np.random.Generator, rows: int, cols: int, block: tuple, density: float) -> np.ndarray:
    """A dense matrix of random values whose blocks are dropped (zeroed) with 1 - density."""
    x = rng.standard_normal((rows, cols)) * rng.uniform(0.01, 100.0)
    keep = rng.random((rows // block[0], cols // block[1])) < density
    return x * np.kron(keep, np.ones(block))


def _accumulation_bound(a: np.ndarray, b: np.ndarray, ref: np.ndarray, out_dtype: str) -> np.ndarray:
    k = a.shape[1]
    return (k + 2) * 2.0**-24 * (np.abs(a) @ np.abs(b)) + OUT_ULP[out_dtype] * np.abs(ref) * 1.01 + 1e-30


def _poisoned(rows: int, cols: int, out_dtype: str) -> np.ndarray:
    return np.full((rows, cols), np.nan, dtype=_out_dtype(out_dtype))


@pytest.mark.parametrize("a_dtype", list(FP8))
@pytest.mark.parametrize("b_dtype", list(FP8))
@pytest.mark.parametrize("scale", ["block", "block_row", "tensor"])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("out_dtype", list(OUT_ULP))
def test_matches_float64_of_the_dequantised_operands(a_dtype, b_dtype, scale, per_column, out_dtype):
    rng = np.random.default_rng(hash((a_dtype, b_dtype, scale, per_column, out_dtype)) % 2**32)
    x = _sparse_dense(rng, 24, 40, (4, 8), 0.5)
    A = bsrmm.BsrMatrix.from_dense(x, (4, 8), dtype=a_dtype, scale=scale)
    assert A.dtype == FP8[a_dtype][0] and A.scale == scale
    q, s = bsrmm.quantize_fp8(rng.standard_normal((40, 9)), b_dtype, per_column=per_column)
    out = _poisoned(24, 9, out_dtype)
    assert bsrmm.matmul(A, q, b_scales=s, out=out) is out
    a64 = A.to_dense().astype(np.float64)
    b64 = q.astype(np.float64) * np.asarray(s, dtype=np.float64)
    ref = a64 @ b64
    got = out.astype(np.float64)
    assert np.all(np.abs(got - ref) <= _accumulation_bound(a64, b64, ref, out_dtype))


@pytest.mark.parametrize("scale", ["block", "block_row", "tensor"])
def test_transpose_a_keeps_each_blocks_scale(scale):
    """A^T @ B with fp8 A: the plan's A^T carries each block's scale (per block of A^T for A's
    per-block-row scales), against float64 of the dequantised operands."""
    rng = np.random.default_rng(41)
    x = _sparse_dense(rng, 24, 40, (4, 8), 0.5)
    A = bsrmm.BsrMatrix.from_dense(x, (4, 8), dtype="float8_e4m3", scale=scale)
    q, s = bsrmm.quantize_fp8(rng.standard_normal((24, 5)), "float8_e5m2", per_column=True)
    out = _poisoned(40, 5, "float32")
    assert bsrmm.matmul(A, q, b_scales=s, out=out, transpose_a=True) is out
    a64 = A.to_dense().astype(np.float64).T
    b64 = q.astype(np.float64) * np.asarray(s, dtype=np.float64)
    ref = a64 @ b64
    assert np.all(np.abs(out.astype(np.float64) - ref) <= _accumulation_bound(a64, b64, ref, "float32"))


def _quantisation_error(x: np.ndarray, scales: np.ndarray, fp8: str) -> np.ndarray:
    """The most rounding to fp8 with these scales (broadcast over x) moves each element."""
    _, _, relative, subnormal = FP8[fp8]
    return relative * np.abs(x) + subnormal * scales


@pytest.mark.parametrize("fp8", list(FP8))
def test_within_the_quantisation_bound_of_the_unquantised_product(fp8):
    rng = np.random.default_rng(8)
    block = (8, 8)
    x = _sparse_dense(rng, 32, 64, block, 0.6)
    A = bsrmm.BsrMatrix.from_dense(x, block, dtype=fp8)
    b = rng.standard_normal((64, 11)) * 3.0
    q, s = bsrmm.quantize_fp8(b, fp8, per_column=True)
    out = _poisoned(32, 11, "float32")
    bsrmm.matmul(A, q, b_scales=s, out=out)
    # Each kept block's scale, spread over its elements (dropped blocks are exact zeros).
    scale_of = np.zeros_like(x)
    rows = np.repeat(np.arange(A.indptr.shape[0] - 1), np.diff(A.indptr))
    for block_index, (r, c) in enumerate(zip(rows, A.indices)):
        scale_of[r * 8 : (r + 1) * 8, c * 8 : (c + 1) * 8] = A.scales[block_index]
    e_a = _quantisation_error(x, scale_of, fp8) * (scale_of > 0)
    e_b = _quantisation_error(b, np.broadcast_to(s, b.shape), fp8)
    ref = x @ b
    bound = e_a @ np.abs(b) + np.abs(x) @ e_b + e_a @ e_b
    bound += _accumulation_bound(np.abs(x) + e_a, np.abs(b) + e_b, ref, "float32")
    error = np.abs(out.astype(np.float64) - ref)
    assert np.all(error <= bound)
    # The bound is not vacuous: quantisation moved the product by a visible fraction of it.
    assert error.max() > 1e-3 * np.abs(ref).max()


def test_scales_are_block_amax_over_max_finite_and_one_for_zero_blocks():
    data = np.zeros((3, 2, 2))
    data[0] = [[1.0, -896.0], [3.0, 4.0]]
    data[2] = [[0.5, 0.25], [-0.125, 0.0]]  # block 1 stays all zero
    A = bsrmm.BsrMatrix.from_arrays([0, 2, 3], [0, 1, 1], data, (4, 4), dtype="float8_e4m3")
    np.testing.assert_array_equal(A.scales, np.float32([896.0 / 448.0, 1.0, 0.5 / 448.0]))
    # The largest magnitude of each block lands on 448.
    assert float(np.abs(A.data[0].astype(np.float32)).max()) == 448.0
    assert float(np.abs(A.data[2].astype(np.float32)).max()) == 448.0


def test_given_scales_quantise_and_are_kept():
    rng = np.random.default_rng(3)
    x = _sparse_dense(rng, 8, 8, (4, 4), 1.0)
    scales = np.float32([0.5, 0.25])  # one per block row
    A = bsrmm.BsrMatrix.from_dense(x, 4, dtype="float8_e4m3", scales=scales, scale="block_row")
    np.testing.assert_array_equal(A.scales, scales)
    expected = np.clip(x / np.repeat(scales, 4)[:, None], -448, 448).astype(ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(A.to_dense(), expected.astype(np.float32) * np.repeat(scales, 4)[:, None])
    # fp8 data taken as it is, with its scales.
    B = bsrmm.BsrMatrix.from_arrays(A.indptr, A.indices, A.data, A.shape, scales=A.scales, scale="block_row")
    np.testing.assert_array_equal(B.to_dense(), A.to_dense())


def test_epilogue_alpha_beta_bias_activation():
    rng = np.random.default_rng(5)
    A = bsrmm.BsrMatrix.from_dense(_sparse_dense(rng, 16, 16, (4, 4), 0.7), 4, dtype="float8_e4m3")
    q, s = bsrmm.quantize_fp8(rng.standard_normal((16, 6)), "float8_e5m2")
    out = rng.standard_normal((16, 6)).astype(np.float32)
    before = out.astype(np.float64)
    bias = rng.standard_normal(16).astype(np.float32)
    bsrmm.matmul(A, q, b_scales=s, out=out, alpha=-0.5, beta=2.0, bias=bias, activation="relu")
    a64, b64 = A.to_dense().astype(np.float64), q.astype(np.float64) * s
    ref = np.maximum(-0.5 * (a64 @ b64) + 2.0 * before + bias[:, None], 0.0)
    bound = 16 * 2.0**-24 * (np.abs(a64) @ np.abs(b64) + np.abs(before) + np.abs(bias)[:, None])
    assert np.all(np.abs(out - ref) <= bound + 2.0**-24 * np.abs(ref) * 1.01 + 1e-30)


def test_vector_b_tune_pickle_and_astype():
    rng = np.random.default_rng(11)
    x = _sparse_dense(rng, 8, 12, (2, 4), 0.8)
    A = bsrmm.BsrMatrix.from_dense(x, (2, 4), dtype="float8_e4m3")
    q, s = bsrmm.quantize_fp8(rng.standard_normal(12))
    v = bsrmm.matmul(A, q, b_scales=s)
    assert v.shape == (8,) and v.dtype == np.float32
    np.testing.assert_allclose(v, A.to_dense().astype(np.float64) @ (q.astype(np.float64) * s), rtol=1e-5, atol=1e-6)
    context = bsrmm.Context("cpu")
    out = _poisoned(8, 1, "float32")
    bsrmm.tune(A, q.reshape(12, 1), b_scales=s, out=out, context=context)
    assert context.last_variant in ("cpu_blocked_simd", "cpu_rowwise_simd")  # A and B widened to f32
    np.testing.assert_allclose(out[:, 0], v, rtol=1e-5)
    again = pickle.loads(pickle.dumps(A))
    np.testing.assert_array_equal(again.to_dense(), A.to_dense())
    np.testing.assert_array_equal(again.scales, A.scales)
    np.testing.assert_array_equal(A.astype("float32").to_dense(), A.to_dense())


def test_torch_float8_b():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    A = bsrmm.BsrMatrix.from_dense(_sparse_dense(rng, 8, 8, (4, 4), 1.0), 4, dtype="float8_e4m3")
    b = torch.randn(8, 3, dtype=torch.float32)
    scale = float(b.abs().max()) / 448.0
    b8 = (b / scale).to(torch.float8_e4m3fn)
    got = bsrmm.matmul(A, b8, b_scales=scale)
    a64, b64 = A.to_dense().astype(np.float64), b8.to(torch.float64).numpy() * np.float32(scale)
    ref = a64 @ b64
    assert np.all(np.abs(got - ref) <= _accumulation_bound(a64, b64, ref, "float32"))


def test_torch_float8_e5m2_b_is_read_in_place():
    """A torch float8_e5m2 CPU tensor is B without a copy (its bytes viewed as ml_dtypes'
    type), with per-column scales, into a bfloat16 out, against float64 of the dequantised
    operands."""
    torch = pytest.importorskip("torch")
    from bsrmm import _fp8

    rng = np.random.default_rng(23)
    A = bsrmm.BsrMatrix.from_dense(_sparse_dense(rng, 8, 12, (4, 4), 0.6), 4, dtype="float8_e4m3")
    b = torch.randn(12, 5, dtype=torch.float64)
    scales = (b.abs().amax(dim=0) / 57344.0).to(torch.float32)
    b8 = (b / scales.to(torch.float64)).to(torch.float8_e5m2)
    assert np.shares_memory(_fp8.host_array(b8, "B"), b8.view(torch.uint8).numpy())
    out = np.full((8, 5), np.nan, dtype=ml_dtypes.bfloat16)
    bsrmm.matmul(A, b8, b_scales=scales.numpy(), out=out)
    ref = A.to_dense().astype(np.float64) @ (b8.to(torch.float64).numpy() * scales.numpy().astype(np.float64))
    magnitude = np.abs(A.to_dense().astype(np.float64)) @ np.abs(b8.to(torch.float64).numpy() * scales.numpy())
    bound = 2.0**-8 * np.abs(ref) + 14 * 2.0**-24 * magnitude
    assert np.all(np.abs(out.astype(np.float64) - ref) <= bound)


@pytest.fixture()
def fp8_case():
    rng = np.random.default_rng(17)
    A = bsrmm.BsrMatrix.from_dense(_sparse_dense(rng, 8, 8, (4, 4), 1.0), 4, dtype="float8_e4m3")
    q, s = bsrmm.quantize_fp8(rng.standard_normal((8, 3)), per_column=True)
    return A, q, s


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda A, q, s: bsrmm.matmul(A, q), ValueError, "b_scales is required"),
        (lambda A, q, s: bsrmm.matmul(A, q, b_scales=s[:2]), ValueError, "b_scales must hold one scale per column"),
        (lambda A, q, s: bsrmm.matmul(A, q, b_scales=np.float32([np.nan, 1, 1])), ValueError, "b_scales must be finite"),
        (lambda A, q, s: bsrmm.matmul(A, q.astype(np.float32), b_scales=s), TypeError, "B has dtype float32"),
        (lambda A, q, s: bsrmm.matmul(A, q, b_scales=s, out=np.empty((8, 3))), TypeError, "out has dtype float64"),
        (lambda A, q, s: bsrmm.matmul(A.astype("float32"), q.astype(np.float32), b_scales=s), ValueError, "b_scales is for fp8"),
    ],
)
def test_bad_products_name_the_keyword(fp8_case, call, error, words):
    with pytest.raises(error, match=words):
        call(*fp8_case)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(dtype="float8_e4m3", scales=[1.0, 2.0]), ValueError, r"scales must hold one scale per stored block \(nnzb\) \(4\)"),
        (dict(dtype="float8_e4m3", scales=[1.0, np.inf, 1.0, 1.0]), ValueError, "scales must be finite"),
        (dict(dtype="float8_e4m3", scale="column"), ValueError, "scale must be 'block', 'block_row' or 'tensor'"),
        (dict(scales=[1.0, 1.0, 1.0, 1.0]), ValueError, "scales are for fp8 values only"),
        (dict(dtype="float8_e3m4"), TypeError, "dtype"),
    ],
)
def test_bad_construction_names_the_keyword(kwargs, error, words):
    x = np.ones((8, 8))
    with pytest.raises(error, match=words):
        bsrmm.BsrMatrix.from_dense(x, 4, **kwargs)


def test_fp8_data_needs_its_scales(fp8_case):
    A = fp8_case[0]
    with pytest.raises(ValueError, match="data is float8_e4m3: pass its scales"):
        bsrmm.BsrMatrix.from_arrays(A.indptr, A.indices, A.data, A.shape)
