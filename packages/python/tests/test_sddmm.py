"""bsrmm.sddmm against a float64 reference built here (the dense product x @ y, sampled at the
pattern's blocks): every dtype, block shapes 1x1 to 64x32, x and y row- or column-major with
padded leading dimensions and transposed views (read in place), alpha/beta with an existing
`out`, `out` poisoned with NaN when beta is 0, T = 0, empty patterns; errors that name the
keyword; torch tensors (and their autograd-style use, dW = sddmm(W, dY, X.T)) where torch is
importable."""

from __future__ import annotations

import numpy as np
import pytest

import bsrmm
from bsr_cases import DTYPES, assert_matches, np_dtype, random_bsr, random_values, strided_buffer
from bsr_cases import sddmm_reference as _reference

BLOCKSIZES = [(1, 1), (2, 3), (4, 4), (16, 16), (64, 32)]


def _pattern(rng, blocksize, dtype, density=0.4, block_rows=None, block_cols=None):
    bh, bw = blocksize
    block_rows = block_rows or max(2, 48 // bh)
    block_cols = block_cols or max(2, 48 // bw)
    indptr, indices, data = random_bsr(rng, block_rows, block_cols, blocksize, density, dtype)
    shape = (block_rows * bh, block_cols * bw)
    return bsrmm.BsrMatrix.from_arrays(indptr, indices, data, shape), indptr, indices


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("blocksize", BLOCKSIZES, ids=lambda b: f"{b[0]}x{b[1]}")
@pytest.mark.parametrize("layouts", ["CC", "CF", "FC", "FF"])
def test_matches_float64_reference(dtype, blocksize, layouts):
    rng = np.random.default_rng(hash((dtype, blocksize, layouts)) % 2**32)
    a, indptr, indices = _pattern(rng, blocksize, dtype)
    t = 45
    x, _ = strided_buffer(rng, a.shape[0], t, dtype, layouts[0], 3)
    y, _ = strided_buffer(rng, t, a.shape[1], dtype, layouts[1], 5)
    out = np.full((a.nnzb, *blocksize), np.nan, dtype=np_dtype(dtype))  # beta = 0 never reads it
    result = bsrmm.sddmm(a, x, y, alpha=1.5, out=out)
    assert result is out
    value, scale = _reference(indptr, indices, blocksize, x, y, alpha=1.5)
    assert_matches(out, value, scale, dtype, t)


@pytest.mark.parametrize("dtype", DTYPES)
def test_beta_scales_existing_values(dtype):
    rng = np.random.default_rng(11)
    a, indptr, indices = _pattern(rng, (4, 4), dtype, density=0.5)
    x = random_values(rng, (a.shape[0], 300), dtype)
    y = random_values(rng, (300, a.shape[1]), dtype)
    before = random_values(rng, (a.nnzb, 4, 4), dtype)
    out = before.copy()
    bsrmm.sddmm(a, x, y, alpha=-0.5, beta=0.75, out=out)
    value, scale = _reference(indptr, indices, (4, 4), x, y, -0.5, 0.75, before)
    assert_matches(out, value, scale, dtype, 300)


def test_new_result_has_the_pattern_dtype_and_block_order():
    rng = np.random.default_rng(12)
    a, indptr, indices = _pattern(rng, (2, 3), "float32")
    x = rng.standard_normal((a.shape[0], 9))  # float64: converted to the pattern's float32
    y = rng.standard_normal((9, a.shape[1]))
    result = bsrmm.sddmm(a, x, y)
    assert isinstance(result, np.ndarray)
    assert result.shape == (a.nnzb, 2, 3) and result.dtype == np.float32
    value, scale = _reference(indptr, indices, (2, 3), x.astype(np.float32), y.astype(np.float32))
    assert_matches(result, value, scale, "float32", 9)
    # The result is the values of a matrix with the pattern's structure.
    w = a.with_values(result)
    dense = w.to_dense()
    mask = a.to_dense() != 0
    np.testing.assert_allclose(dense[mask], (x.astype(np.float32) @ y.astype(np.float32))[mask],
                               rtol=1e-5, atol=1e-5)


def test_transposed_views_are_read_in_place():
    """dW = sddmm(W, dY, X.T) with X row-major: X.T is a column-major view, no copy."""
    rng = np.random.default_rng(13)
    w, indptr, indices = _pattern(rng, (16, 16), "float32", block_rows=3, block_cols=4)
    tokens = 70
    x = random_values(rng, (w.shape[1], tokens), "float32")   # W @ X: X is K x N
    dy = random_values(rng, (w.shape[0], tokens), "float32")
    dw = bsrmm.sddmm(w, dy, x.T)
    value, scale = _reference(indptr, indices, (16, 16), dy, x.T)
    assert_matches(dw, value, scale, "float32", tokens)


def test_zero_depth_and_empty_pattern():
    rng = np.random.default_rng(14)
    a, _, _ = _pattern(rng, (4, 4), "float64", density=1.0, block_rows=2, block_cols=2)
    x = np.empty((8, 0))
    y = np.empty((0, 8))
    before = random_values(rng, (a.nnzb, 4, 4), "float64")
    out = before.copy()
    bsrmm.sddmm(a, x, y, beta=2.0, out=out)
    np.testing.assert_array_equal(out, 2.0 * before)
    assert np.all(bsrmm.sddmm(a, x, y) == 0.0)
    empty, _, _ = _pattern(rng, (4, 4), "float64", density=0.0, block_rows=2, block_cols=2)
    assert bsrmm.sddmm(empty, np.ones((8, 3)), np.ones((3, 8))).shape == (0, 4, 4)


@pytest.mark.parametrize(
    "call, keyword",
    [
        (lambda a, x, y: bsrmm.sddmm(a, x[:-1], y), "x has"),
        (lambda a, x, y: bsrmm.sddmm(a, x, y[:, :-1]), "y has"),
        (lambda a, x, y: bsrmm.sddmm(a, x, y[:-1]), "y has"),
        (lambda a, x, y: bsrmm.sddmm(a, x[None], y), "x must be 2-D"),
        (lambda a, x, y: bsrmm.sddmm(a, x, y, alpha="2"), "alpha must be a real number"),
        (lambda a, x, y: bsrmm.sddmm(a, x, y, beta=1.0), "beta = 1.0 scales existing values"),
        (lambda a, x, y: bsrmm.sddmm(a, x, y, out=np.empty((a.nnzb, 4, 4), np.float64)),
         "out has dtype float64"),
        (lambda a, x, y: bsrmm.sddmm(a, x, y, out=np.empty((a.nnzb, 4, 2), np.float32)),
         "out has shape"),
        (lambda a, x, y: bsrmm.sddmm(a, x, y, out=np.empty((4, 4, a.nnzb), np.float32).transpose(2, 0, 1)),
         "out must be C-contiguous"),
        (lambda a, x, y: bsrmm.sddmm(a, x, y, out=np.empty((2 * a.nnzb, 4, 4), np.float32)[::2]),
         "out must be C-contiguous"),  # the blocks apart: the core's verdict on its leading dimension
        (lambda a, x, y: bsrmm.sddmm(a, x, y, out=_read_only(np.empty((a.nnzb, 4, 4), np.float32))),
         "out .*is read-only"),
        (lambda a, x, y: bsrmm.sddmm(a, x, y, out=np.empty((a.nnzb, 4, 4), np.int32)),
         "out has dtype int32"),
        (lambda a, x, y: bsrmm.sddmm(a, x.astype(np.float64), y, out=np.empty((a.nnzb, 4, 4), np.float32)),
         "x has dtype float64"),
        (lambda a, x, y: bsrmm.sddmm(a.T, x, y), "pattern is a transposed BsrMatrix"),
        (lambda a, x, y: bsrmm.sddmm("a", x, y), "pattern must be a bsrmm.BsrMatrix"),
    ],
)
def test_errors_name_the_argument(call, keyword):
    rng = np.random.default_rng(15)
    a, _, _ = _pattern(rng, (4, 4), "float32", density=1.0, block_rows=2, block_cols=3)
    x = random_values(rng, (8, 5), "float32")
    y = random_values(rng, (5, 12), "float32")
    with pytest.raises(bsrmm.Error, match=keyword):
        call(a, x, y)


def _read_only(array):
    array.flags.writeable = False
    return array


def test_out_overlapping_an_input_is_refused():
    rng = np.random.default_rng(16)
    a, _, _ = _pattern(rng, (2, 2), "float32", density=1.0, block_rows=2, block_cols=2)
    buffer = random_values(rng, (64,), "float32")
    x = buffer[:16].reshape(4, 4)
    y = random_values(rng, (4, 4), "float32")
    out = buffer[8:24].reshape(4, 2, 2)
    with pytest.raises(bsrmm.InvalidArgumentError, match="out overlaps x"):
        bsrmm.sddmm(a, x, y, out=out)
    with pytest.raises(bsrmm.InvalidArgumentError, match="out overlaps y"):
        bsrmm.sddmm(a, y, buffer[16:32].reshape(4, 4), out=buffer[24:40].reshape(4, 2, 2))


def test_torch_tensors():
    torch = pytest.importorskip("torch", reason="torch is not installed: the torch cases cannot run")
    rng = np.random.default_rng(17)
    for dtype, torch_dtype in [("float32", torch.float32), ("bfloat16", torch.bfloat16)]:
        a, indptr, indices = _pattern(rng, (16, 16), dtype, block_rows=3, block_cols=2)
        x = torch.from_numpy(random_values(rng, (a.shape[1], 40), "float32")).to(torch_dtype)
        dy = torch.from_numpy(random_values(rng, (a.shape[0], 40), "float32")).to(torch_dtype)
        dw = bsrmm.sddmm(a, dy, x.T)  # x.T: a column-major view of x
        assert isinstance(dw, torch.Tensor) and dw.dtype == torch_dtype
        assert tuple(dw.shape) == (a.nnzb, 16, 16)
        value, scale = _reference(indptr, indices, (16, 16), dy.float().numpy(), x.T.float().numpy())
        assert_matches(dw.float().numpy(), value, scale, dtype, 40)
