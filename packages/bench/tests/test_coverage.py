"""The coverage suite (issue 22): its sampling is deterministic and bounded, its stencil patterns
are the textbook ones, and it carries the issue's headline cases."""

import math

import numpy as np
import pytest

from bsrmm_bench import cases, patterns, sampling

SPEC = {
    "seed": 5, "count": 25,
    "n": [1, 16, 256, 4096], "block": [1, 3, 16, 128, [64, 32], [16, 64]],
    "precision": ["float64", "float32-tf32", "float16"], "rows_log2": [12, 20],
    "pattern": [{"kind": "uniform", "row_blocks": 16}, {"kind": "stencil", "dims": 3, "points": 27},
                {"kind": "banded", "lower": 1, "upper": 1}, {"kind": "power_law", "alpha": 1, "row_blocks": 8}],
    "max_values": 2**24, "max_bytes": 2**27, "max_flops": 2**34,
}


def _load(fields):
    return cases.make_case(cases._merge(cases._DEFAULTS, fields))


def test_sampling_is_deterministic_and_seeded():
    first, again = sampling.draw(SPEC), sampling.draw(dict(SPEC))
    assert first == again and len(first) == SPEC["count"]
    other = sampling.draw({**SPEC, "seed": 6})
    assert [f for f in other if f not in first], "another seed draws other cases"


def test_every_sampled_case_is_valid_and_within_the_limits():
    item = {"float64": 8, "float32": 4, "float16": 2}
    for fields in sampling.draw(SPEC):
        case = _load(fields)
        ops_pattern = patterns.generate(case.pattern, *case.block_grid, case.seed, block_shape=case.block)
        bh, bw = case.block
        values = ops_pattern.nnzb * bh * bw + case.k * case.n
        assert values <= SPEC["max_values"], case.id
        assert item[case.dtype] * (values + case.m * case.n) <= SPEC["max_bytes"], case.id
        assert 2 * ops_pattern.nnzb * bh * bw * case.n <= SPEC["max_flops"], case.id
        assert 2**12 - bh * bw <= case.m <= 2**20 and case.m == case.k
        assert case.precision in ("float64", "tf32", "float16")


def test_a_draw_that_cannot_fit_is_dropped_not_shrunk_below_the_range():
    tight = {**SPEC, "n": [4096], "max_values": 2**12}  # B alone (2^12 x 4096) is over the limit
    assert sampling.draw(tight) == []


def test_coverage_suite_is_bounded_and_has_the_headline_cases():
    suite = cases.load_suite("coverage")
    gpu = [c for c in suite if c.devices == ("cuda",)]
    cpu = [c for c in suite if c.devices == ("cpu",)]
    ids = {c.id for c in suite}
    assert len(gpu) <= 60 and len(cpu) <= 45
    for n in (1, 2, 4, 16):
        assert f"float16_8192x8192x{n}_b64x64_uniform-d0.125_rr_s1" in ids
    for dtype in ("float64", "float32"):
        for n in (1, 16, 64):
            assert f"{dtype}_1048576x1048576x{n}_b4x4_stencil-D3-p27_rr_s1" in ids
    assert "float64_524288x524288x1_b8x8_uniform-d0.0004119873046875_rr_s1" in ids
    assert "float16_8192x8192x128_b64x64_causal_rr_s1" in ids
    # the sample spans the axes
    assert {c.precision for c in gpu} >= {"float64", "float32", "tf32", "float16", "bfloat16"}
    assert {c.pattern["kind"] for c in gpu} >= {"uniform", "power_law", "banded", "stencil"}
    assert min(c.n for c in gpu) == 1 and max(c.n for c in gpu) >= 1024
    assert any(c.block[0] != c.block[1] for c in gpu) and any(c.block == (1, 1) for c in gpu)
    # the CPU part stays small: every sampled case within 2^28 flops and 2^22 generated values
    for c in cpu:
        if c.note.startswith("coverage sample"):
            p = patterns.generate(c.pattern, *c.block_grid, c.seed)
            assert 2 * p.nnzb * c.block[0] * c.block[1] * c.n <= 2**28 and c.dtype in ("float32", "float64")


@pytest.mark.parametrize("dims,points,side", [(1, 3, 9), (2, 5, 6), (2, 9, 6), (3, 7, 5), (3, 27, 4)])
def test_stencils_count_the_textbook_neighbours(dims, points, side):
    p = patterns.stencil(side**dims, side**dims, dims, points)
    expected = (3 * side - 2) ** dims if points == 3**dims else points * side**dims - 2 * dims * side ** (dims - 1)
    assert p.nnzb == expected
    assert p.row_counts.max() == points
    dense = np.zeros((side**dims, side**dims), dtype=bool)
    dense[p.row_ids(), p.indices] = True
    assert (dense == dense.T).all()  # neighbours are mutual
    for r in range(p.block_rows):
        assert list(p.indices[p.indptr[r]:p.indptr[r + 1]]) == sorted(p.indices[p.indptr[r]:p.indptr[r + 1]])


def test_stencil_of_the_headline_grid():
    p = patterns.generate({"kind": "stencil", "dims": 3, "points": 27}, 64**3, 64**3, seed=1)
    assert p.nnzb == 190**3 and math.isclose(p.nnzb / p.block_rows, 26.17, rel_tol=1e-3)


def test_stencil_rejects_unknown_shapes():
    with pytest.raises(ValueError, match="dims, points"):
        patterns.generate({"kind": "stencil", "dims": 2, "points": 7}, 16, 16, seed=1)
