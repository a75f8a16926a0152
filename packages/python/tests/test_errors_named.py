"""Every number conversion and array intake of the binding ends, on bad input, in a bsrmm error
whose message names the Python keyword (issue 23), in the binding's words rather than the C
ABI's (issue 26): never a bare numpy, pybind11 or DLPack error that leaves the caller guessing
which argument it was about."""

from __future__ import annotations

import re

import numpy as np
import pytest

import bsrmm
from bsr_cases import random_bsr


@pytest.fixture
def parts():
    rng = np.random.default_rng(3)
    return random_bsr(rng, 4, 4, (2, 2), 0.6, "float32")


@pytest.fixture
def a(parts):
    return bsrmm.BsrMatrix.from_arrays(*parts, (8, 8))


def named(cls, *words):
    """pytest.raises for a bsrmm error whose message holds every word."""
    return pytest.raises(cls, match="(?s)" + "".join(f"(?=.*{re.escape(w)})" for w in words))


# ---- issue 23: the four cases the issue names ----


def test_indices_of_a_string_dtype_name_indices(parts):
    indptr, indices, data = parts
    with named(bsrmm.UnsupportedError, "indices has dtype str", "integers"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices.astype(str), data, (8, 8))
    with named(bsrmm.UnsupportedError, "indptr has dtype str"):
        bsrmm.BsrMatrix.from_arrays(indptr.astype(str), indices, data, (8, 8))


@pytest.mark.parametrize("argument", ["alpha", "beta"])
def test_scalars_beyond_float64_name_the_keyword(a, argument):
    b, out = np.ones((8, 2), np.float32), np.zeros((8, 2), np.float32)
    with named(bsrmm.InvalidArgumentError, f"{argument} = ", "float64 range"):
        bsrmm.matmul(a, b, out=out, **{argument: 10**400})
    with named(bsrmm.InvalidArgumentError, argument):
        bsrmm.matmul(a, b, out=out, **{argument: -(10**400)})


def test_empty_bias_for_zero_rows_is_accepted():
    empty = bsrmm.BsrMatrix.from_arrays([0], [], np.ones((0, 2, 2), np.float32), (0, 8))
    bias = np.ones(0, np.float32)
    assert bias.strides in ((0,), (4,))
    assert bsrmm.matmul(empty, np.ones((8, 3), np.float32), bias=bias).shape == (0, 3)
    # Every empty array is contiguous, whatever strides numpy gave it.
    zero_strided = np.lib.stride_tricks.as_strided(np.ones(1, np.float32), (0,), (0,))
    assert bsrmm.matmul(empty, np.ones(8, np.float32), bias=zero_strided).shape == (0,)


def test_empty_values_in_any_strides_build_an_empty_matrix():
    data = np.lib.stride_tricks.as_strided(np.ones(1, np.float32), (0, 2, 2), (0, 0, 0))
    m = bsrmm.BsrMatrix.from_arrays([0, 0, 0], [], data, (4, 4))
    assert m.nnzb == 0 and m.to_dense().shape == (4, 4)


def test_empty_bfloat16_torch_values_build_an_empty_matrix():
    torch = pytest.importorskip("torch", reason="torch is not installed: torch values untested here")
    for values in (
        torch.empty((0, 2, 2), dtype=torch.bfloat16),
        torch.empty((2, 0, 2), dtype=torch.bfloat16).transpose(0, 1),  # empty and strided
    ):
        m = bsrmm.BsrMatrix.from_arrays(
            torch.zeros(3, dtype=torch.int64), torch.zeros(0, dtype=torch.int64), values, (4, 4)
        )
        assert m.nnzb == 0 and m.dtype.name == "bfloat16"
    # Non-empty, non-contiguous bfloat16 values are copied by torch (numpy has no bfloat16 DLPack).
    values = torch.ones((2, 2, 2), dtype=torch.bfloat16).transpose(1, 2)
    m = bsrmm.BsrMatrix.from_arrays(torch.tensor([0, 1, 2]), torch.tensor([0, 1]), values, (4, 4))
    assert m.nnzb == 2


class HostDLPack:
    """A host array seen only through DLPack (as JAX exposes one)."""

    def __init__(self, array):
        self._array = array

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, *, stream=None, **kwargs):
        return self._array.__dlpack__(stream=stream, **kwargs)


def test_a_dlpack_input_numpy_cannot_copy_names_the_argument(a):
    class Uncopyable(HostDLPack):
        def __dlpack__(self, *, stream=None, **kwargs):
            if kwargs.get("copy") is not False:  # numpy's from_dlpack asks without copy=False
                raise BufferError("Unsupported dtype in DLTensor")
            return super().__dlpack__(stream=stream, **kwargs)

    strided = np.ones((16, 6), np.float32)[::2, ::2]
    with named(bsrmm.UnsupportedError, "B (Uncopyable", "Unsupported dtype in DLTensor"):
        bsrmm.matmul(a, Uncopyable(strided))
    with named(bsrmm.UnsupportedError, "array (Uncopyable", "Unsupported dtype in DLTensor"):
        bsrmm.BsrMatrix.from_dense(Uncopyable(np.ones((4, 4), np.float32)), 2, threshold=0.5)


# ---- the audit: every other number the binding converts ----


@pytest.mark.parametrize("device", ["cuda:99999999999", "cuda:2147483648"])
def test_device_ordinals_beyond_int32_name_device(device):
    with named(bsrmm.InvalidArgumentError, "device must be", repr(device)):
        bsrmm.Context(device)
    with named(bsrmm.InvalidArgumentError, "device must be"):
        bsrmm.BsrMatrix.from_dense(np.eye(4, dtype=np.float32), 2, device=device)


def test_num_threads_beyond_int32_names_num_threads():
    with named(bsrmm.InvalidArgumentError, "num_threads", "2147483647"):
        bsrmm.Context("cpu", num_threads=2**31)


def test_streams_beyond_64_bits_name_stream():
    from bsrmm import _streams

    with named(bsrmm.InvalidArgumentError, "stream must be", "2**64"):
        _streams.stream_handle(2**64)


@pytest.mark.parametrize(
    "value", [2**63, 10**400, -1, 2.0, True],
    ids=["2**63", "beyond-float64", "negative", "float", "bool"],
)
def test_shape_blocksize_extents_name_their_keyword(parts, value):
    with named(bsrmm.InvalidArgumentError, "shape[0]"):
        bsrmm.BsrMatrix.from_arrays(*parts, (value, 8))
    with named(bsrmm.InvalidArgumentError, "blocksize[1]"):
        bsrmm.BsrMatrix.from_dense(np.eye(4, dtype=np.float32), (2, value))


@pytest.mark.parametrize(
    "value", [-1.0, float("nan"), "0.5", None, 10**400],
    ids=["negative", "nan", "str", "none", "beyond-float64"],
)
def test_threshold_is_checked_and_named(value):
    with named(bsrmm.InvalidArgumentError, "threshold"):
        bsrmm.BsrMatrix.from_dense(np.eye(4, dtype=np.float32), 2, threshold=value)


def test_dtype_arguments_name_dtype(a):
    with named(bsrmm.UnsupportedError, "dtype must be a dtype"):
        a.astype("not a dtype")
    with named(bsrmm.UnsupportedError, "dtype has dtype int32", "float32, float16"):
        a.astype(np.int32)


def test_data_that_numpy_cannot_read_names_data(parts):
    indptr, indices, _ = parts
    with named(bsrmm.UnsupportedError, "data has dtype object"):
        bsrmm.BsrMatrix.from_arrays(indptr, indices, np.empty((len(indices), 2, 2), object), (8, 8))
    with named(bsrmm.UnsupportedError, "array (list) is not an array numpy can read"):
        bsrmm.BsrMatrix.from_dense([[1.0, 2.0], [3.0]], 1)
    with named(bsrmm.UnsupportedError, "array is a bsrmm matrix", "A.data"):
        bsrmm.BsrMatrix.from_dense(bsrmm.BsrMatrix.from_dense(np.eye(2, dtype=np.float32), 1), 1)


def test_b_and_bias_that_numpy_cannot_read_name_themselves(a):
    with named(bsrmm.UnsupportedError, "B (list) is not an array numpy can read", "inhomogeneous"):
        bsrmm.matmul(a, [[1.0, 2.0], [3.0]])
    with named(bsrmm.UnsupportedError, "bias has dtype object"):
        bsrmm.matmul(a, np.ones((8, 2), np.float32), bias=object())


# ---- issue 26: the core's messages in the binding's words ----


def test_unsorted_indices_point_at_sort_indices():
    with named(bsrmm.InvalidArgumentError, "sort_indices=True", "indices[1]") as info:
        bsrmm.BsrMatrix.from_arrays([0, 2], [1, 0], np.ones((2, 2, 2), np.float32), (2, 4))
    message = str(info.value)
    assert "BSRMM_" not in message and "desc." not in message and "col_idx" not in message
    assert not message.startswith("bsrmm_")  # no C function name in front
    # and the advice works:
    bsrmm.BsrMatrix.from_arrays([0, 2], [1, 0], np.ones((2, 2, 2), np.float32), (2, 4),
                                sort_indices=True)


def test_unknown_variant_points_at_bsrmm_variants():
    with named(bsrmm.InvalidArgumentError, 'variant = "no_such"', "bsrmm.variants()") as info:
        bsrmm.Context("cpu", variant="no_such")
    assert "bsrmm_variant_name" not in str(info.value)
    cpu_variant = next(v for v in bsrmm.variants() if v.startswith("cpu_"))
    assert bsrmm.Context("cpu", variant=cpu_variant).variant == cpu_variant


def test_construction_messages_name_the_python_arguments(parts):
    indptr, indices, data = parts
    bad = indptr.copy()
    bad[-1] += 1
    with pytest.raises(bsrmm.InvalidArgumentError) as info:
        bsrmm.BsrMatrix.from_arrays(bad, indices, data, (8, 8))
    assert "indptr" in str(info.value) and "desc." not in str(info.value)
    with named(bsrmm.InvalidArgumentError, "array.shape[0]", "blocksize[0]"):
        bsrmm.BsrMatrix.from_dense(np.ones((5, 4), np.float32), 2)


def test_misaligned_out_is_named_out(a):
    raw = np.frombuffer(bytearray(4 * 16 + 1), dtype=np.uint8)[1:].view(np.float32).reshape(8, 2)
    with named(bsrmm.InvalidArgumentError, "out is not aligned"):
        bsrmm.matmul(a, np.ones((8, 2), np.float32), out=raw)


def test_scipy_sparse_b_hint_leads_to_a_working_call(a):
    scipy_sparse = pytest.importorskip("scipy.sparse", reason="scipy is not installed")
    s = scipy_sparse.random(8, 3, density=0.5, format="csr", dtype=np.float32, random_state=0)
    with named(bsrmm.UnsupportedError, "B is a scipy.sparse", "B.toarray()"):
        bsrmm.matmul(a, s)
    with named(bsrmm.UnsupportedError, "B.toarray()"):
        a @ s
    np.testing.assert_allclose(a @ s.toarray(), a.to_dense() @ s.toarray(), rtol=1e-5)
