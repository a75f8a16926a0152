"""threadpoolctl reaches bsrmm's CPU pool (bsrmm/_threadpool.py): threadpool_info lists it, and
threadpool_limits sets the default CPU context's worker threads inside the block and restores
them after, with the products unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import bsrmm

threadpoolctl = pytest.importorskip("threadpoolctl", minversion="3.5", reason="needs threadpoolctl >= 3.5")


def _bsrmm_pools():
    return [info for info in threadpoolctl.threadpool_info() if info["user_api"] == "bsrmm"]


def test_threadpool_info_lists_bsrmm_once():
    pools = _bsrmm_pools()
    assert len(pools) == 1, pools
    assert pools[0]["num_threads"] == bsrmm._context.default_cpu_threads() >= 1
    assert pools[0]["version"] == bsrmm.core_version()


def test_threadpool_limits_reach_the_default_cpu_context():
    rng = np.random.default_rng(0)
    a = bsrmm.BsrMatrix.from_dense(rng.standard_normal((64, 48)), (8, 8))
    x = rng.standard_normal((48, 5))
    before = bsrmm._context.default_cpu_threads()
    with threadpoolctl.threadpool_limits(limits=1, user_api="bsrmm"):
        assert bsrmm._context.default_cpu_threads() == 1
        assert _bsrmm_pools()[0]["num_threads"] == 1
        limited = a @ x
    assert bsrmm._context.default_cpu_threads() == before
    np.testing.assert_allclose(limited, a.toarray() @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a @ x, limited, rtol=1e-12, atol=1e-12)
