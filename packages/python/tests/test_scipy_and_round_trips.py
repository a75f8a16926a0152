"""bsrmm against scipy's own BSR product on the same inputs, and lossless round trips through
scipy, dense arrays and the three BSR arrays."""

from __future__ import annotations

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
)

scipy_sparse = pytest.importorskip("scipy.sparse", reason="scipy is not installed")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "blocksize,density,n",
    [((1, 1), 0.2, 5), ((2, 3), 0.5, 1), ((4, 4), 0.0, 8), ((8, 4), 1.0, 17), ((16, 16), 0.3, 33),
     ((3, 5), 0.6, 64)],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_scipy_bsr_product(dtype, blocksize, density, n, seed):
    rng = np.random.default_rng(seed * 100 + n)
    bh, bw = blocksize
    indptr, indices, data = random_bsr(rng, 9, 7, blocksize, density, dtype, 0.2)
    shape = (9 * bh, 7 * bw)
    reference_matrix = scipy_sparse.bsr_array((data, indices, indptr), shape=shape)
    a = bsrmm.BsrMatrix.from_scipy(reference_matrix)
    for transpose in (False, True):
        k = shape[0] if transpose else shape[1]
        b = random_values(rng, (k, n), dtype)
        ours = bsrmm.matmul(a, b, transpose_a=transpose)
        theirs = (reference_matrix.T if transpose else reference_matrix) @ b
        value, scale = reference(dense_from_bsr(indptr, indices, data, shape), b,
                                 transpose_a=transpose)
        assert_matches(ours, value, scale, dtype, inner=k)
        # Both are within the rounding bound of the exact result, so of each other at twice it.
        assert_matches(ours, np.asarray(theirs, dtype=np.float64), scale, dtype, inner=k, slack=2)


def test_from_scipy_accepts_bsr_matrix_and_bsr_array():
    rng = np.random.default_rng(1)
    dense = rng.standard_normal((8, 12)) * (rng.random((8, 12)) < 0.3)
    for build in (scipy_sparse.bsr_matrix, scipy_sparse.bsr_array):
        m = build(dense, blocksize=(2, 4))
        a = bsrmm.BsrMatrix.from_scipy(m)
        assert a.shape == (8, 12) and a.blocksize == (2, 4) and a.nnzb == m.indices.size
        np.testing.assert_array_equal(a.to_dense(), dense)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scipy_round_trip_is_exact(dtype):
    rng = np.random.default_rng(2)
    indptr, indices, data = random_bsr(rng, 6, 5, (3, 4), 0.4, dtype, 0.3)
    original = scipy_sparse.bsr_array((data, indices, indptr), shape=(18, 20))
    back = bsrmm.BsrMatrix.from_scipy(original).to_scipy()
    assert back.format == "bsr" and back.shape == original.shape and back.blocksize == (3, 4)
    np.testing.assert_array_equal(back.indptr, indptr)
    np.testing.assert_array_equal(back.indices, indices)
    np.testing.assert_array_equal(back.data, data)
    assert back.data.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_round_trip_is_exact(dtype):
    rng = np.random.default_rng(3)
    indptr, indices, data = random_bsr(rng, 7, 9, (4, 2), 0.35, dtype, 0.3)
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (28, 18))
    assert a.nnzb == len(indices) and a.nnz == len(indices) * 8
    assert a.dtype == np_dtype(dtype)
    np.testing.assert_array_equal(a.indptr, indptr)
    np.testing.assert_array_equal(a.indices, indices)
    assert a.data.dtype == np_dtype(dtype)
    np.testing.assert_array_equal(a.data.astype(np.float64), data.astype(np.float64))
    np.testing.assert_array_equal(
        a.to_dense().astype(np.float64), dense_from_bsr(indptr, indices, data, (28, 18))
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_dense_round_trip_keeps_exactly_the_nonzero_blocks(dtype, order):
    rng = np.random.default_rng(4)
    block_mask = rng.random((5, 6)) < 0.4
    block_mask[2] = False  # an empty block row
    dense = random_values(rng, (15, 12), dtype)
    dense[~np.kron(block_mask, np.ones((3, 2), dtype=bool))] = 0
    dense[0, 0] = 0  # a zero inside a kept block stays a stored zero
    dense = np.asarray(dense, order=order)
    a = bsrmm.BsrMatrix.from_dense(dense, (3, 2))
    assert a.nnzb == block_mask.sum()
    np.testing.assert_array_equal(a.indptr, np.concatenate([[0], np.cumsum(block_mask.sum(1))]))
    np.testing.assert_array_equal(a.indices, np.nonzero(block_mask)[1])
    np.testing.assert_array_equal(a.to_dense().astype(np.float64), dense.astype(np.float64))


def test_from_dense_keeps_a_block_whose_only_nonzero_is_nan():
    dense = np.zeros((4, 4), np.float32)
    dense[3, 3] = np.nan
    a = bsrmm.BsrMatrix.from_dense(dense, 2)
    assert a.nnzb == 1 and a.indices.tolist() == [1]


def test_from_dense_copies_non_layout_views_and_accepts_lists():
    dense = np.arange(64, dtype=np.float64).reshape(8, 8)
    strided = dense[::2, ::2]  # neither row- nor column-major: copied (construction copies anyway)
    np.testing.assert_array_equal(bsrmm.BsrMatrix.from_dense(strided, 2).to_dense(), strided)
    np.testing.assert_array_equal(
        bsrmm.BsrMatrix.from_dense([[1.0, 0.0], [0.0, 2.0]], 1).to_dense(), [[1, 0], [0, 2]]
    )


def test_sort_indices_sorts_blocks_with_their_values():
    rng = np.random.default_rng(5)
    indptr, indices, data = random_bsr(rng, 4, 8, (2, 2), 0.5, "float64")
    expected = dense_from_bsr(indptr, indices, data, (8, 16))
    order = np.concatenate(
        [rng.permutation(np.arange(indptr[r], indptr[r + 1])) for r in range(4)]
    ).astype(np.int64)
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices[order], data[order], (8, 16),
                                    sort_indices=True)
    np.testing.assert_array_equal(a.indices, indices)
    np.testing.assert_array_equal(a.to_dense(), expected)


def test_index_arrays_of_any_integer_type_and_non_contiguous_host_data_are_accepted():
    rng = np.random.default_rng(6)
    indptr, indices, data = random_bsr(rng, 3, 4, (2, 2), 0.6, "float32")
    spread = np.empty((len(indices), 2, 4), np.float32)
    spread[:, :, ::2] = data
    a = bsrmm.BsrMatrix.from_arrays(indptr.astype(np.int64), indices.astype(np.int16),
                                    spread[:, :, ::2], (6, 8))
    np.testing.assert_array_equal(a.data, data)
    b = bsrmm.BsrMatrix.from_arrays(list(indptr), list(indices), data, [6, 8])
    np.testing.assert_array_equal(b.to_dense(), a.to_dense())


def test_properties_repr_and_to_same_device():
    a = bsrmm.BsrMatrix.from_dense(np.eye(6, 9, dtype=np.float32), (3, 3))
    assert a.shape == (6, 9) and a.blocksize == (3, 3) and a.nnzb == 2 and a.nnz == 18
    assert a.device == "cpu" and a.dtype == np.float32
    assert a.to("cpu") is a
    assert repr(a) == (
        "bsrmm.BsrMatrix(shape=(6, 9), blocksize=(3, 3), nnzb=2, dtype=float32, device='cpu')"
    )
    t = a.T
    assert t.shape == (9, 6) and t.blocksize == (3, 3) and t.T is a and t.nnz == 18
    np.testing.assert_array_equal(t.to_dense(), np.eye(6, 9).T)
    assert repr(t).endswith(".T")


def test_from_scipy_brings_unsorted_and_duplicate_blocks_to_scipys_meaning():
    data = np.arange(12, dtype=np.float64).reshape(3, 2, 2)
    m = scipy_sparse.bsr_array((data, np.array([1, 0, 1]), np.array([0, 3])), shape=(2, 4))
    expected = m.toarray()  # scipy adds the two blocks at column 1
    a = bsrmm.BsrMatrix.from_scipy(m)
    assert a.nnzb == 2 and a.indices.tolist() == [0, 1]
    np.testing.assert_array_equal(a.to_dense(), expected)
    assert m.indices.tolist() == [1, 0, 1]  # the caller's matrix is left as it was
