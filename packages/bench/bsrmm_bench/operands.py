"""The operands of one case, regenerated from its seed (cases/PRNG.md §3): the BSR pattern, A's
block values, B, and the float64 reference of op(A) @ B on chosen rows.

Values are held as exact float32 (float64 for float64 cases) already rounded to the case dtype, so
converting them to any library's float16/bfloat16 storage is lossless."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from . import patterns, prng
from .cases import Case

# Rows of op(A) checked against the float64 reference when the full product is too costly.
SAMPLED_ROWS = 1024


@dataclass
class OperandSet:
    """One rotation set: same pattern as every other set, its own values (streams + 16 * set)."""

    index: int
    data: np.ndarray  # (nnzb, bh, bw), exact values of the case dtype
    b: np.ndarray  # (k, n), C-contiguous; layouts are applied by each implementation


@dataclass
class Operands:
    case: Case
    pattern: patterns.Pattern
    sets: list[OperandSet] = field(default_factory=list)
    # float64 dense op(A) per set, built once: the reference and the dense peers all need it.
    _dense64: dict = field(default_factory=dict, repr=False)
    # op(A) as BSR arrays per (set, dtype), built once: every GPU peer starts from them.
    _op_bsr: dict = field(default_factory=dict, repr=False)

    @property
    def nnzb(self) -> int:
        return self.pattern.nnzb

    @property
    def flops(self) -> int:
        """2 * nnzb * bh * bw * n: the work on non-zero blocks only (PERF.md's effective rate)."""
        bh, bw = self.case.block
        return 2 * self.nnzb * bh * bw * self.case.n

    @property
    def dense_flops(self) -> int:
        return 2 * self.case.m * self.case.k * self.case.n

    def bytes_per_set(self) -> int:
        """A values + indices + B + C of one set in the case dtype: what must leave the cache."""
        item = 8 if self.case.dtype == "float64" else 4 if self.case.dtype == "float32" else 2
        bh, bw = self.case.block
        c = self.case
        return item * (self.nnzb * bh * bw + c.k * c.n + c.m * c.n) + 4 * (self.nnzb + self.pattern.block_rows + 1)

    def scipy_a(self, set_index: int = 0, dtype=np.float64) -> sp.bsr_array:
        """Stored A (not transposed) as a scipy BSR array of the given dtype."""
        data = self.sets[set_index].data.astype(dtype)
        return sp.bsr_array((data, self.pattern.indices, self.pattern.indptr), shape=self.case.stored_shape)

    def op_bsr(self, set_index: int = 0, dtype=np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """op(A) as BSR arrays (indptr, indices, data; indices sorted in each block row): the
        pattern's own arrays, or scipy's transpose for transpose_a. Cached per (set, dtype)."""
        key = (set_index, np.dtype(dtype).str)
        if key not in self._op_bsr:
            data = self.sets[set_index].data.astype(dtype)
            if self.case.transpose_a:
                a = self.scipy_a(set_index, dtype).T.tobsr(blocksize=(self.case.block[1], self.case.block[0]))
                a.sort_indices()
                self._op_bsr[key] = (a.indptr, a.indices, a.data)
            else:
                self._op_bsr[key] = (self.pattern.indptr, self.pattern.indices, data)
        return self._op_bsr[key]

    def dense_op_a(self, set_index: int = 0, dtype=np.float64, rows: np.ndarray | None = None) -> np.ndarray:
        """op(A) as a dense array (only `rows` of it when given)."""
        if rows is not None and rows.size == self.case.m and np.array_equal(rows, np.arange(self.case.m)):
            rows = None
        if rows is None and dtype == np.float64:
            if set_index not in self._dense64:
                self._dense64[set_index] = self._dense_rows(set_index, np.float64, None)
            return self._dense64[set_index]
        return self._dense_rows(set_index, dtype, rows)

    def _dense_rows(self, set_index: int, dtype, rows: np.ndarray | None) -> np.ndarray:
        if rows is None:
            return self._scatter_dense(set_index, dtype)
        a = self.scipy_a(set_index, dtype)
        return (a.T if self.case.transpose_a else a).tocsr()[rows].toarray()

    def _scatter_dense(self, set_index: int, dtype) -> np.ndarray:
        """All of op(A), its blocks written straight into a zeroed array (much faster than going
        through scipy's CSR for 8192 x 8192 operands)."""
        c = self.case
        bh, bw = c.block
        data = self.sets[set_index].data.astype(dtype, copy=False)
        out = np.zeros((c.m, c.k), dtype=dtype)
        rows, cols = self.pattern.row_ids(), self.pattern.indices
        if c.transpose_a:  # op(A) = A^T: block (r, c) of A lands transposed at block (c, r)
            out.reshape(c.m // bw, bw, c.k // bh, bh)[cols, :, rows, :] = data.transpose(0, 2, 1)
        else:
            out.reshape(c.m // bh, bh, c.k // bw, bw)[rows, :, cols, :] = data
        return out

    def release(self) -> None:
        """Drops the cached dense copies and BSR arrays (a case's operands can be large)."""
        self._dense64.clear()
        self._op_bsr.clear()


def build(case: Case, sets: int = 1, b_cache: dict | None = None) -> Operands:
    """The case's pattern and `sets` operand sets. `b_cache` (a dict kept by the caller) reuses B
    across cases that share (seed, k, n, dtype): the whole grid shares one B per dtype."""
    block_rows, block_cols = case.block_grid
    pattern = patterns.generate(case.pattern, block_rows, block_cols, case.seed, block_shape=case.block)
    ops = Operands(case, pattern)
    add_sets(ops, sets, b_cache)
    return ops


def add_sets(ops: Operands, sets: int, b_cache: dict | None = None) -> None:
    """Extends ops.sets up to `sets` sets."""
    case = ops.case
    for s in range(len(ops.sets), sets):
        stride = prng.SET_STRIDE * s
        data = block_values(case, ops.pattern, prng.STREAM_A + stride)
        key = (case.seed, case.k, case.n, case.dtype, s)
        b = None if b_cache is None else b_cache.get(key)
        if b is None:
            b = prng.dense_values(case.seed, prng.STREAM_B + stride, case.k, case.n, case.dtype)
            if b_cache is not None:
                if len(b_cache) >= 8:  # bounded: a suite rarely alternates between more shapes
                    b_cache.clear()
                b_cache[key] = b
        ops.sets.append(OperandSet(s, data, b))


def block_values(case: Case, pattern: patterns.Pattern, stream: int) -> np.ndarray:
    """Block b at (r, c) holds element (y, x) = value(counter (r*bh + y) * cols + c*bw + x):
    A is a dense random matrix seen through the pattern (PRNG.md §3)."""
    bh, bw = case.block
    cols = case.stored_shape[1]
    row_ids = pattern.row_ids()
    out = np.empty((pattern.nnzb, bh, bw), dtype=np.float64 if case.dtype == "float64" else np.float32)
    y = np.arange(bh, dtype=np.uint64)[None, :, None]
    x = np.arange(bw, dtype=np.uint64)[None, None, :]
    step = max(1, (1 << 22) // (bh * bw))
    for b0 in range(0, pattern.nnzb, step):
        r = row_ids[b0 : b0 + step].astype(np.uint64)[:, None, None]
        c = pattern.indices[b0 : b0 + step].astype(np.uint64)[:, None, None]
        counters = (r * np.uint64(bh) + y) * np.uint64(cols) + c * np.uint64(bw) + x
        out[b0 : b0 + counters.shape[0]] = prng.values_for_counters(case.seed, stream, counters, case.dtype)
    return out


def rotation_sets(bytes_per_set: int, cache_bytes: int, max_sets: int = 8) -> int:
    """Operand sets to cycle through so consecutive runs do not find their operands in cache:
    enough to cover three times the cache when one set fits in it twice over (METHOD.md)."""
    if cache_bytes <= 0 or bytes_per_set >= 2 * cache_bytes:
        return 1
    return int(min(max_sets, max(2, -(-3 * cache_bytes // bytes_per_set))))


def reference_rows(ops: Operands, full_flop_limit: float, full_bytes_limit: float = float("inf")) -> np.ndarray:
    """Rows of op(A) @ B checked against float64: all of them when the product costs at most
    `full_flop_limit` flops and op(A) as dense float64 takes at most `full_bytes_limit`; otherwise whole op-block-rows chosen without randomness: the first,
    the last, the one with most blocks, the one with fewest, then evenly spaced ones until at
    least SAMPLED_ROWS rows (so the longest and emptiest rows are always among them)."""
    case = ops.case
    if ops.dense_flops <= full_flop_limit and 8 * case.m * case.k <= full_bytes_limit:
        return np.arange(case.m)
    height = case.block[1] if case.transpose_a else case.block[0]
    groups = case.m // height
    counts = np.bincount(ops.pattern.indices, minlength=groups) if case.transpose_a else ops.pattern.row_counts
    picked = [0, groups - 1, int(np.argmax(counts)), int(np.argmin(counts))]
    want = max(1, -(-SAMPLED_ROWS // height))
    picked += np.linspace(0, groups - 1, num=min(groups, want)).astype(int).tolist()
    chosen = np.unique(np.array(picked))
    return (chosen[:, None] * height + np.arange(height)[None, :]).reshape(-1)


# Above this many bytes of dense float64 op(A) rows, the reference multiplies the rows as a sparse
# matrix instead (a 2^20-column A would need 8 MiB per dense row).
DENSE_ROWS_BYTES_LIMIT = 1 << 28


def reference(ops: Operands, rows: np.ndarray, set_index: int = 0) -> np.ndarray:
    """float64 op(A)[rows] @ B on the host (the GPU runner computes the same product on the GPU
    when the rows are dense-sized)."""
    if rows.size * ops.case.k * 8 > DENSE_ROWS_BYTES_LIMIT:
        return sparse_reference(ops, rows, set_index)
    a_rows = ops.dense_op_a(set_index, np.float64, rows)
    return a_rows @ ops.sets[set_index].b.astype(np.float64)


def sparse_reference(ops: Operands, rows: np.ndarray, set_index: int = 0) -> np.ndarray:
    """float64 op(A)[rows] @ B with op(A)'s rows kept sparse (scipy CSR, float64 sums)."""
    sub, local = sparse_op_a_rows(ops, rows, set_index)
    return np.asarray(sub @ ops.sets[set_index].b.astype(np.float64))[local]


def sparse_op_a_rows(ops: Operands, rows: np.ndarray, set_index: int = 0):
    """(sub, local): a float64 scipy CSR matrix holding op(A)'s `rows` among its own, and where
    each of them is in it (op(A)[rows] = sub[local]). Without a transpose only the block rows
    that hold `rows` are expanded (a 2^20-row stencil has ~10^8 stored values; the check needs a
    few thousand rows of them)."""
    case, pattern = ops.case, ops.pattern
    if case.transpose_a:
        return ops.scipy_a(set_index, np.float64).T.tocsr()[rows], np.arange(rows.size)
    bh = case.block[0]
    block_rows = np.unique(rows // bh)
    starts, ends = pattern.indptr[block_rows], pattern.indptr[block_rows + 1]
    picked = np.concatenate([np.arange(s0, s1) for s0, s1 in zip(starts, ends)] + [np.zeros(0, dtype=np.int64)])
    indptr = np.concatenate([[0], np.cumsum(ends - starts)])
    data = ops.sets[set_index].data[picked].astype(np.float64)
    sub = sp.bsr_array((data, pattern.indices[picked], indptr), shape=(block_rows.size * bh, case.k)).tocsr()
    return sub, np.searchsorted(block_rows, rows // bh) * bh + rows % bh


def relative_error(out_rows: np.ndarray, ref_rows: np.ndarray) -> float:
    """||out - ref||_F / ||ref||_F in float64; NaN or Inf anywhere gives inf."""
    out64 = np.asarray(out_rows, dtype=np.float64)
    if not np.all(np.isfinite(out64)):
        return float("inf")
    denom = np.linalg.norm(ref_rows)
    diff = np.linalg.norm(out64 - ref_rows)
    return float(diff / denom) if denom > 0 else float(diff)
