"""fp8 products' general path (_fp8.multiply, host branch) and fp8 construction on inputs that
once escaped in torch's, numpy's or the core's words: a bfloat16 torch bias, scales that
require grad, scales finite in float64 but not in float32, and an out in another device's
memory. Each is now taken, or refused with a bsrmm error naming the keyword."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bsrmm

ml_dtypes = pytest.importorskip("ml_dtypes", reason="fp8 arrays in numpy need ml_dtypes")
torch = pytest.importorskip("torch", reason="torch is not installed: torch operands untested here")

M, K, N = 8, 16, 3


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(7)
    A = bsrmm.BsrMatrix.from_dense(rng.standard_normal((M, K)), (4, 8), dtype="float8_e4m3", scale="block")
    q, s = bsrmm.quantize_fp8(rng.standard_normal((K, N)), per_column=True)
    return A, q, s


def _torch_fp8(q):
    return torch.from_numpy(q.view(np.uint8)).view(torch.float8_e4m3fn)


def _outs():
    """out=None and out in each form, with what the product lands in."""
    return {
        "none": None,
        "numpy float32": np.full((M, N), np.nan, np.float32),
        "torch float32": torch.full((M, N), float("nan")),
        "torch bfloat16": torch.full((M, N), float("nan"), dtype=torch.bfloat16),
    }


def _float64(array):
    return array.double().numpy() if isinstance(array, torch.Tensor) else np.asarray(array, np.float64)


@pytest.mark.parametrize("out_form", list(_outs()))
@pytest.mark.parametrize("B_form", ["numpy", "torch"])
def test_a_bfloat16_torch_bias_on_the_host_is_converted_to_outs_dtype(case, out_form, B_form):
    A, q, s = case
    B = q if B_form == "numpy" else _torch_fp8(q)
    values = torch.arange(M) / 4.0 - 1.0  # exact in bfloat16: both biases hold the same values
    got = bsrmm.matmul(A, B, b_scales=s, out=_outs()[out_form], bias=values.to(torch.bfloat16))
    want = bsrmm.matmul(A, B, b_scales=s, out=_outs()[out_form], bias=values)
    np.testing.assert_array_equal(_float64(got), _float64(want))
    assert not np.isnan(_float64(got)).any()


@pytest.mark.parametrize("with_out", [False, True])
def test_b_scales_that_require_grad_are_read_as_values(case, with_out):
    A, q, s = case
    for given, plain in ((torch.from_numpy(s.copy()), s), (torch.tensor(float(s[0])), float(s[0]))):
        scales = given.clone().requires_grad_()
        outs = [np.full((M, N), np.nan, np.float32) if with_out else None for _ in range(2)]
        got = bsrmm.matmul(A, q, b_scales=scales, out=outs[0])
        want = bsrmm.matmul(A, q, b_scales=plain, out=outs[1])
        np.testing.assert_array_equal(got, want)
        assert scales.requires_grad and scales.grad is None  # read, never touched


def test_a_scales_that_require_grad_are_read_as_values():
    x = np.random.default_rng(3).standard_normal((M, K))
    scales = torch.tensor(0.01, requires_grad=True)
    A = bsrmm.BsrMatrix.from_dense(x, (4, 8), dtype="float8_e4m3", scale="tensor", scales=scales)
    np.testing.assert_array_equal(A.scales, np.float32([0.01]))


def test_bfloat16_b_scales_are_widened(case):
    A, q, s = case
    scales = torch.from_numpy(s).to(torch.bfloat16)
    got = bsrmm.matmul(A, q, b_scales=scales)
    np.testing.assert_array_equal(got, bsrmm.matmul(A, q, b_scales=scales.float().numpy()))


PAST_FLOAT32 = {
    "a float": 1e300,
    "a numpy float64": np.float64(-1e300),
    "one of the columns'": np.array([1.0, 1e300, 1.0]),
    "a float64 torch tensor": torch.tensor([1.0, 1.0, 1e300], dtype=torch.float64),
    "a 0-d array": np.array(1e39),
}


@pytest.mark.filterwarnings("error::RuntimeWarning")  # numpy's overflow warning is not the answer
@pytest.mark.parametrize("with_out", [False, True])
@pytest.mark.parametrize("form", list(PAST_FLOAT32))
def test_b_scales_past_float32s_range_are_refused_by_name(case, form, with_out):
    A, q, _ = case
    out = np.full((M, N), np.nan, np.float32) if with_out else None
    with pytest.raises(bsrmm.InvalidArgumentError, match=r"^b_scales must be finite in float32 .*; got -?1e\+(300|39)$"):
        bsrmm.matmul(A, q, b_scales=PAST_FLOAT32[form], out=out)
    if with_out:
        assert np.isnan(out).all()


def test_b_scales_of_an_int_past_float64s_range_are_refused_by_name(case):
    A, q, _ = case
    with pytest.raises(bsrmm.InvalidArgumentError, match="^b_scales must be finite in float32"):
        bsrmm.matmul(A, q, b_scales=10**400)


@pytest.mark.parametrize("bad", [["a", "b", "c"], object(), torch.ones(N, dtype=torch.complex64)])
def test_b_scales_that_are_not_real_numbers_are_refused_by_name(case, bad):
    A, q, _ = case
    with pytest.raises(bsrmm.UnsupportedError, match="^b_scales has dtype .*; scales are real numbers"):
        bsrmm.matmul(A, q, b_scales=bad)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("scale, scales", [("tensor", 1e300), ("block_row", [1.0, -1e300]), ("block", np.full(4, 1e40))])
def test_a_scales_past_float32s_range_are_refused_by_name(scale, scales):
    x = np.ones((M, K))
    with pytest.raises(bsrmm.InvalidArgumentError, match=r"^scales must be finite in float32 .*; got -?1e\+(300|40)$"):
        bsrmm.BsrMatrix.from_dense(x, (4, 8), dtype="float8_e4m3", scale=scale, scales=scales)
    A = bsrmm.BsrMatrix.from_dense(x, (4, 8), dtype="float8_e4m3", scale="tensor")
    with pytest.raises(bsrmm.InvalidArgumentError, match="^scales must be finite in float32"):
        bsrmm.BsrMatrix.from_arrays(A.indptr, A.indices, A.data, A.shape, scales=1e300, scale="tensor")


class _CudaArrayOverHostMemory:
    """Says it is CUDA memory (a bare __cuda_array_interface__, no ordinal) but points at a host
    buffer: should a check regress, the product lands there instead of crashing the process."""

    def __init__(self, shape, dtype=np.float32):
        self.buffer = np.full(shape, np.nan, dtype)
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": self.buffer.dtype.str, "data": (self.buffer.ctypes.data, False),
            "version": 3, "strides": None, "stream": None,
        }


@pytest.mark.parametrize("B_form", ["numpy", "torch"])
def test_an_out_in_gpu_memory_is_refused_where_it_is(case, B_form):
    A, q, s = case
    B = q if B_form == "numpy" else _torch_fp8(q)
    for b_scales in (s, float(s[0])):
        out = _CudaArrayOverHostMemory((M, N))
        with pytest.raises(bsrmm.InvalidArgumentError, match=r"^out is on cuda but A is on cpu"):
            bsrmm.matmul(A, B, b_scales=b_scales, out=out)
        assert np.isnan(out.buffer).all()  # never written


def test_a_bias_in_gpu_memory_is_refused_where_it_is(case):
    A, q, s = case
    out = np.full((M, N), np.nan, np.float32)
    with pytest.raises(bsrmm.InvalidArgumentError, match=r"^bias is on cuda but A is on cpu"):
        bsrmm.matmul(A, q, b_scales=s, out=out, bias=_CudaArrayOverHostMemory((M,)))
    assert np.isnan(out).all()


def test_no_warning_on_the_way(case):
    """The refusals above come without numpy's RuntimeWarnings and the accepted forms too."""
    A, q, s = case
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bsrmm.matmul(A, q, b_scales=torch.from_numpy(s).requires_grad_(), bias=torch.ones(M, dtype=torch.bfloat16))
