"""What a numpy / scipy.sparse user expects of a sparse matrix (issue 26): with_values, pickle and
deepcopy, from_scipy of any format, block pruning, scipy's names, a LinearOperator, a refusal to
become a 0-d object array, inputs converted and copied where numpy would accept them, and `out`
still written in place or refused."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import bsrmm
from bsr_cases import DTYPES, assert_matches, dense_from_bsr, np_dtype, random_bsr, reference

scipy_sparse = pytest.importorskip("scipy.sparse", reason="scipy is not installed")
sla = pytest.importorskip("scipy.sparse.linalg", reason="scipy is not installed")


@pytest.fixture
def case():
    rng = np.random.default_rng(26)
    indptr, indices, data = random_bsr(rng, 6, 5, (4, 2), 0.4, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (24, 10))
    return rng, a, dense_from_bsr(indptr, indices, data, (24, 10))


# ---- with_values ----


def test_with_values_keeps_the_pattern_and_takes_new_values(case):
    rng, a, dense = case
    values = rng.standard_normal(a.data.shape).astype(np.float32)
    b = a.with_values(values)
    assert (b.shape, b.blocksize, b.nnzb, b.dtype, b.device) == (
        a.shape, a.blocksize, a.nnzb, a.dtype, a.device)
    np.testing.assert_array_equal(b.indptr, a.indptr)
    np.testing.assert_array_equal(b.indices, a.indices)
    np.testing.assert_array_equal(b.data, values)
    np.testing.assert_array_equal(a.to_dense(), dense)  # the original is untouched
    x = rng.standard_normal((10, 3)).astype(np.float32)
    expected = dense_from_bsr(a.indptr, a.indices, values, a.shape)
    value, scale = reference(expected, x)
    assert_matches(b @ x, value, scale, "float32", inner=10)


def test_with_values_converts_and_copies_host_values(case):
    _, a, _ = case
    values = np.arange(a.nnz, dtype=np.float64).reshape(a.data.shape)
    np.testing.assert_array_equal(a.with_values(values).data, values.astype(np.float32))
    strided = np.asfortranarray(values.astype(np.float32))
    np.testing.assert_array_equal(a.with_values(strided).data, strided)
    np.testing.assert_array_equal(a.with_values(values.tolist()).data, values)


def test_with_values_checks_the_shape(case):
    _, a, _ = case
    with pytest.raises(bsrmm.InvalidArgumentError, match=r"data must have shape \("):
        a.with_values(np.ones(a.nnz, np.float32))
    with pytest.raises(bsrmm.UnsupportedError, match="data has dtype complex64"):
        a.with_values(np.ones(a.data.shape, np.complex64))


def test_with_values_borrows_host_values_in_place(case):
    _, a, _ = case
    data = np.array(a.data, dtype=np.float32, copy=True)
    b = np.ones((a.shape[1], 3), np.float32)
    borrowed = a.with_values(2 * data, borrow=True)
    np.testing.assert_allclose(bsrmm.matmul(borrowed, b), 2 * bsrmm.matmul(a, b), rtol=1e-6)
    assert borrowed._borrowed is not None  # the array the core reads stays alive with the matrix
    with pytest.raises(bsrmm.InvalidArgumentError, match="C-contiguous and aligned"):
        a.with_values(np.asfortranarray(data), borrow=True)


# ---- pickle, copy ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_pickle_round_trip_is_exact(dtype):
    rng = np.random.default_rng(1)
    indptr, indices, data = random_bsr(rng, 4, 3, (2, 3), 0.5, dtype)
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (8, 9))
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        b = pickle.loads(pickle.dumps(a, protocol=protocol))
        assert repr(b) == repr(a)
        np.testing.assert_array_equal(b.data, a.data)
        np.testing.assert_array_equal(b.indices, a.indices)
        t = pickle.loads(pickle.dumps(a.T, protocol=protocol))
        assert isinstance(t, bsrmm.TransposedBsrMatrix)
        np.testing.assert_array_equal(t.to_dense(), a.to_dense().T)


def test_copies_of_an_immutable_matrix_are_the_matrix(case):
    _, a, _ = case
    assert copy.copy(a) is a and copy.deepcopy(a) is a
    holder = copy.deepcopy({"w": a, "t": a.T})
    assert holder["w"] is a and holder["t"].T is a


# ---- from_scipy, from_dense(threshold) ----


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dok", "dia"])
@pytest.mark.parametrize("kind", ["array", "matrix"])
def test_from_scipy_converts_other_formats_with_blocksize(fmt, kind):
    rng = np.random.default_rng(2)
    dense = (rng.standard_normal((12, 8)) * (rng.random((12, 8)) < 0.25)).astype(np.float32)
    build = scipy_sparse.csr_array if kind == "array" else scipy_sparse.csr_matrix
    s = build(dense).asformat(fmt)
    a = bsrmm.BsrMatrix.from_scipy(s, blocksize=(3, 2))
    assert a.blocksize == (3, 2) and a.shape == (12, 8)
    np.testing.assert_array_equal(a.to_dense(), dense)
    with pytest.raises(bsrmm.InvalidArgumentError, match=r"blocksize=\(height, width\)"):
        bsrmm.BsrMatrix.from_scipy(s)
    with pytest.raises(bsrmm.InvalidArgumentError, match="not a whole number of 5x2 blocks"):
        bsrmm.BsrMatrix.from_scipy(s, blocksize=(5, 2))


def test_from_scipy_coo_duplicates_add_up():
    s = scipy_sparse.coo_array(([1.0, 2.0, 4.0], ([0, 0, 3], [1, 1, 2])), shape=(4, 4))
    a = bsrmm.BsrMatrix.from_scipy(s, blocksize=2)
    np.testing.assert_array_equal(a.to_dense(), s.toarray())
    assert a.to_dense()[0, 1] == 3.0


def test_from_scipy_bsr_reblocks_only_when_asked():
    dense = np.kron(np.eye(3), np.ones((2, 2))).astype(np.float32)
    s = scipy_sparse.bsr_array(dense, blocksize=(2, 2))
    assert bsrmm.BsrMatrix.from_scipy(s).blocksize == (2, 2)
    assert bsrmm.BsrMatrix.from_scipy(s, blocksize=(2, 2)).blocksize == (2, 2)
    a = bsrmm.BsrMatrix.from_scipy(s, blocksize=1)
    assert a.blocksize == (1, 1) and a.nnzb == 12


def test_from_dense_threshold_prunes_whole_blocks():
    dense = np.array(
        [[0.0, 0.1, 5.0, 0.0],
         [0.05, 0.0, 0.0, 0.0],
         [0.0, 0.0, np.nan, 0.0],
         [-0.3, 0.0, 0.0, 0.0]],
        np.float32,
    )
    assert bsrmm.BsrMatrix.from_dense(dense, 2).nnzb == 4
    pruned = bsrmm.BsrMatrix.from_dense(dense, 2, threshold=0.2)
    assert pruned.nnzb == 3  # the top-left block's largest |value| is 0.1
    expected = dense.copy()
    expected[:2, :2] = 0
    np.testing.assert_array_equal(pruned.to_dense(), expected)  # kept blocks keep small values
    assert bsrmm.BsrMatrix.from_dense(dense, 2, threshold=10.0).nnzb == 1  # only NaN's block
    np.testing.assert_array_equal(dense[0, 1], np.float32(0.1))  # the input is not modified
    with pytest.raises(bsrmm.InvalidArgumentError, match="blocksize"):
        bsrmm.BsrMatrix.from_dense(np.ones((5, 4), np.float32), 2, threshold=0.5)


# ---- scipy's names ----


def test_scipy_names(case):
    rng, a, dense = case
    assert a.ndim == 2 and a.T.ndim == 2
    assert a.nnz == a.nnzb * 8 and a.T.nnz == a.nnz
    np.testing.assert_array_equal(a.toarray(), dense)
    np.testing.assert_array_equal(a.todense(), dense)
    np.testing.assert_array_equal(a.T.toarray(), dense.T)
    assert a.transpose().T is a and a.transpose((1, 0)).shape == (10, 24)
    with pytest.raises(bsrmm.InvalidArgumentError, match="axes"):
        a.transpose((0, 1))
    x = rng.standard_normal(10).astype(np.float32)
    np.testing.assert_allclose(a.dot(x), dense @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(a.T.dot(np.ones(24, np.float32)), dense.T @ np.ones(24), rtol=1e-5)
    csr = a.tocsr()
    assert csr.format == "csr"
    np.testing.assert_array_equal(csr.toarray(), dense)
    np.testing.assert_array_equal(a.T.tocsr().toarray(), dense.T)


@pytest.mark.parametrize("dtype", DTYPES)
def test_astype(case, dtype):
    _, a, dense = case
    b = a.astype(np_dtype(dtype))
    assert b.dtype == np_dtype(dtype)
    np.testing.assert_array_equal(b.indices, a.indices)
    np.testing.assert_array_equal(b.to_dense().astype(np.float64),
                                  dense.astype(np_dtype(dtype)).astype(np.float64))
    assert a.astype(dtype).dtype == b.dtype  # by name too
    assert a.astype(np.float32) is a
    assert a.T.astype(np_dtype(dtype)).T.dtype == np_dtype(dtype)


def test_np_asarray_raises_with_a_hint(case):
    _, a, _ = case
    for matrix in (a, a.T):
        with pytest.raises(TypeError, match=r"toarray\(\)"):
            np.asarray(matrix)
        with pytest.raises(bsrmm.UnsupportedError, match="aslinearoperator"):
            np.array(matrix)


def test_numpy_operators_still_defer_to_bsrmm(case):
    rng, a, dense = case
    x = rng.standard_normal((3, 24)).astype(np.float32)
    np.testing.assert_allclose(x @ a, x @ dense, rtol=1e-5, atol=1e-5)


# ---- LinearOperator ----


def test_scipy_aslinearoperator_works_on_a_matrix(case):
    rng, a, dense = case
    op = sla.aslinearoperator(a)
    assert op.shape == (24, 10) and op.dtype == np.float32
    x = rng.standard_normal(10).astype(np.float32)
    y = rng.standard_normal(24).astype(np.float32)
    np.testing.assert_allclose(op @ x, dense @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(op.rmatvec(y), dense.T @ y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(op.matmat(np.ones((10, 2), np.float32)), dense @ np.ones((10, 2)),
                               rtol=1e-5, atol=1e-5)


def test_aslinearoperator_method_multiplies_blocks_of_vectors(case):
    rng, a, dense = case
    op = a.aslinearoperator()
    assert isinstance(op, sla.LinearOperator)
    x = rng.standard_normal((10, 4)).astype(np.float32)
    np.testing.assert_allclose(op @ x, dense @ x, rtol=1e-5, atol=1e-5)
    y = rng.standard_normal((24, 2)).astype(np.float32)
    np.testing.assert_allclose(op.H @ y, dense.T @ y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(op.T.matvec(y[:, 0]), dense.T @ y[:, 0], rtol=1e-5, atol=1e-5)


def test_a_scipy_solver_runs_on_a_bsrmm_matrix():
    rng = np.random.default_rng(5)
    m = rng.standard_normal((16, 16)) * (rng.random((16, 16)) < 0.2)
    spd = m @ m.T + 16 * np.eye(16)
    a = bsrmm.BsrMatrix.from_dense(spd, 4)
    rhs = rng.standard_normal(16)
    for operator in (a, a.aslinearoperator()):
        solution, info = sla.cg(operator, rhs, rtol=1e-10)
        assert info == 0
        np.testing.assert_allclose(spd @ solution, rhs, rtol=1e-6, atol=1e-8)


# ---- inputs converted or copied once; out in place ----


def test_a_float64_vector_with_a_float32_matrix_gives_a_float32_result(case):
    rng, a, dense = case
    x = rng.standard_normal(10)
    y = a @ x
    assert y.dtype == np.float32 and y.shape == (24,)
    value, scale = reference(dense, x.astype(np.float32)[:, None])
    assert_matches(y[:, None], value, scale, "float32", inner=10)
    for b in (x.astype(np.int64), x.astype(np.float16), x.tolist(), (x > 0)):
        assert (a @ b).dtype == np.float32
        assert (np.asarray(b, np.float32) @ a.T).dtype == np.float32


def test_out_of_another_dtype_says_how(case):
    _, a, _ = case
    with pytest.raises(bsrmm.UnsupportedError, match=r"pass out of dtype float32.*A\.astype\('float64'\)"):
        bsrmm.matmul(a, np.ones(10, np.float32), out=np.empty(24))
    out64 = np.empty(24)
    bsrmm.matmul(a.astype(np.float64), np.ones(10), out=out64)  # the advice works


def test_with_out_inputs_of_another_dtype_say_how(case):
    """A caller who passes out chose the dtype: B and bias are not converted behind its back."""
    _, a, dense = case
    out = np.empty(24, np.float32)
    with pytest.raises(bsrmm.UnsupportedError, match=r"B has dtype float64 but A and out have float32.*out=None"):
        bsrmm.matmul(a, np.ones(10), out=out)
    with pytest.raises(bsrmm.UnsupportedError, match=r"bias has dtype float64 but A and out have float32"):
        bsrmm.matmul(a, np.ones(10, np.float32), out=out, bias=np.ones(24))
    # both ways out of it work:
    bsrmm.matmul(a, np.ones(10).astype(np.float32), out=out)
    np.testing.assert_allclose(bsrmm.matmul(a, np.ones(10), bias=np.ones(24)), out + 1, rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.ones((20, 6), np.float32)[::2, ::2],  # neither stride is 1
        lambda: np.arange(30, dtype=np.float32).reshape(10, 3)[:, ::-1],  # negative stride
        lambda: np.broadcast_to(np.arange(3, dtype=np.float32), (10, 3)),  # zero stride
        lambda: np.lib.stride_tricks.as_strided(  # rows overlap (a row stride below the width)
            np.arange(12, dtype=np.float32), (10, 3), (4, 4)),
    ],
    ids=["strided", "reversed", "broadcast", "overlapping"],
)
def test_b_in_any_strides_is_copied_once(case, make):
    _, a, dense = case
    b = make()
    before = b.copy()
    value, scale = reference(dense, np.asarray(b, np.float32))
    assert_matches(bsrmm.matmul(a, b), value, scale, "float32", inner=10)
    out = np.full((24, 3), np.nan, np.float32)
    assert bsrmm.matmul(a, b, out=out) is out
    assert_matches(out, value, scale, "float32", inner=10)
    np.testing.assert_array_equal(b, before)


def test_b_in_another_dtype_and_strides_is_converted_in_one_copy(case):
    _, a, dense = case
    b = np.arange(60, dtype=np.float64).reshape(10, 3, 2)[:, :, 0]
    value, scale = reference(dense, b.astype(np.float32))
    assert_matches(bsrmm.matmul(a, b), value, scale, "float32", inner=10)


def test_bias_in_any_strides_or_dtype_is_copied_once(case):
    _, a, dense = case
    bias = np.arange(48, dtype=np.float64)[::2]
    y = bsrmm.matmul(a, np.ones((10, 2), np.float32), bias=bias)
    np.testing.assert_allclose(y, dense @ np.ones((10, 2)) + bias[:, None], rtol=1e-5, atol=1e-4)
    out = np.empty((24, 2), np.float32)
    bsrmm.matmul(a, np.ones((10, 2), np.float32), bias=bias.astype(np.float32), out=out)
    np.testing.assert_allclose(out, y, rtol=1e-6)


def test_out_must_still_be_usable_in_place(case):
    _, a, _ = case
    b = np.ones((10, 3), np.float32)
    with pytest.raises(bsrmm.InvalidArgumentError, match="out must be row-major or column-major"):
        bsrmm.matmul(a, b, out=np.empty((48, 6), np.float32)[::2, ::2])
    frozen = np.empty((24, 3), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(bsrmm.InvalidArgumentError, match="read-only"):
        bsrmm.matmul(a, b, out=frozen)
