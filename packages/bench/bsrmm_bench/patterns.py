"""Block-sparsity pattern generators of cases/PRNG.md §6, one function per pattern kind.

Each returns the pattern of a block grid (block_rows x block_cols) as BSR structure arrays:
indptr (int64, block_rows + 1) and indices (int64, sorted within each block row).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import prng

PATTERN_KINDS = ("uniform", "bernoulli", "power_law", "banded", "causal", "block_diagonal", "topk", "stencil")
# stencil: (dims, points) -> whether the offsets are the star (one axis at a time) or the full box
STENCILS = {(1, 3): "box", (2, 5): "star", (2, 9): "box", (3, 7): "star", (3, 27): "box"}


@dataclass(frozen=True)
class Pattern:
    block_rows: int
    block_cols: int
    indptr: np.ndarray
    indices: np.ndarray

    @property
    def nnzb(self) -> int:
        return int(self.indptr[-1])

    @property
    def row_counts(self) -> np.ndarray:
        return np.diff(self.indptr)

    @property
    def density(self) -> float:
        return self.nnzb / (self.block_rows * self.block_cols)

    def row_ids(self) -> np.ndarray:
        """The block row of every stored block, in storage order."""
        return np.repeat(np.arange(self.block_rows, dtype=np.int64), self.row_counts)


def generate(spec: dict, block_rows: int, block_cols: int, seed: int, *, block_shape=None) -> Pattern:
    """The pattern named by spec["kind"]. `block_shape` is needed only by "topk", whose scores
    come from the A value stream (PRNG.md §6.7)."""
    if block_rows < 1 or block_cols < 1:
        raise ValueError(f"block grid must be at least 1 x 1, got {block_rows} x {block_cols}")
    kind = spec.get("kind")
    if kind == "uniform":
        k = fixed_count(_density(spec), block_cols)
        return _columns_per_row(np.full(block_rows, k, dtype=np.int64), block_cols, seed)
    if kind == "bernoulli":
        return bernoulli(block_rows, block_cols, _density(spec), seed)
    if kind == "power_law":
        counts = power_law_counts(block_rows, block_cols, _density(spec), _alpha(spec), seed)
        return _columns_per_row(counts, block_cols, seed)
    if kind == "banded":
        return banded(block_rows, block_cols, _nonneg_int(spec, "lower"), _nonneg_int(spec, "upper"))
    if kind == "causal":
        window = spec.get("window")
        lower = block_cols if window is None else _positive_int(spec, "window") - 1
        return banded(block_rows, block_cols, lower, 0)
    if kind == "block_diagonal":
        return block_diagonal(block_rows, block_cols, _positive_int(spec, "groups"))
    if kind == "topk":
        if block_shape is None:
            raise ValueError("pattern 'topk' needs the block shape of the case")
        return topk(block_rows, block_cols, block_shape, _density(spec), seed)
    if kind == "stencil":
        return stencil(block_rows, block_cols, _positive_int(spec, "dims"), _positive_int(spec, "points"))
    raise ValueError(f"pattern.kind must be one of {', '.join(PATTERN_KINDS)}; got {kind!r}")


def fixed_count(density: float, block_cols: int) -> int:
    """Blocks per row: clamp(floor(density * block_cols + 0.5), 1, block_cols) (PRNG.md §6.1)."""
    return int(min(max(math.floor(density * block_cols + 0.5), 1), block_cols))


# Rows whose column shuffle is held densely at once (rows x block_cols int64 each), and the most
# columns a row may keep to be shuffled sparsely instead (only the positions swaps touched).
_DENSE_SHUFFLE_ELEMENTS = 1 << 24
_SPARSE_SHUFFLE_MAX_COUNT = 64


def _columns_per_row(counts: np.ndarray, block_cols: int, seed: int) -> Pattern:
    """Row r keeps counts[r] distinct columns: the first counts[r] entries of a partial
    Fisher-Yates shuffle of 0..block_cols-1 whose j-th swap uses draw(seed, PATTERN,
    r * block_cols + j) (PRNG.md §6.1). Vectorised over rows, one swap step at a time; rows are
    taken in chunks (the fullest first) so memory stays bounded for 2^20-column grids: a chunk
    of full rows holds the shuffled columns densely, a chunk of short rows only the positions
    its swaps touched (same draws, same result)."""
    rows = counts.size
    counts = counts.astype(np.int64)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(int(indptr[-1]), dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    start = 0
    while start < rows:
        if counts[order[start]] > _SPARSE_SHUFFLE_MAX_COUNT:
            chunk = order[start:start + max(1, _DENSE_SHUFFLE_ELEMENTS // block_cols)]
            chosen = _shuffle_dense(chunk, counts[chunk], block_cols, seed)
        else:
            chunk = order[start:start + max(1, _DENSE_SHUFFLE_ELEMENTS // max(1, int(counts[order[start]])))]
            chosen = _shuffle_sparse(chunk, counts[chunk], block_cols, seed)
        start += chunk.size
        chosen.sort(axis=1)  # the sentinel block_cols sorts last
        keep = np.arange(chosen.shape[1])[None, :] < counts[chunk][:, None]
        slots = indptr[chunk][:, None] + np.arange(chosen.shape[1])[None, :]
        indices[slots[keep]] = chosen[keep]
    return Pattern(rows, block_cols, indptr, indices)


def _swap_draws(row_ids: np.ndarray, j: int, block_cols: int, seed: int) -> np.ndarray:
    u = prng.draw(seed, prng.STREAM_PATTERN, row_ids.astype(np.uint64) * np.uint64(block_cols) + np.uint64(j))
    return j + prng.bounded(u, block_cols - j).astype(np.int64)


def _shuffle_dense(row_ids: np.ndarray, counts: np.ndarray, block_cols: int, seed: int) -> np.ndarray:
    """The first counts[i] shuffled columns of each row (block_cols where a row has fewer),
    holding every row's whole permutation."""
    perm = np.tile(np.arange(block_cols, dtype=np.int64), (row_ids.size, 1))
    for j in range(int(counts.max(initial=0))):
        live = np.nonzero(counts > j)[0]
        t = _swap_draws(row_ids[live], j, block_cols, seed)
        picked = perm[live, t]
        perm[live, t] = perm[live, j]
        perm[live, j] = picked
    width = int(counts.max(initial=0))
    return np.where(np.arange(width)[None, :] < counts[:, None], perm[:, :width], block_cols)


def _shuffle_sparse(row_ids: np.ndarray, counts: np.ndarray, block_cols: int, seed: int) -> np.ndarray:
    """Same result as _shuffle_dense, holding only what swaps wrote: swap j reads positions j
    and t >= j and writes position t (position j is never read again), so slot j of a row
    remembers (t, value) and a read takes the latest slot naming the position, else the
    position itself."""
    width = int(counts.max(initial=0))
    keys = np.full((row_ids.size, width), -1, dtype=np.int64)
    vals = np.zeros((row_ids.size, width), dtype=np.int64)
    out = np.full((row_ids.size, width), block_cols, dtype=np.int64)

    def read(live: np.ndarray, positions: np.ndarray, j: int) -> np.ndarray:
        if j == 0:
            return positions.copy()
        hits = keys[live, :j] == positions[:, None]
        last = j - 1 - np.argmax(hits[:, ::-1], axis=1)
        return np.where(hits.any(axis=1), vals[live, last], positions)

    for j in range(width):
        live = np.nonzero(counts > j)[0]
        t = _swap_draws(row_ids[live], j, block_cols, seed)
        at_j = read(live, np.full(live.size, j, dtype=np.int64), j)
        out[live, j] = read(live, t, j)
        keys[live, j] = t
        vals[live, j] = at_j
    return out


def bernoulli(block_rows: int, block_cols: int, density: float, seed: int) -> Pattern:
    """Block (r, c) is kept when coin(draw(seed, PATTERN, r * block_cols + c)) < density (§6.2)."""
    u = prng.draw_range(seed, prng.STREAM_PATTERN, 0, block_rows * block_cols)
    mask = prng.coin_below(u, density).reshape(block_rows, block_cols)
    return _from_mask(mask)


def power_law_weights(block_rows: int, alpha: float) -> np.ndarray:
    """W_i = floor(2**32 / (i + 1)**alpha) for ranks i, with the power built only from correctly
    rounded float64 operations so every language gets the same integers (PRNG.md §6.3)."""
    whole, half = divmod(round(alpha * 2), 2)
    x = np.arange(1, block_rows + 1, dtype=np.float64)
    p = np.ones_like(x)
    for _ in range(whole):
        p = p * x
    if half:
        p = p * np.sqrt(x)
    return np.floor(2.0**32 / p).astype(np.uint64)


def power_law_counts(block_rows: int, block_cols: int, density: float, alpha: float, seed: int) -> np.ndarray:
    """Blocks per block row for a power-law skew with the same total as "uniform" at this density
    (PRNG.md §6.3): integer apportionment of T = k * block_rows by weight, capped at block_cols,
    then ranks assigned to block rows by a full Fisher-Yates shuffle on the ROW_ORDER stream."""
    k = fixed_count(density, block_cols)
    total = k * block_rows
    if total >= 2**31:
        raise ValueError(f"power_law needs fewer than 2**31 blocks, got {total}")
    by_rank = apportion(total, power_law_weights(block_rows, alpha), block_cols)
    order = row_order(block_rows, seed)
    counts = np.zeros(block_rows, dtype=np.int64)
    counts[order] = by_rank
    return counts


def apportion(total: int, weights: np.ndarray, cap: int) -> np.ndarray:
    """Splits `total` into integer parts proportional to `weights`, none above `cap`
    (largest remainder; ties to the lower rank), as PRNG.md §6.3 states step by step."""
    weights = [int(w) for w in weights]
    n = len(weights)
    if total > n * cap:
        raise ValueError(f"cannot place {total} blocks in {n} rows of at most {cap}")
    counts = [0] * n
    capped = [False] * n
    remaining = total
    while remaining > 0:
        active = [i for i in range(n) if not capped[i] and weights[i] > 0]
        w = weights
        if not active:
            active = [i for i in range(n) if not capped[i]]
            w = [1] * n
        s = sum(w[i] for i in active)
        quota = {i: (remaining * w[i]) // s for i in active}
        over = [i for i in active if quota[i] >= cap]
        if over:
            for i in over:
                counts[i] = cap
                capped[i] = True
            remaining -= cap * len(over)
            continue
        for i in active:
            counts[i] = quota[i]
        left = remaining - sum(quota.values())
        by_remainder = sorted(active, key=lambda i: (-((remaining * w[i]) % s), i))
        for i in by_remainder[:left]:
            counts[i] += 1
        remaining = 0
    return np.array(counts, dtype=np.int64)


def row_order(block_rows: int, seed: int) -> np.ndarray:
    """perm[i] = block row that gets rank i: Fisher-Yates over 0..block_rows-1, swap j using
    t = j + bounded(draw(seed, ROW_ORDER, j), block_rows - j) (PRNG.md §6.3)."""
    perm = np.arange(block_rows, dtype=np.int64)
    if block_rows < 2:
        return perm
    j = np.arange(block_rows - 1)
    t = j + prng.bounded(prng.draw(seed, prng.STREAM_ROW_ORDER, j), block_rows - j).astype(np.int64)
    for a, b in zip(j.tolist(), t.tolist()):
        perm[a], perm[b] = perm[b], perm[a]
    return perm


def banded(block_rows: int, block_cols: int, lower: int, upper: int) -> Pattern:
    """Block (r, c) is kept when -lower <= c - r <= upper (PRNG.md §6.4); causal is upper = 0.
    Built from the band's offsets (a 2^17-row band is 2^17 x 3 blocks, not a 2^34-cell mask)."""
    offsets = np.arange(-min(lower, block_rows - 1), min(upper, block_cols - 1) + 1, dtype=np.int64)
    cols = np.arange(block_rows, dtype=np.int64)[:, None] + offsets[None, :]
    keep = (cols >= 0) & (cols < block_cols)
    indptr = np.zeros(block_rows + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=indptr[1:])
    return Pattern(block_rows, block_cols, indptr, cols[keep])


def block_diagonal(block_rows: int, block_cols: int, groups: int) -> Pattern:
    """Block (r, c) is kept when floor(r * g / block_rows) == floor(c * g / block_cols) (§6.6)."""
    if groups > min(block_rows, block_cols):
        raise ValueError(f"pattern.groups = {groups} exceeds the block grid {block_rows} x {block_cols}")
    gr = (np.arange(block_rows) * groups) // block_rows
    gc = (np.arange(block_cols) * groups) // block_cols
    return _from_mask(gr[:, None] == gc[None, :])


def topk(block_rows: int, block_cols: int, block_shape: tuple[int, int], density: float, seed: int) -> Pattern:
    """Keeps the n = clamp(floor(density * blocks + 0.5), 1, blocks) blocks of the dense weight
    (A's value stream, set 0) with the largest L1 norm, counted exactly in units of 2**-23;
    ties go to the lower linear block index (PRNG.md §6.7)."""
    bh, bw = block_shape
    rows, cols = block_rows * bh, block_cols * bw
    scores = np.zeros((block_rows, block_cols), dtype=np.int64)
    step = max(1, (1 << 22) // cols)  # element rows per chunk: bounded memory for 8192^2 weights
    for r0 in range(0, rows, step):
        r1 = min(rows, r0 + step)
        u = prng.draw_range(seed, prng.STREAM_A, r0 * cols, (r1 - r0) * cols)
        mag = np.abs((u >> np.uint64(40)).astype(np.int64) - (1 << 23)).reshape(r1 - r0, block_cols, bw)
        per_row = mag.sum(axis=2)  # (element rows, block cols)
        np.add.at(scores, np.arange(r0, r1) // bh, per_row)
    total = block_rows * block_cols
    n = int(min(max(math.floor(density * total + 0.5), 1), total))
    linear = np.arange(total)
    order = np.lexsort((linear, -scores.reshape(-1)))
    mask = np.zeros(total, dtype=bool)
    mask[order[:n]] = True
    return _from_mask(mask.reshape(block_rows, block_cols))


def stencil(block_rows: int, block_cols: int, dims: int, points: int) -> Pattern:
    """A finite-difference stencil on a grid of side s = the smallest integer with s**dims >=
    block_rows (PRNG.md §6.8): block row r is node (r mod s, (r div s) mod s, r div s**2) and
    keeps the column of each neighbour at offsets in {-1, 0, 1}**dims (all of them for the box
    stencils 3 / 9 / 27, one axis at a time for the star stencils 5 / 7) that stays on the grid
    and below block_cols. No randomness: the same matrix for every seed."""
    shape = STENCILS.get((dims, points))
    if shape is None:
        raise ValueError(f"pattern stencil: (dims, points) must be one of {sorted(STENCILS)}, got {(dims, points)}")
    s = 1
    while s**dims < block_rows:
        s += 1
    r = np.arange(block_rows, dtype=np.int64)
    coords = [(r // s**axis) % s for axis in range(dims)]
    offsets = [o for o in np.ndindex(*([3] * dims)) if shape == "box" or sum(x != 1 for x in o) <= 1]
    offsets.sort(key=lambda o: sum((x - 1) * s**axis for axis, x in enumerate(o)))  # ascending columns
    cols = np.empty((block_rows, len(offsets)), dtype=np.int64)
    keep = np.ones((block_rows, len(offsets)), dtype=bool)
    for j, o in enumerate(offsets):
        delta = sum((x - 1) * s**axis for axis, x in enumerate(o))
        cols[:, j] = r + delta
        for axis, x in enumerate(o):
            keep[:, j] &= (coords[axis] + x - 1 >= 0) & (coords[axis] + x - 1 < s)
        keep[:, j] &= (cols[:, j] >= 0) & (cols[:, j] < block_cols)
    indptr = np.zeros(block_rows + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=indptr[1:])
    return Pattern(block_rows, block_cols, indptr, cols[keep])


def _from_mask(mask: np.ndarray) -> Pattern:
    rows, cols = mask.shape
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(mask.sum(axis=1), out=indptr[1:])
    indices = np.nonzero(mask)[1].astype(np.int64)  # row-major scan: sorted within each row
    return Pattern(rows, cols, indptr, indices)


def _density(spec: dict) -> float:
    d = spec.get("density")
    if not isinstance(d, (int, float)) or isinstance(d, bool) or not 0.0 < d <= 1.0:
        raise ValueError(f"pattern.density must be a number in (0, 1], got {d!r}")
    return float(d)


def _alpha(spec: dict) -> float:
    a = spec.get("alpha", 1.0)
    if not isinstance(a, (int, float)) or a <= 0 or a * 2 != round(a * 2):
        raise ValueError(f"pattern.alpha must be a positive multiple of 0.5, got {a!r}")
    return float(a)


def _nonneg_int(spec: dict, name: str) -> int:
    v = spec.get(name)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ValueError(f"pattern.{name} must be a non-negative integer, got {v!r}")
    return v


def _positive_int(spec: dict, name: str) -> int:
    v = spec.get(name)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ValueError(f"pattern.{name} must be a positive integer, got {v!r}")
    return v
