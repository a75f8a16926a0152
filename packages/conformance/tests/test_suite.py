"""The conformance suite and the bad inputs cover what they claim (README.md), and the vectors
format reads back what it wrote."""

import math

import numpy as np
import pytest

from bsrmm_bench import cases, operands
from bsrmm_conformance import bad_inputs, manifest, vectors

SUITE = cases.load_suite("conformance")


def test_covers_dtypes_ops_layouts_and_padding():
    assert {c.dtype for c in SUITE} == {"float32", "float16", "bfloat16", "float64"}
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        combos = {(c.transpose_a, c.layout_b, c.layout_c) for c in SUITE if c.dtype == dtype}
        assert len(combos) == 8, dtype
    padded = {(c.transpose_a, c.layout_b, c.layout_c) for c in SUITE if c.pad_b and c.pad_c}
    assert len(padded) == 8


def test_covers_the_epilogue():
    assert any(c.alpha not in (0, 1) for c in SUITE) and any(c.alpha == 0 for c in SUITE)
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        assert {c.activation for c in SUITE if c.dtype == dtype and c.beta != 0 and c.bias} == {"none", "relu", "gelu", "silu"}


def test_covers_block_shapes_and_n():
    blocks = {c.block for c in SUITE}
    assert {(1, 8), (8, 1), (1, 1), (3, 5)} <= blocks
    assert any(bh != bw for bh, bw in blocks) and any(bh == bw >= 32 for bh, bw in blocks)
    assert any(c.n == 1 for c in SUITE) and any(c.m != c.k for c in SUITE)


def test_has_empty_block_rows_and_an_empty_matrix():
    counts = [operands.build(c).pattern for c in SUITE if c.pattern["kind"] == "bernoulli" and c.block != (1, 1)]
    assert any(p.nnzb == 0 for p in counts)
    assert any(p.nnzb > 0 and (p.row_counts == 0).any() for p in counts)


def test_every_case_is_small():
    assert len(SUITE) < 150
    assert max(c.m * c.k * c.n for c in SUITE) <= 128 * 128 * 32


def test_manifest_round_trip(tmp_path):
    case = SUITE[0]
    line = vectors.vector_case(case, alpha=float("nan"), beta=-float("inf")).to_line()
    back = manifest.VectorCase.from_line(line)
    assert math.isnan(back.alpha) and back.beta == -math.inf
    assert back.b_ld == case.ld_b and back.c_layout == case.layout_c
    manifest.write(tmp_path, [(vectors.vector_case(case), vectors.case_arrays(case))])
    [read] = manifest.read(tmp_path)
    assert read == vectors.vector_case(case)
    values = manifest.load_array(tmp_path, read, "values")
    assert values.size == operands.build(case).nnzb * case.block[0] * case.block[1]


def test_padding_and_unread_c_are_nan():
    case = next(c for c in SUITE if c.pad_b and c.pad_c and c.layout_b == "col" and c.beta == 0)
    arrays = vectors.case_arrays(case)
    b = manifest.to_float64(arrays["b"], case.dtype)
    inside = manifest.element_offsets(case.k, case.n, case.ld_b, "col").reshape(-1)
    outside = np.setdiff1d(np.arange(b.size), inside)
    assert outside.size > 0 and np.isnan(b[outside]).all() and np.isfinite(b[inside]).all()
    assert np.isnan(manifest.to_float64(arrays["c"], case.dtype)).all()


@pytest.mark.parametrize("name", list(bad_inputs.BAD_INPUTS))
def test_each_bad_input_changes_its_base(name):
    expect, base, _ = bad_inputs.BAD_INPUTS[name]
    built = {case.id: (case, arrays) for case, arrays in bad_inputs.vectors()}
    case, arrays = built[f"bad-{name}"]
    original = vectors.case_arrays(base)
    assert case.expect == expect
    changed_arrays = [k for k in arrays if k not in original or arrays[k].tobytes() != original[k].tobytes()]
    changed_fields = case != vectors.vector_case(base, id=case.id, expect=expect)
    assert changed_arrays or changed_fields
