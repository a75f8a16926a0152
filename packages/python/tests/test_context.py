"""Library queries and contexts."""

from __future__ import annotations

import re

import numpy as np
import pytest

import bsrmm
from bsr_cases import assert_matches, dense_from_bsr, random_bsr, reference


def test_version_and_library_queries():
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", bsrmm.__version__)
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", bsrmm.core_version())
    names = bsrmm.variants()
    assert names and all(isinstance(n, str) and n for n in names)
    assert any(n.startswith("cpu_") for n in names)
    count = bsrmm.cuda_device_count()
    assert count >= 0 and bsrmm.cuda_available() == (count > 0)
    reason = bsrmm.cuda_unavailable_reason()
    assert (reason is None) == bsrmm.cuda_available()
    if reason is not None:
        assert reason  # a reason a skip message can show


def test_default_context_is_cached_per_device():
    assert bsrmm.default_context("cpu") is bsrmm.default_context()
    assert bsrmm.default_context("cpu").device == "cpu"


def test_context_settings_are_kept():
    ctx = bsrmm.Context("cpu", num_threads=2, f32_mode="tf32", tuning="auto",
                        variant="cpu_reference_f64acc")
    assert (ctx.device, ctx.num_threads, ctx.f32_mode, ctx.tuning, ctx.variant) == (
        "cpu", 2, "tf32", "auto", "cpu_reference_f64acc"
    )
    assert ctx.stream is None
    ctx.synchronize()
    assert "num_threads=2" in repr(ctx)


def test_sm_budget_is_validated_and_a_cpu_context_ignores_it():
    ctx = bsrmm.Context("cpu", sm_budget=8)
    assert ctx.sm_budget == 8 and "sm_budget=8" in repr(ctx)
    assert bsrmm.Context("cpu").sm_budget == 0  # every SM
    for bad in (-1, 2**31, 1.5, True, "8"):
        with pytest.raises(bsrmm.InvalidArgumentError, match="sm_budget must be an int in 0..2147483647"):
            bsrmm.Context("cpu", sm_budget=bad)
    with pytest.raises(bsrmm.InvalidArgumentError, match="sm_budget"):
        ctx.sm_budget = -3
    assert ctx.sm_budget == 8  # a refused count leaves the setting alone
    ctx.sm_budget = 1 << 20  # more than any device has: every SM
    assert ctx.sm_budget == 1 << 20
    rng = np.random.default_rng(28)
    indptr, indices, data = random_bsr(rng, 6, 5, (2, 3), 0.5, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (12, 15))
    b = rng.standard_normal((15, 7)).astype(np.float32)
    value, scale = reference(dense_from_bsr(indptr, indices, data, (12, 15)), b)
    assert_matches(bsrmm.matmul(a, b, context=ctx), value, scale, "float32", 15)


def test_matrices_outlive_their_contexts():
    ctx = bsrmm.Context("cpu")
    a = bsrmm.BsrMatrix.from_dense(np.eye(4, dtype=np.float32), 2)
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    c = bsrmm.matmul(a, b, context=ctx)
    del ctx
    np.testing.assert_array_equal(c, b)
    np.testing.assert_array_equal(a @ b, b)


def test_tuning_defaults_to_auto_as_in_the_core(private_tuning_cache):
    """A default context tunes: by the third multiply of a problem (AUTO runs the heuristic's
    pick on the first two of a key the cache does not know) the variant it ran is stored (in
    this session's cache, see conftest.py), and every result is right."""
    ctx = bsrmm.Context("cpu")
    assert ctx.tuning == "auto" and bsrmm.default_context().tuning == "auto"
    rng = np.random.default_rng(11)
    indptr, indices, data = random_bsr(rng, 7, 5, (3, 2), 0.5, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (21, 10))
    b = rng.standard_normal((10, 13)).astype(np.float32)
    value, scale = reference(dense_from_bsr(indptr, indices, data, (21, 10)), b)
    for _ in range(3):
        out = bsrmm.matmul(a, b, context=ctx)
        assert_matches(out, value, scale, "float32", 10)
    assert bsrmm.tuner_cache_path() == str(private_tuning_cache)
    stored = {entry["variant"] for entry in bsrmm.tuner_cache_entries()}
    assert ctx.last_variant in stored, (ctx.last_variant, stored)
