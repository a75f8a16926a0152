"""Array protocols on the host: any __dlpack__ producer (versioned or legacy), torch CPU tensors
and torch.sparse_bsr (skipped with the reason when torch is absent). The GPU side of the same
protocols is in test_gpu.py."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import bsrmm
from bsr_cases import assert_matches, dense_from_bsr, random_bsr, random_values, reference


class DLPackOnly:
    """Exposes nothing but DLPack (as JAX or TensorFlow arrays do); wraps a numpy array."""

    def __init__(self, array, legacy=False):
        self._array = array
        self._legacy = legacy

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    def __dlpack__(self, *, stream=None, **kwargs):
        if self._legacy and kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument")
        return self._array.__dlpack__(stream=stream, **kwargs)


@pytest.fixture
def case():
    rng = np.random.default_rng(0)
    indptr, indices, data = random_bsr(rng, 5, 4, (4, 2), 0.5, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (20, 8))
    return rng, a, dense_from_bsr(indptr, indices, data, (20, 8))


@pytest.mark.parametrize("legacy", [False, True], ids=["dlpack1", "legacy"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_dlpack_producer_as_b(case, legacy, order):
    rng, a, dense = case
    b = np.asarray(random_values(rng, (8, 6), "float32"), order=order)
    c = bsrmm.matmul(a, DLPackOnly(b, legacy))
    assert type(c) is np.ndarray  # an unknown CPU type gets a numpy result
    value, scale = reference(dense, b)
    assert_matches(c, value, scale, "float32", inner=8)


def test_dlpack_1_producer_as_out_is_written_in_place(case):
    rng, a, dense = case
    b = random_values(rng, (8, 6), "float32")
    c = np.full((20, 6), np.nan, np.float32)
    wrapped = DLPackOnly(c)
    assert bsrmm.matmul(a, b, out=wrapped) is wrapped
    value, scale = reference(dense, b)
    assert_matches(c, value, scale, "float32", inner=8)


def test_legacy_dlpack_out_cannot_prove_it_is_writable(case):
    _, a, _ = case
    with pytest.raises(bsrmm.InvalidArgumentError, match="out .* read-only or cannot say"):
        bsrmm.matmul(a, np.ones((8, 6), np.float32),
                     out=DLPackOnly(np.empty((20, 6), np.float32), legacy=True))


@pytest.mark.parametrize("legacy", [False, True], ids=["dlpack1", "legacy"])
def test_dlpack_exports_are_handed_back_after_each_call(case, legacy):
    rng, a, _ = case
    b = random_values(rng, (8, 6), "float32")
    wrapped = DLPackOnly(b, legacy)
    before = sys.getrefcount(b)  # each live export holds a reference to b
    for _ in range(5):
        bsrmm.matmul(a, wrapped)
    assert sys.getrefcount(b) == before


def test_dlpack_inputs_build_matrices(case):
    rng, _, _ = case
    indptr, indices, data = random_bsr(rng, 3, 3, (2, 2), 0.7, "float64")
    a = bsrmm.BsrMatrix.from_arrays(DLPackOnly(indptr), DLPackOnly(indices), DLPackOnly(data),
                                    (6, 6))
    np.testing.assert_array_equal(a.to_dense(), dense_from_bsr(indptr, indices, data, (6, 6)))
    # Other index types and non-contiguous data are copied on the host, DLPack-only or not.
    spread = np.zeros((len(indices), 2, 4))
    spread[:, :, ::2] = data
    b = bsrmm.BsrMatrix.from_arrays(DLPackOnly(indptr.astype(np.int16)),
                                    DLPackOnly(indices.astype(np.uint8)),
                                    DLPackOnly(spread[:, :, ::2]), (6, 6))
    np.testing.assert_array_equal(b.to_dense(), a.to_dense())


# ---- torch on the CPU ----


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="torch is not installed: torch interop untested here")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_torch_cpu_tensors_in_and_out(torch, dtype):
    rng = np.random.default_rng(1)
    torch_dtype = getattr(torch, dtype)
    dense = torch.from_numpy(rng.standard_normal((12, 16))).to(torch_dtype)
    dense[dense.abs() < 0.8] = 0
    a = bsrmm.BsrMatrix.from_torch(dense.to_sparse_bsr((3, 4)))
    b = torch.from_numpy(rng.standard_normal((16, 5))).to(torch_dtype)
    for operand in (b, b.T.contiguous().T):  # row- and column-major
        c = a @ operand
        assert isinstance(c, torch.Tensor) and c.dtype == torch_dtype and c.device.type == "cpu"
        value, scale = reference(dense.double().numpy(), operand.double().numpy())
        assert_matches(c.double().numpy(), value, scale, dtype, inner=16)
    out = torch.full((12, 5), float("nan"), dtype=torch_dtype)
    bias = torch.from_numpy(rng.standard_normal(12)).to(torch_dtype)
    assert bsrmm.matmul(a, b, out=out, bias=bias, activation="silu") is out
    value, scale = reference(dense.double().numpy(), b.double().numpy(),
                             bias=bias.double().numpy(), activation="silu")
    assert_matches(out.double().numpy(), value, scale, dtype, inner=16)


def test_torch_sparse_bsr_round_trip(torch):
    rng = np.random.default_rng(2)
    dense = torch.from_numpy(rng.standard_normal((8, 12)).astype(np.float32))
    dense[:4] = 0  # an empty block row
    t = dense.to_sparse_bsr((4, 3))
    a = bsrmm.BsrMatrix.from_torch(t)
    assert a.shape == (8, 12) and a.blocksize == (4, 3) and a.nnzb == t.values().shape[0]
    np.testing.assert_array_equal(a.to_dense(), dense.numpy())
    np.testing.assert_array_equal(a.indptr, t.crow_indices().numpy())


def test_torch_errors(torch):
    a = bsrmm.BsrMatrix.from_dense(np.eye(4, dtype=np.float32), 2)
    with pytest.raises(bsrmm.UnsupportedError, match="sparse_bsr"):
        bsrmm.BsrMatrix.from_torch(torch.eye(4))
    with pytest.raises(bsrmm.UnsupportedError, match="layout"):
        bsrmm.matmul(a, torch.eye(4).to_sparse_csr())
    with pytest.raises(bsrmm.InvalidArgumentError, match="out must be row-major or column-major"):
        bsrmm.matmul(a, torch.ones(4, 4), out=torch.empty(8, 8)[::2, ::2])
    # A bfloat16 B for a float32 A is converted once, by torch (numpy has no bfloat16 DLPack).
    b = torch.arange(32, dtype=torch.bfloat16).reshape(8, 4)[::2]
    np.testing.assert_array_equal(bsrmm.matmul(a, b).numpy(), b.float().numpy())
