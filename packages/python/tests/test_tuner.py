"""bsrmm.tune and the tuner cache, in a child interpreter whose BSRMM_TUNING_CACHE points into a
temporary folder (the location is read from the environment, and the cache is process-wide)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import bsrmm
    sys.path.insert(0, sys.argv[1])
    from bsr_cases import assert_matches, dense_from_bsr, random_bsr, reference

    path = sys.argv[2]
    assert bsrmm.tuner_cache_path() == path, bsrmm.tuner_cache_path()
    assert bsrmm.tuner_cache_entries() == []

    rng = np.random.default_rng(0)
    indptr, indices, data = random_bsr(rng, 8, 8, (8, 8), 0.4, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (64, 64))
    b = rng.standard_normal((64, 16)).astype(np.float32)
    value, scale = reference(dense_from_bsr(indptr, indices, data, (64, 64)), b, transpose_a=True)

    ctx = bsrmm.Context("cpu")
    out = np.full((64, 16), np.nan, np.float32)
    assert bsrmm.tune(a.T, b, out=out, context=ctx) is out
    assert_matches(out, value, scale, "float32", 64)
    assert ctx.last_variant in bsrmm.variants()
    entries = bsrmm.tuner_cache_entries()
    assert len(entries) == 1 and entries[0]["variant"] == ctx.last_variant, entries
    assert {"key", "device", "variant", "time_ms", "candidates"} <= set(entries[0]), entries
    assert json.load(open(path))

    # An "auto" context finds the stored choice for the same problem and measures nothing new.
    auto = bsrmm.Context("cpu", tuning="auto")
    out[...] = np.nan
    bsrmm.matmul(a.T, b, out=out, context=auto)
    assert_matches(out, value, scale, "float32", 64)
    assert auto.last_variant == ctx.last_variant
    assert len(bsrmm.tuner_cache_entries()) == 1
    assert bsrmm.tuner_cache_warning() == ""

    bsrmm.tuner_cache_clear()
    assert bsrmm.tuner_cache_entries() == []
    print("tuner ok")
    """
)


def test_tune_stores_a_choice_that_auto_contexts_reuse(tmp_path):
    cache = tmp_path / "tuning.json"
    env = {**os.environ, "BSRMM_TUNING_CACHE": str(cache)}
    tests_dir = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, tests_dir, str(cache)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "tuner ok" in done.stdout
