"""Bad input from Python: each case gets an exception of the documented class whose message names
the argument (and the rule), never a crash or a silent copy."""

from __future__ import annotations

import numpy as np
import pytest

import bsrmm
from bsr_cases import random_bsr, random_values


@pytest.fixture
def parts():
    rng = np.random.default_rng(0)
    indptr, indices, data = random_bsr(rng, 4, 4, (2, 2), 0.6, "float32")
    assert len(indices) > 3
    return indptr, indices, data


@pytest.fixture
def a(parts):
    return bsrmm.BsrMatrix.from_arrays(*parts, (8, 8))


def raises(cls, *words):
    """pytest.raises that also checks the message names what it should and the code is set."""

    class _Check:
        def __enter__(self):
            self._ctx = pytest.raises(cls)
            self._info = self._ctx.__enter__()
            return self._info

        def __exit__(self, *exc):
            result = self._ctx.__exit__(*exc)
            if not result:  # another exception: let it propagate as it is
                return result
            message = str(self._info.value)
            for word in words:
                assert word in message, f"{word!r} not in {message!r}"
            assert isinstance(self._info.value, bsrmm.Error)
            assert self._info.value.code.startswith("BSRMM_STATUS_")
            return result

    return _Check()


def test_error_classes_map_to_python_idioms():
    assert issubclass(bsrmm.InvalidArgumentError, ValueError)
    assert issubclass(bsrmm.UnsupportedError, TypeError)
    assert issubclass(bsrmm.OutOfMemoryError, MemoryError)
    assert issubclass(bsrmm.NoDeviceError, RuntimeError)
    assert issubclass(bsrmm.CudaError, RuntimeError)
    assert issubclass(bsrmm.InternalError, RuntimeError)
    assert issubclass(bsrmm.IoError, RuntimeError)
    for cls in (bsrmm.InvalidArgumentError, bsrmm.UnsupportedError, bsrmm.NoDeviceError):
        assert issubclass(cls, bsrmm.Error)
    assert bsrmm.InvalidArgumentError("x").code == "BSRMM_STATUS_INVALID_ARGUMENT"
    assert bsrmm.UnsupportedError("x").code == "BSRMM_STATUS_UNSUPPORTED"
    assert bsrmm.NoDeviceError("x").code == "BSRMM_STATUS_NO_DEVICE"


# ---- construction: rules the core enforces, reported with its message ----


def test_indptr_not_starting_at_zero(parts):
    indptr, indices, data = parts
    bad = indptr.copy()
    bad[0] = 1
    with raises(bsrmm.InvalidArgumentError, "indptr[0]") as info:
        bsrmm.BsrMatrix.from_arrays(bad, indices, data, (8, 8))
    assert info.value.code == "BSRMM_STATUS_INVALID_ARGUMENT"


def test_indptr_not_monotone(parts):
    indptr, indices, data = parts
    bad = indptr.copy()
    bad[2], bad[1] = bad[1], bad[2] + 1
    with raises(bsrmm.InvalidArgumentError, "monotone"):
        bsrmm.BsrMatrix.from_arrays(bad, indices, data, (8, 8))


def test_indptr_not_ending_at_nnzb(parts):
    indptr, indices, data = parts
    with raises(bsrmm.InvalidArgumentError, "nnzb"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices[:-1], data[:-1], (8, 8))


def test_column_index_out_of_range(parts):
    indptr, indices, data = parts
    bad = indices.copy()
    bad[-1] = 4
    with raises(bsrmm.InvalidArgumentError, "indices["):
        bsrmm.BsrMatrix.from_arrays(indptr, bad, data, (8, 8))
    bad[-1] = -1
    with raises(bsrmm.InvalidArgumentError, "indices["):
        bsrmm.BsrMatrix.from_arrays(indptr, bad, data, (8, 8))


def test_unsorted_indices_are_refused_unless_sorting_was_asked_for():
    indptr = np.array([0, 2], np.int32)
    indices = np.array([1, 0], np.int32)
    data = np.ones((2, 2, 2), np.float32)
    with raises(bsrmm.InvalidArgumentError, "sort"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (2, 4))
    assert bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (2, 4), sort_indices=True).nnzb == 2


@pytest.mark.parametrize("sort_indices", [False, True])
def test_duplicate_indices_are_refused(sort_indices):
    indptr = np.array([0, 2], np.int32)
    indices = np.array([1, 1], np.int32)
    with raises(bsrmm.InvalidArgumentError, "duplicate"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices, np.ones((2, 2, 2), np.float32), (2, 4),
                                    sort_indices=sort_indices)


# ---- construction: lengths and types checked in Python (they bound what the core reads) ----


def test_indptr_of_wrong_length(parts):
    indptr, indices, data = parts
    with raises(bsrmm.InvalidArgumentError, "indptr", "5 entries"):
        bsrmm.BsrMatrix.from_arrays(indptr[:-1], indices, data, (8, 8))


def test_indices_and_data_disagree_on_nnzb(parts):
    indptr, indices, data = parts
    with raises(bsrmm.InvalidArgumentError, "indices", "nnzb"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices[:-1], data, (8, 8))


def test_shape_not_a_whole_number_of_blocks(parts):
    indptr, indices, data = parts
    with raises(bsrmm.InvalidArgumentError, "(9, 8)", "2x2"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (9, 8))


@pytest.mark.parametrize("shape", [(8,), (8, -8), (8.0, 8), "8x8", None])
def test_malformed_shape(parts, shape):
    with raises(bsrmm.InvalidArgumentError, "shape"):
        bsrmm.BsrMatrix.from_arrays(*parts, shape)


def test_data_of_wrong_rank(parts):
    indptr, indices, data = parts
    with raises(bsrmm.InvalidArgumentError, "data", "(nnzb, block_height, block_width)"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices, data.reshape(len(indices), 4), (8, 8))


def test_zero_sized_blocks(parts):
    indptr, indices, _ = parts
    with raises(bsrmm.InvalidArgumentError, "block_height"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices, np.ones((len(indices), 0, 2), np.float32),
                                    (8, 8))


def test_blocks_larger_than_the_core_allows():
    with raises(bsrmm.InvalidArgumentError, "blocksize[0]"):
        bsrmm.BsrMatrix.from_arrays([0, 0], [], np.ones((0, 1024, 1), np.float32), (1024, 1))


@pytest.mark.parametrize("dtype", [np.int32, np.complex64, np.bool_, np.uint8])
def test_data_of_unsupported_dtype(parts, dtype):
    indptr, indices, data = parts
    with raises(bsrmm.UnsupportedError, "data", "float32, float16, bfloat16 or float64"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices, data.astype(dtype), (8, 8))


def test_non_integer_indices(parts):
    indptr, indices, data = parts
    with raises(bsrmm.UnsupportedError, "indices", "integers"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices.astype(np.float64), data, (8, 8))


def test_non_native_byte_order(parts):
    indptr, indices, data = parts
    with raises(bsrmm.UnsupportedError, "byte order"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices, data.astype(">f4"), (8, 8))


def test_bad_blocksize_and_dense_rank():
    with raises(bsrmm.InvalidArgumentError, "blocksize"):
        bsrmm.BsrMatrix.from_dense(np.ones((4, 4)), (2, 0))
    with raises(bsrmm.InvalidArgumentError, "blocksize"):
        bsrmm.BsrMatrix.from_dense(np.ones((4, 4)), (1, 2, 3))
    with raises(bsrmm.InvalidArgumentError, "array", "2-D"):
        bsrmm.BsrMatrix.from_dense(np.ones((4, 4, 4)), 2)
    with raises(bsrmm.InvalidArgumentError):
        bsrmm.BsrMatrix.from_dense(np.ones((4, 5)), 2)


def test_from_scipy_and_from_torch_reject_other_objects():
    scipy_sparse = pytest.importorskip("scipy.sparse", reason="scipy is not installed")
    with raises(bsrmm.InvalidArgumentError, "blocksize=(height, width)", "csr"):
        bsrmm.BsrMatrix.from_scipy(scipy_sparse.csr_array(np.eye(4)))
    with raises(bsrmm.UnsupportedError, "scipy.sparse", "from_dense"):
        bsrmm.BsrMatrix.from_scipy(np.eye(4))
    with raises(bsrmm.UnsupportedError, "torch"):
        bsrmm.BsrMatrix.from_torch(np.eye(4))


def test_bsr_matrix_cannot_be_built_directly():
    with pytest.raises(TypeError, match="from_arrays"):
        bsrmm.BsrMatrix()


# ---- matmul ----


def test_a_must_be_a_bsr_matrix():
    with raises(bsrmm.UnsupportedError, "A must be a bsrmm.BsrMatrix", "ndarray"):
        bsrmm.matmul(np.eye(4), np.eye(4))


def test_b_with_wrong_number_of_rows(a):
    with raises(bsrmm.InvalidArgumentError, "B has 7 rows", "8 columns"):
        bsrmm.matmul(a, np.ones((7, 3), np.float32))
    with raises(bsrmm.InvalidArgumentError, "B has 9 rows", "transposed"):
        bsrmm.matmul(a, np.ones((9, 3), np.float32), transpose_a=True)


def test_b_of_wrong_rank_or_type(a):
    with raises(bsrmm.InvalidArgumentError, "B must be 1-D or 2-D"):
        bsrmm.matmul(a, np.ones((8, 2, 2), np.float32))
    with raises(bsrmm.InvalidArgumentError, "B must be 1-D or 2-D"):
        bsrmm.matmul(a, np.array(1.0, np.float32))
    with raises(bsrmm.UnsupportedError, "B has dtype object"):
        bsrmm.matmul(a, object())
    with raises(bsrmm.UnsupportedError, "B has dtype complex64", "float32"):
        bsrmm.matmul(a, np.ones((8, 3), np.complex64))
    with raises(bsrmm.UnsupportedError, "B has dtype str"):
        bsrmm.matmul(a, [["x"] * 3] * 8)


def test_out_checks(a):
    b = np.ones((8, 3), np.float32)
    with raises(bsrmm.InvalidArgumentError, "out has shape (8, 4)", "(8, 3)"):
        bsrmm.matmul(a, b, out=np.empty((8, 4), np.float32))
    with raises(bsrmm.InvalidArgumentError, "out must be row-major or column-major", "in place"):
        bsrmm.matmul(a, b, out=np.empty((16, 6), np.float32)[::2, ::2])
    frozen = np.empty((8, 3), np.float32)
    frozen.flags.writeable = False
    with raises(bsrmm.InvalidArgumentError, "out", "read-only"):
        bsrmm.matmul(a, b, out=frozen)
    shared = np.ones((8, 6), np.float32)
    with raises(bsrmm.InvalidArgumentError, "overlaps B"):
        bsrmm.matmul(a, shared[:, :3], out=shared[:, 3:])
    with raises(bsrmm.InvalidArgumentError, "out="):
        bsrmm.matmul(a, b, beta=1.0)


def test_bias_checks(a):
    b = np.ones((8, 3), np.float32)
    with raises(bsrmm.InvalidArgumentError, "bias", "one value per row of C (8)"):
        bsrmm.matmul(a, b, bias=np.ones(3, np.float32))
    with raises(bsrmm.UnsupportedError, "bias has dtype complex128"):
        bsrmm.matmul(a, b, bias=np.ones(8, np.complex128))


def test_scalar_and_option_checks(a):
    b = np.ones((8, 3), np.float32)
    with raises(bsrmm.InvalidArgumentError, "alpha"):
        bsrmm.matmul(a, b, alpha="2")
    with raises(bsrmm.InvalidArgumentError, "beta"):
        bsrmm.matmul(a, b, beta=None, out=np.empty((8, 3), np.float32))
    with raises(bsrmm.InvalidArgumentError, "activation", "'tanh'"):
        bsrmm.matmul(a, b, activation="tanh")
    with raises(bsrmm.InvalidArgumentError, "activation"):
        bsrmm.matmul(a, b, activation=["relu"])
    with raises(bsrmm.UnsupportedError, "context"):
        bsrmm.matmul(a, b, context="cpu")


def test_cuda_array_on_a_cpu_matrix_is_a_device_mismatch(a):
    class FakeCudaArray:  # never dereferenced: the device check comes first
        __cuda_array_interface__ = {
            "shape": (8, 3), "typestr": "<f4", "data": (0xDEAD0000, False), "version": 3,
            "strides": None, "stream": None,
        }

    with raises(bsrmm.InvalidArgumentError, "B is on cuda but A is on cpu"):
        bsrmm.matmul(a, FakeCudaArray())
    with raises(bsrmm.InvalidArgumentError, "out is on cuda but A is on cpu"):
        bsrmm.matmul(a, np.ones((8, 3), np.float32), out=FakeCudaArray())


# ---- contexts and devices ----


@pytest.mark.parametrize("device", ["gpu", "cuda:", "cuda:x", "cuda:-1", 0, None])
def test_bad_device_names(device):
    with raises(bsrmm.InvalidArgumentError, "device"):
        bsrmm.Context(device)


def test_bad_context_options():
    with raises(bsrmm.InvalidArgumentError, "f32_mode", "'exact'"):
        bsrmm.Context("cpu", f32_mode="fast")
    with raises(bsrmm.InvalidArgumentError, "tuning", "'auto'"):
        bsrmm.Context("cpu", tuning=True)
    with raises(bsrmm.InvalidArgumentError, "num_threads"):
        bsrmm.Context("cpu", num_threads=-1)
    with raises(bsrmm.InvalidArgumentError, "stream"):
        bsrmm.Context("cpu", stream=0)


def test_unknown_variant_is_refused():
    with pytest.raises(bsrmm.Error) as info:
        bsrmm.Context("cpu", variant="no_such_variant")
    assert "no_such_variant" in str(info.value)


def test_cuda_device_without_cuda_is_a_clear_error():
    if bsrmm.cuda_available():
        pytest.skip("a CUDA device is available: this checks the error without one")
    with raises(bsrmm.NoDeviceError):
        bsrmm.Context("cuda:0")
    with raises(bsrmm.NoDeviceError):
        bsrmm.BsrMatrix.from_dense(np.eye(4, dtype=np.float32), 2, device="cuda")
