"""bsrmm.variants() and forcing a variant by name with Context(variant=...): the SDDMM kernels
are listed after the matmul ones and told apart by kind=; a context forced to an SDDMM variant
runs it in bsrmm.sddmm (float64 reference, last_variant names it); bsrmm.matmul refuses a forced
SDDMM variant and bsrmm.sddmm a forced matmul variant, in Python's words, leaving out alone."""

from __future__ import annotations

import numpy as np
import pytest

import bsrmm
from bsr_cases import DTYPES, assert_matches, random_bsr, random_values, sddmm_reference


def _sddmm_problem(seed, dtype, blocksize=(3, 5), block_rows=5, block_cols=4, t=41):
    rng = np.random.default_rng(seed)
    indptr, indices, data = random_bsr(rng, block_rows, block_cols, blocksize, 0.5, dtype)
    shape = (block_rows * blocksize[0], block_cols * blocksize[1])
    pattern = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, shape)
    x = random_values(rng, (shape[0], t), dtype)
    y = np.asfortranarray(random_values(rng, (t, shape[1]), dtype))
    return pattern, indptr, indices, x, y


def test_sddmm_variants_are_listed_after_the_matmul_ones():
    everything = bsrmm.variants()
    matmul = bsrmm.variants(kind="matmul")
    sddmm = bsrmm.variants(kind="sddmm")
    assert everything == matmul + sddmm
    assert {"cpu_sddmm_blocked", "cpu_sddmm_reference_f64acc"} <= set(sddmm)
    assert {"cpu_blocked_simd", "cpu_reference_f64acc"} <= set(matmul)
    assert all("_sddmm_" in name for name in sddmm)
    assert not any("_sddmm_" in name for name in matmul)
    if bsrmm._core.cuda_compiled():
        for prefix in ("sm90_sddmm_", "sm80_sddmm_", "cuda_sddmm_simt_"):
            assert any(name.startswith(prefix) for name in sddmm), (prefix, sddmm)


def test_variants_kind_must_be_matmul_sddmm_or_none():
    with pytest.raises(bsrmm.InvalidArgumentError, match="kind must be 'matmul', 'sddmm' or None; got 'spmm'"):
        bsrmm.variants(kind="spmm")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("variant", ["cpu_sddmm_blocked", "cpu_sddmm_reference_f64acc"])
def test_forced_cpu_sddmm_variant_runs_and_is_the_last_variant(variant, dtype):
    assert variant in bsrmm.variants(kind="sddmm")
    pattern, indptr, indices, x, y = _sddmm_problem(hash((variant, dtype)) % 2**32, dtype)
    context = bsrmm.Context("cpu", variant=variant, num_threads=2)
    before = random_values(np.random.default_rng(5), (pattern.nnzb, 3, 5), dtype)
    out = before.copy()
    assert bsrmm.sddmm(pattern, x, y, alpha=-0.5, beta=0.25, out=out, context=context) is out
    assert context.last_variant == variant
    value, scale = sddmm_reference(indptr, indices, (3, 5), x, y, alpha=-0.5, beta=0.25, before=before)
    assert_matches(out, value, scale, dtype, x.shape[1])


def test_forced_matmul_variant_is_refused_by_sddmm():
    pattern, _, _, x, y = _sddmm_problem(11, "float32")
    context = bsrmm.Context("cpu", variant="cpu_reference_f64acc")
    out = np.full((pattern.nnzb, 3, 5), np.nan, np.float32)
    with pytest.raises(bsrmm.InvalidArgumentError) as info:
        bsrmm.sddmm(pattern, x, y, out=out, context=context)
    message = str(info.value)
    assert '"cpu_reference_f64acc" is a matmul variant and bsrmm.sddmm runs SDDMM variants' in message
    assert "bsrmm.variants(kind=...)" in message and "variant=None" in message
    assert "bsrmm_" not in message.replace("bsrmm.", "")  # no C name leaks into Python's words
    assert np.isnan(out).all()
    assert context.last_variant == ""


def test_forced_sddmm_variant_is_refused_by_matmul():
    pattern, _, _, _, _ = _sddmm_problem(12, "float32")
    b = random_values(np.random.default_rng(13), (pattern.shape[1], 6), "float32")
    c = np.full((pattern.shape[0], 6), 7.0, np.float32)
    context = bsrmm.Context("cpu", variant="cpu_sddmm_blocked")
    with pytest.raises(bsrmm.InvalidArgumentError,
                       match='"cpu_sddmm_blocked" is an SDDMM variant and bsrmm.matmul runs matmul variants'):
        bsrmm.matmul(pattern, b, out=c, context=context)
    assert (c == np.float32(7.0)).all()
    assert context.last_variant == ""


def test_cuda_sddmm_variant_on_a_cpu_context_is_refused():
    cuda_sddmm = [name for name in bsrmm.variants(kind="sddmm") if not name.startswith("cpu_")]
    if not cuda_sddmm:
        pytest.skip("this build has no CUDA SDDMM variants (built without CUDA)")
    with pytest.raises(bsrmm.InvalidArgumentError, match="is a CUDA variant; this context is on cpu"):
        bsrmm.Context("cpu", variant=cuda_sddmm[0])

