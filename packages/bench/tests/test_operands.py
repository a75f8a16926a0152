"""Operands: A is the dense value stream seen through the pattern, B follows its counters, the
reference rows include the extreme rows, and the Blocked-ELL conversion keeps every block."""

import numpy as np
import pytest

from bsrmm_bench import cases, operands, prng
from bsrmm_bench.peers.cusparse import blocked_ell


def make(**fields):
    base = {**cases._DEFAULTS, "m": 32, "k": 48, "n": 5, "block": [4, 8], "dtype": "float16",
            "pattern": {"kind": "power_law", "alpha": 1, "density": 0.5}, "seed": 4}
    return cases.make_case({**base, **fields})


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("transpose", [False, True])
def test_a_is_the_dense_stream_masked_by_the_pattern(dtype, transpose):
    case = make(dtype=dtype, transpose_a=transpose)
    ops = operands.build(case, sets=2)
    rows, cols = case.stored_shape
    for s in (0, 1):
        dense = prng.dense_values(case.seed, prng.STREAM_A + 16 * s, rows, cols, dtype)
        mask = np.zeros((rows, cols), bool)
        bh, bw = case.block
        for r, c in zip(ops.pattern.row_ids(), ops.pattern.indices):
            mask[r * bh:(r + 1) * bh, c * bw:(c + 1) * bw] = True
        stored = ops.scipy_a(s).toarray()
        assert np.array_equal(stored, np.where(mask, dense, 0.0))
        op = ops.dense_op_a(s)
        assert np.array_equal(op, stored.T if transpose else stored)
        assert np.array_equal(ops.sets[s].b, prng.dense_values(case.seed, prng.STREAM_B + 16 * s, case.k, case.n, dtype))
    assert not np.array_equal(ops.sets[0].data, ops.sets[1].data)  # rotation sets hold other values


def test_values_are_exact_in_their_dtype():
    ops = operands.build(make(dtype="float16"))
    assert np.array_equal(ops.sets[0].data.astype(np.float16).astype(np.float32), ops.sets[0].data)
    ops = operands.build(make(dtype="bfloat16"))
    assert not (ops.sets[0].b.view(np.uint32) & 0xFFFF).any()


def test_flops_and_bytes():
    ops = operands.build(make())
    assert ops.flops == 2 * ops.nnzb * 4 * 8 * 5 and ops.dense_flops == 2 * 32 * 48 * 5
    assert ops.bytes_per_set() > 2 * (ops.nnzb * 32 + 48 * 5 + 32 * 5)


def test_reference_rows_full_or_sampled_with_extremes(monkeypatch):
    ops = operands.build(make(m=64, k=64, block=4, pattern={"kind": "power_law", "alpha": 2, "density": 0.25}))
    assert np.array_equal(operands.reference_rows(ops, full_flop_limit=1e12), np.arange(64))
    monkeypatch.setattr(operands, "SAMPLED_ROWS", 16)
    rows = operands.reference_rows(ops, full_flop_limit=0)
    counts = ops.pattern.row_counts
    blocks = set((rows // 4).tolist())
    assert {0, 15, int(np.argmax(counts)), int(np.argmin(counts))} <= blocks
    assert rows.size >= 16 and rows.size % 4 == 0 and len(set(rows.tolist())) == rows.size


def test_reference_matches_float64_product():
    ops = operands.build(make(dtype="float32"))
    rows = np.arange(0, 32, 3)
    ref = operands.reference(ops, rows)
    assert np.allclose(ref, (ops.dense_op_a(0) @ ops.sets[0].b.astype(np.float64))[rows], rtol=0, atol=1e-12)


def test_relative_error():
    ref = np.ones((2, 2))
    assert operands.relative_error(ref * (1 + 1e-6), ref) == pytest.approx(1e-6)
    assert operands.relative_error(np.array([[1.0, np.nan], [1, 1]]), ref) == float("inf")


def test_rotation_sets():
    assert operands.rotation_sets(200 << 20, 50 << 20) == 1
    assert operands.rotation_sets(40 << 20, 50 << 20) == 4
    assert operands.rotation_sets(1 << 20, 50 << 20) == 8


def test_blocked_ell_keeps_every_block_and_pads_with_minus_one():
    ops = operands.build(make(block=4, k=32, dtype="float32"))
    p, data = ops.pattern, ops.sets[0].data
    col_ind, values, ell_cols = blocked_ell(p.indptr, p.indices, data, 32)
    slots = int(p.row_counts.max())
    assert col_ind.shape == (8, slots) and ell_cols == slots * 4 and values.shape == (32, ell_cols)
    dense = np.zeros((32, 32))
    for r in range(8):
        for s in range(slots):
            c = col_ind[r, s]
            if c >= 0:
                dense[r * 4:(r + 1) * 4, c * 4:(c + 1) * 4] = values[r * 4:(r + 1) * 4, s * 4:(s + 1) * 4]
            else:
                assert not values[r * 4:(r + 1) * 4, s * 4:(s + 1) * 4].any()
    assert np.array_equal(dense, ops.scipy_a(0).toarray())
    assert (col_ind == -1).sum() == 8 * slots - p.nnzb


@pytest.mark.parametrize("transpose", [False, True])
def test_op_bsr_arrays_given_to_gpu_peers_are_op_a(transpose):
    import scipy.sparse as sp

    from bsrmm_bench.peers.torch_gpu import _op_bsr_arrays

    case = make(dtype="float32", transpose_a=transpose)
    ops = operands.build(case)
    indptr, indices, data = _op_bsr_arrays(ops, 0)
    op_block = (case.block[1], case.block[0]) if transpose else case.block
    assert data.shape[1:] == op_block and len(indptr) == case.m // op_block[0] + 1
    for r in range(len(indptr) - 1):
        assert np.all(np.diff(indices[indptr[r]:indptr[r + 1]]) > 0)
    rebuilt = sp.bsr_array((data, indices, indptr), shape=(case.m, case.k)).toarray()
    assert np.array_equal(rebuilt, ops.dense_op_a(0))


def _sampled_rows_case(transpose_a):
    """A power-law case, six of its rows, and their float64 product from dense op(A) rows."""
    case = cases.make_case(cases._merge(cases._DEFAULTS, {
        "m": 96, "k": 64, "n": 5, "block": [8, 16] if not transpose_a else [16, 8], "dtype": "float32",
        "transpose_a": transpose_a, "pattern": {"kind": "power_law", "alpha": 1, "density": 0.3}}))
    ops = operands.build(case)
    rows = np.array([0, 1, 17, 40, 41, 95])
    return ops, rows, ops.dense_op_a(0, np.float64, rows) @ ops.sets[0].b.astype(np.float64)


@pytest.mark.parametrize("transpose_a", [False, True])
def test_sparse_reference_matches_the_dense_one(transpose_a):
    ops, rows, dense = _sampled_rows_case(transpose_a)
    np.testing.assert_allclose(operands.sparse_reference(ops, rows), dense, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("transpose_a", [False, True])
def test_gpu_backend_sparse_reference_matches_the_dense_one(transpose_a, monkeypatch):
    """CudaBackend.reference past DENSE_ROWS_BYTES_LIMIT (a torch sparse CSR float64 product),
    run here on torch's CPU device: the same rows as the dense float64 product."""
    torch = pytest.importorskip("torch")
    from bsrmm_bench.backends import CudaBackend

    ops, rows, dense = _sampled_rows_case(transpose_a)
    backend = CudaBackend.__new__(CudaBackend)
    backend.torch, backend.dev = torch, torch.device("cpu")
    monkeypatch.setattr(operands, "DENSE_ROWS_BYTES_LIMIT", 8)
    got = backend.reference(ops, rows)
    assert got.dtype == torch.float64
    np.testing.assert_allclose(got.numpy(), dense, rtol=1e-12, atol=1e-12)
