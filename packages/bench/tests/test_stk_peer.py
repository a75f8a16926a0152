"""The STK peer without a GPU: the BSR -> STK index conversion, read the way STK's Triton kernels
read it (emulated in numpy) against dense products; the same arrays STK's own Matrix derives
(when STK is staged in .carry/stk); and the peer reporting "unavailable" with the reason when
STK is absent or the case is outside its kernels (block 128, fp16 / bf16, CUDA, dims % 128)."""

import sys
import types

import numpy as np
import pytest

from bsrmm_bench.backends import Unavailable
from bsrmm_bench.cases import Case
from bsrmm_bench.peers import stk_triton


def random_bsr(rng, rows, cols, density, b):
    mask = rng.random((rows, cols)) < density
    mask[0, -1] = True  # a block in the last column; an empty column is likely too
    indptr = np.concatenate([[0], np.cumsum(mask.sum(1))])
    indices = np.nonzero(mask)[1]
    data = rng.standard_normal((indices.size, b, b))
    dense = np.zeros((rows * b, cols * b))
    for j, (r, c) in enumerate(zip(np.repeat(np.arange(rows), np.diff(indptr)), indices)):
        dense[r * b:(r + 1) * b, c * b:(c + 1) * b] = data[j]
    return indptr, indices, data, dense


def emulate_dsd(meta, data, rhs, b, transposed):
    """C = op(A) rhs the way STK's _dsd_kernel walks the metadata: row offsets and column indices
    of A (or of A^T: offsets_t, column_indices_t, data at block_offsets_t, each block transposed)."""
    offsets = meta["offsets_t"] if transposed else meta["offsets"]
    columns = meta["column_indices_t"] if transposed else meta["column_indices"]
    out = np.zeros(((offsets.size - 1) * b, rhs.shape[1]))
    for r in range(offsets.size - 1):
        for j in range(offsets[r], offsets[r + 1]):
            block = data[meta["block_offsets_t"][j]].T if transposed else data[j]
            out[r * b:(r + 1) * b] += block @ rhs[columns[j] * b:(columns[j] + 1) * b]
    return out


def emulate_sdd(meta, lhs, rhs, b):
    """(lhs @ rhs) at each stored block, as STK's _sdd_kernel indexes by row / column indices."""
    return np.stack([lhs[r * b:(r + 1) * b] @ rhs[:, c * b:(c + 1) * b]
                     for r, c in zip(meta["row_indices"].astype(int), meta["column_indices"].astype(int))])


def test_metadata_read_as_stk_reads_it_gives_the_dense_products():
    rng = np.random.default_rng(7)
    b = 4
    indptr, indices, data, dense = random_bsr(rng, 5, 7, 0.3, b)
    meta = stk_triton.metadata(indptr, indices, 7)
    assert meta["offsets_t"].size == 8 and meta["offsets"].dtype == np.int32 and meta["row_indices"].dtype == np.int16
    x = rng.standard_normal((7 * b, 3))
    dy = rng.standard_normal((5 * b, 3))
    np.testing.assert_allclose(emulate_dsd(meta, data, x, b, transposed=False), dense @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(emulate_dsd(meta, data, dy, b, transposed=True), dense.T @ dy, rtol=1e-12, atol=1e-12)
    lhs, rhs = dy, rng.standard_normal((3, 7 * b))  # dW = dY X^T at the blocks: lhs (M, N), rhs (N, K)
    full = lhs @ rhs
    expected = np.stack([full[r * b:(r + 1) * b, c * b:(c + 1) * b]
                         for r, c in zip(np.repeat(np.arange(5), np.diff(indptr)), indices)])
    np.testing.assert_allclose(emulate_sdd(meta, lhs, rhs, b), expected, rtol=1e-12, atol=1e-12)


def test_metadata_refuses_more_blocks_than_int16_indexes():
    with pytest.raises(Unavailable, match="int16"):
        stk_triton.metadata(np.array([0, 1]), np.array([0]), 40000)


def staged_stk():
    try:
        return stk_triton.load()
    except Unavailable as e:
        pytest.skip(f"STK not staged here: {e}")


def test_matrix_matches_stks_own_transpose_and_to_dense():
    stk = staged_stk()
    torch = pytest.importorskip("torch")
    from stk.matrix import _transpose

    rng = np.random.default_rng(3)
    b = 8
    indptr, indices, data, dense = random_bsr(rng, 6, 9, 0.35, b)
    m = stk_triton.matrix(stk, (6 * b, 9 * b), indptr, indices, torch.from_numpy(data).half())
    np.testing.assert_allclose(stk.ops.to_dense(m).double().numpy(), dense, rtol=1e-3, atol=1e-3)
    col_t, offsets_t, block_offsets_t = _transpose(m.size(), m.data, m.row_indices, m.column_indices, m.offsets)
    assert torch.equal(m.offsets_t, offsets_t)
    # STK's argsort need not be stable: the same blocks per transposed row, maybe in another order.
    for r in range(9):
        lo, hi = int(offsets_t[r]), int(offsets_t[r + 1])
        assert sorted(m.block_offsets_t[lo:hi].tolist()) == sorted(block_offsets_t[lo:hi].tolist())
        assert sorted(m.column_indices_t[lo:hi].tolist()) == sorted(col_t[lo:hi].tolist())


def case(**over):
    fields = dict(id="x", m=256, k=256, n=256, block=(128, 128), dtype="bfloat16", f32_mode="exact", layout_b="row",
                  layout_c="row", transpose_a=False, pattern={"kind": "uniform", "density": 0.5}, seed=1, devices=("cuda",))
    fields.update(over)
    return Case(**fields)


@pytest.mark.parametrize("over, reason", [
    ({"block": (64, 64)}, "128 x 128 blocks only"),
    ({"dtype": "float32"}, "float16 / bfloat16"),
    ({"n": 16}, "tile every dimension by 128"),
])
def test_peer_is_unavailable_outside_stks_kernels(over, reason):
    c = case(**over)
    with pytest.raises(Unavailable, match=reason):
        stk_triton.STK_DSD.prepare(types.SimpleNamespace(case=c), types.SimpleNamespace(device="cuda"), {})
    assert "CUDA" in stk_triton.why_not((128, 128), "bfloat16", "cpu")


def test_peer_is_unavailable_with_how_to_stage_it_when_stk_is_absent(monkeypatch, tmp_path):
    monkeypatch.setenv(stk_triton.ENV_PATH, str(tmp_path))  # a folder without stk/
    monkeypatch.setitem(sys.modules, "stk", None)  # and none importable elsewhere
    with pytest.raises(Unavailable, match="stage-stk.sh"):
        stk_triton.load()
    with pytest.raises(Unavailable, match="STK is not importable"):
        stk_triton.STK_DSD.prepare(types.SimpleNamespace(case=case()), types.SimpleNamespace(device="cuda"), {})
