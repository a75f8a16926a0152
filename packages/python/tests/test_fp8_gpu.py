"""fp8 products on a CUDA device from Python: torch float8 tensors read in place as B (either
layout), per-tensor scales from the host and per-column scales in device memory, C in bfloat16
/ float16 / float32 poisoned with NaN first, bias and activation, against float64 of the
dequantised operands. On Hopper, blocks 64 / 128 with a column-major B (``x.t()``) run on the
fp8 tensor cores (the test says which variant ran), whose partial sums keep about 14 bits: the
bound is 2^-13 of each element's sum of |a||b| plus half an ulp of out's dtype. Every test skips,
with the reason, where no CUDA device is usable or torch is missing; the lead runs them on the
GPU machine."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import bsrmm

_reason = bsrmm.cuda_unavailable_reason()
pytestmark = pytest.mark.skipif(_reason is not None, reason=f"no usable CUDA device: {_reason}")
pytest.importorskip("ml_dtypes", reason="fp8 matrices are quantised in numpy, which needs ml_dtypes")

OUT_ULP = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    return torch


def _fp8_matrix(rng, rows, cols, block, density, scale):
    x = rng.standard_normal((rows, cols))
    keep = rng.random((rows // block[0], cols // block[1])) < density
    keep[0, 0] = True
    return bsrmm.BsrMatrix.from_dense(x * np.kron(keep, np.ones(block)), block, dtype="float8_e4m3", scale=scale)


def _dequantised_a(A) -> np.ndarray:
    return A.astype("float32").to_dense().astype(np.float64)


def _is_hopper(torch) -> bool:
    return torch.cuda.get_device_capability(0) == (9, 0)


@pytest.mark.parametrize("block", [(128, 128), (64, 64), (48, 32)])
@pytest.mark.parametrize("b_layout", ["col", "row"])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("out_dtype", list(OUT_ULP))
def test_gpu_fp8_product_matches_float64(torch, block, b_layout, per_column, out_dtype):
    rng = np.random.default_rng(zlib.crc32(repr((block, b_layout, per_column, out_dtype)).encode()))
    rows, cols, n = 4 * block[0], 3 * block[1], 72
    host = _fp8_matrix(rng, rows, cols, block, 0.5, "block")
    A = host.to("cuda")
    assert A.device == "cuda:0" and A.scale == "block"
    np.testing.assert_array_equal(A.scales, host.scales)
    x = torch.randn(n, cols, dtype=torch.float64) if b_layout == "col" else torch.randn(cols, n, dtype=torch.float64)
    if per_column:
        column_amax = x.abs().amax(dim=1 if b_layout == "col" else 0)
        scales = (column_amax / 448.0).to(torch.float32)
        q = x / (scales.to(torch.float64)[:, None] if b_layout == "col" else scales.to(torch.float64)[None, :])
        b_scales = scales.cuda()
        scale_per_column = scales.to(torch.float64).numpy()
    else:
        scale = float(x.abs().max()) / 448.0
        q = x / scale
        b_scales = scale
        scale_per_column = np.full(n, np.float32(scale), dtype=np.float64)
    b8 = q.to(torch.float8_e4m3fn).cuda()
    B = b8.t() if b_layout == "col" else b8  # K x N, column-major when x is N x K row-major
    b_dequantised = B.cpu().to(torch.float64).numpy() * scale_per_column[None, :]
    dtype = getattr(torch, out_dtype)
    out = torch.full((rows, n), float("nan"), dtype=dtype, device="cuda")
    bias = torch.randn(rows, dtype=dtype, device="cuda")
    ctx = bsrmm.Context("cuda")
    got = bsrmm.matmul(A, B, b_scales=b_scales, out=out, bias=bias, activation="relu", context=ctx)
    assert got is out
    torch.cuda.synchronize()
    a = _dequantised_a(host)
    pre = a @ b_dequantised + bias.cpu().to(torch.float64).numpy()[:, None]
    ref = np.maximum(pre, 0.0)
    magnitude = np.abs(a) @ np.abs(b_dequantised) + np.abs(bias.cpu().to(torch.float64).numpy())[:, None]
    # The fp8 tensor cores keep ~14 bits of a block's sum (2^-13 with margin); the widened
    # variants (blocks the fp8 row tiles do not take) round each operand times its folded scale
    # to the output's dtype once (up to 2u of each product), and the bf16 / f32 kernel that
    # multiplies them is allowed 2u more for its own sums (dense_reference.hpp says the same).
    summing = 2.0**-13
    if ctx.last_variant.startswith("fp8_widened_"):
        summing = 4 * OUT_ULP[out_dtype] + OUT_ULP[out_dtype] ** 2 + 1e-5
    bound = summing * magnitude + OUT_ULP[out_dtype] * np.abs(ref) * 1.01 + 1e-30
    values = out.cpu().to(torch.float64).numpy()
    assert np.all(np.abs(values - ref) <= bound), (ctx.last_variant, np.max(np.abs(values - ref) / bound))
    if _is_hopper(torch) and block[0] in (64, 128) and b_layout == "col" and out_dtype != "float32":
        assert ctx.last_variant.startswith("sm90_tma_wgmma_e4m3xe4m3_"), ctx.last_variant
    elif block == (48, 32) and out_dtype != "float16":  # widened onto the tensor-core kernels
        assert ctx.last_variant.startswith("fp8_widened_e4m3xe4m3_"), ctx.last_variant


def test_gpu_fp8_default_out_is_float32_and_vectors_work(torch):
    rng = np.random.default_rng(5)
    host = _fp8_matrix(rng, 128, 128, (64, 64), 0.75, "tensor")
    A = host.to("cuda")
    v = torch.randn(128, dtype=torch.float64)
    v8 = (v / 2.0).to(torch.float8_e4m3fn).cuda()
    got = bsrmm.matmul(A, v8, b_scales=2.0)
    assert got.dtype == torch.float32 and got.shape == (128,) and got.device.type == "cuda"
    ref = _dequantised_a(host) @ (v8.cpu().to(torch.float64).numpy() * 2.0)
    np.testing.assert_allclose(got.cpu().numpy(), ref, rtol=1e-2, atol=1e-3)


def test_gpu_fp8_one_scale_may_be_a_device_tensor(torch):
    """B's one scale as the 0-d tensor torch computes it on the device (read to the host)."""
    rng = np.random.default_rng(7)
    host = _fp8_matrix(rng, 128, 128, (128, 128), 1.0, "block")
    A = host.to("cuda")
    x = torch.randn(24, 128, device="cuda")
    scale = x.abs().max() / 448.0
    x8 = (x / scale).to(torch.float8_e4m3fn)
    got = bsrmm.matmul(A, x8.t(), b_scales=scale)
    ref = _dequantised_a(host) @ (x8.t().cpu().to(torch.float64).numpy() * float(scale))
    np.testing.assert_allclose(got.cpu().numpy(), ref, rtol=2e-2, atol=1e-2 * np.abs(ref).max())
    vector = bsrmm.matmul(A, x8[0], b_scales=scale)  # one column: the 0-d scale is still B's one
    np.testing.assert_allclose(vector.cpu().numpy(), ref[:, 0], rtol=2e-2, atol=1e-2 * np.abs(ref).max())


def test_gpu_fp8_refusals_name_the_keyword(torch):
    rng = np.random.default_rng(9)
    A = _fp8_matrix(rng, 128, 128, (64, 64), 0.5, "block").to("cuda")
    b8 = torch.randn(16, 128).to(torch.float8_e4m3fn).cuda().t()
    with pytest.raises(TypeError, match="b_scales holds one scale per column in host memory"):
        bsrmm.matmul(A, b8, b_scales=np.ones(16, np.float32))
    with pytest.raises(ValueError, match="b_scales on cuda:0 must be 1-D contiguous float32"):
        bsrmm.matmul(A, b8, b_scales=torch.ones(15, device="cuda"))
    with pytest.raises(TypeError, match="B has dtype float32 but A is float8_e4m3"):
        bsrmm.matmul(A, torch.ones(128, 16, device="cuda"), b_scales=1.0)
    with pytest.raises(ValueError, match="B is on cpu but A is on cuda:0"):
        bsrmm.matmul(A, b8.cpu(), b_scales=1.0)
    with pytest.raises(TypeError, match="out has dtype float64"):
        bsrmm.matmul(A, b8, b_scales=1.0, out=torch.empty(128, 16, dtype=torch.float64, device="cuda"))
    with pytest.raises(ValueError, match="b_scales is required"):
        bsrmm.matmul(A, b8)
