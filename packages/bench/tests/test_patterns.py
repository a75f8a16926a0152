"""Pattern generators: determinism, and the statistics each kind promises (PRNG.md §6)."""

import numpy as np
import pytest

from bsrmm_bench import patterns, prng

RANDOM_KINDS = [
    {"kind": "uniform", "density": 0.2},
    {"kind": "bernoulli", "density": 0.2},
    {"kind": "power_law", "alpha": 1, "density": 0.2},
    {"kind": "topk", "density": 0.2},
]


def gen(spec, rows=48, cols=40, seed=1, block=(4, 4)):
    return patterns.generate(spec, rows, cols, seed, block_shape=block)


def assert_valid(p: patterns.Pattern):
    assert p.indptr[0] == 0 and p.indptr[-1] == p.indices.size
    assert np.all(np.diff(p.indptr) >= 0)
    for r in range(p.block_rows):
        row = p.indices[p.indptr[r] : p.indptr[r + 1]]
        assert np.all(np.diff(row) > 0), f"row {r} not sorted/unique"
        assert row.size == 0 or (row[0] >= 0 and row[-1] < p.block_cols)


@pytest.mark.parametrize("spec", RANDOM_KINDS + [{"kind": "banded", "lower": 2, "upper": 1}, {"kind": "causal"},
                                                 {"kind": "block_diagonal", "groups": 4}])
def test_same_seed_same_pattern_and_valid(spec):
    a, b = gen(spec), gen(spec)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert_valid(a)


@pytest.mark.parametrize("spec", RANDOM_KINDS)
def test_other_seed_other_pattern(spec):
    a, b = gen(spec, seed=1), gen(spec, seed=2)
    assert not (np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices))


def test_uniform_has_fixed_count_per_row_and_spreads_columns():
    p = patterns.generate({"kind": "uniform", "density": 0.125}, 512, 256, seed=3)
    assert set(p.row_counts.tolist()) == {32}
    freq = np.bincount(p.indices, minlength=256)
    # 512 rows x 32 picks over 256 columns: 64 per column expected, Poisson-like spread
    assert freq.min() > 30 and freq.max() < 100
    assert patterns.fixed_count(0.05, 512) == 26 and patterns.fixed_count(0.001, 64) == 1
    assert patterns.fixed_count(1.0, 64) == 64


def test_uniform_full_density_is_dense():
    p = patterns.generate({"kind": "uniform", "density": 1.0}, 5, 7, seed=1)
    assert np.array_equal(p.indices, np.tile(np.arange(7), 5))


def test_bernoulli_density_and_independence():
    p = patterns.generate({"kind": "bernoulli", "density": 0.1}, 400, 400, seed=4)
    expected = 0.1 * 160000
    assert abs(p.nnzb - expected) < 4 * np.sqrt(expected * 0.9)
    sparse = patterns.generate({"kind": "bernoulli", "density": 0.01}, 200, 20, seed=4)
    assert (sparse.row_counts == 0).any()  # rows may be empty


def test_power_law_keeps_total_and_is_skewed():
    rows, cols = 256, 128
    uniform = patterns.generate({"kind": "uniform", "density": 0.125}, rows, cols, seed=5)
    skewed = patterns.generate({"kind": "power_law", "alpha": 1, "density": 0.125}, rows, cols, seed=5)
    assert skewed.nnzb == uniform.nnzb == 16 * rows
    counts = skewed.row_counts
    assert counts.max() <= cols and counts.max() >= 4 * counts.mean()
    # by rank the counts never increase: the row shuffle is the only thing that scatters them
    order = patterns.row_order(rows, 5)
    assert np.all(np.diff(counts[order]) <= 0)
    assert sorted(order.tolist()) == list(range(rows))
    steeper = patterns.power_law_counts(rows, cols, 0.125, 2, 5)
    assert steeper.sum() == 16 * rows and (steeper == 0).sum() >= (counts == 0).sum()


def test_power_law_weights_are_exact_integers():
    w = patterns.power_law_weights(5, 1.5)
    assert [int(x) for x in w] == [int(np.floor(2.0**32 / (x * np.sqrt(x)))) for x in (1.0, 2.0, 3.0, 4.0, 5.0)]


def test_apportion_caps_and_redistributes():
    assert patterns.apportion(10, np.array([100, 1, 1, 1]), 4).tolist() == [4, 2, 2, 2]
    assert patterns.apportion(9, np.array([7, 0, 0]), 3).tolist() == [3, 3, 3]  # uniform fallback
    assert patterns.apportion(7, np.array([1, 1, 1]), 3).tolist() == [3, 2, 2]  # ties to lower rank
    with pytest.raises(ValueError, match="cannot place"):
        patterns.apportion(10, np.array([1, 1]), 4)


def test_banded_and_causal_shapes():
    band = patterns.generate({"kind": "banded", "lower": 2, "upper": 1}, 8, 8, seed=0)
    for r in range(8):
        row = band.indices[band.indptr[r] : band.indptr[r + 1]].tolist()
        assert row == list(range(max(0, r - 2), min(7, r + 1) + 1))
    causal = patterns.generate({"kind": "causal"}, 6, 6, seed=0)
    assert causal.row_counts.tolist() == [1, 2, 3, 4, 5, 6]
    assert all(causal.indices[causal.indptr[r] : causal.indptr[r + 1]].max() == r for r in range(6))
    window = patterns.generate({"kind": "causal", "window": 3}, 6, 6, seed=0)
    assert window.row_counts.tolist() == [1, 2, 3, 3, 3, 3]
    assert window.indices[window.indptr[5] : window.indptr[6]].tolist() == [3, 4, 5]


def test_block_diagonal_groups():
    p = patterns.generate({"kind": "block_diagonal", "groups": 4}, 8, 12, seed=0)
    assert p.row_counts.tolist() == [3] * 8
    for r in range(8):
        row = p.indices[p.indptr[r] : p.indptr[r + 1]]
        assert set((row * 4 // 12).tolist()) == {r * 4 // 8}
    with pytest.raises(ValueError, match="groups"):
        patterns.generate({"kind": "block_diagonal", "groups": 9}, 8, 12, seed=0)


def test_topk_keeps_the_largest_blocks_of_the_dense_weight():
    rows, cols, bh, bw, seed = 6, 5, 3, 4, 11
    p = patterns.generate({"kind": "topk", "density": 0.3}, rows, cols, seed, block_shape=(bh, bw))
    assert p.nnzb == 9  # floor(0.3 * 30 + 0.5)
    dense = prng.dense_values(seed, prng.STREAM_A, rows * bh, cols * bw, "float32").astype(np.float64)
    scores = np.abs(dense).reshape(rows, bh, cols, bw).sum(axis=(1, 3))  # exact: multiples of 2**-23
    kept = np.zeros((rows, cols), bool)
    kept[p.row_ids(), p.indices] = True
    assert scores[kept].min() >= scores[~kept].max()


@pytest.mark.parametrize("spec,field", [
    ({"kind": "uniform", "density": 0}, "density"),
    ({"kind": "uniform", "density": 1.5}, "density"),
    ({"kind": "bernoulli"}, "density"),
    ({"kind": "power_law", "density": 0.1, "alpha": 0.3}, "alpha"),
    ({"kind": "banded", "lower": -1, "upper": 0}, "lower"),
    ({"kind": "causal", "window": 0}, "window"),
    ({"kind": "nope"}, "pattern.kind"),
])
def test_bad_specs_name_the_field(spec, field):
    with pytest.raises(ValueError, match=field):
        patterns.generate(spec, 4, 4, seed=1, block_shape=(2, 2))


def test_dense_and_sparse_shuffles_agree(monkeypatch):
    """The chunked column shuffle gives one answer whichever way a chunk holds its rows."""
    rng = np.random.default_rng(0)
    for trial in range(60):
        rows, cols, seed = int(rng.integers(1, 40)), int(rng.integers(1, 200)), int(rng.integers(0, 99))
        counts = rng.integers(0, cols + 1, size=rows) if trial % 2 else np.minimum(rng.integers(0, cols + 1, size=rows), 6)
        results = []
        for dense_elements, sparse_max in ((1 << 24, 0), (1 << 24, 10**9), (7, 3)):
            monkeypatch.setattr(patterns, "_DENSE_SHUFFLE_ELEMENTS", dense_elements)
            monkeypatch.setattr(patterns, "_SPARSE_SHUFFLE_MAX_COUNT", sparse_max)
            p = patterns._columns_per_row(counts, cols, seed)
            results.append((p.indptr.tolist(), p.indices.tolist()))
        assert results[0] == results[1] == results[2], trial


def test_banded_is_the_band_of_the_spec():
    rng = np.random.default_rng(1)
    for _ in range(200):
        r, c, lo, up = (int(x) for x in rng.integers(1, 40, size=4))
        p = patterns.banded(r, c, lo, up)
        i, j = np.meshgrid(np.arange(r), np.arange(c), indexing="ij")
        mask = (j - i >= -lo) & (j - i <= up)
        assert p.indptr.tolist() == [0] + np.cumsum(mask.sum(axis=1)).tolist()
        assert p.indices.tolist() == np.nonzero(mask)[1].tolist()
