"""The STK peer of the product suites on the GPU: block 128 in f16 and bf16, A transposed
through STK's transposed view, column-major B and C; checked against float64 like every peer.
Skips without a CUDA device, and without STK staged (.carry/stk: experiments/stage-stk.sh)."""

import json

import pytest

from bsrmm_bench import runner, timing
from bsrmm_bench.backends import Unavailable
from bsrmm_bench.peers import stk_triton

why_not = runner.cuda_status()
pytestmark = pytest.mark.skipif(why_not is not None, reason=f"no GPU for the CUDA path: {why_not}")


def test_stk_dsd_passes_the_check_where_it_applies(tmp_path):
    try:
        stk_triton.load()
    except Unavailable as e:
        pytest.skip(str(e))
    suite = {"defaults": {"m": 512, "k": 384, "n": 256, "block": 128, "dtype": "float16", "devices": ["cuda"],
                          "pattern": {"kind": "uniform", "density": 0.5}},
             "cases": [{}, {"dtype": "bfloat16"}, {"transpose_a": True}, {"layout_b": "col", "layout_c": "col"},
                       {"block": 64}]}
    (tmp_path / "stk.json").write_text(json.dumps(suite))
    doc, _ = runner.run_suite("stk", out_dir=tmp_path / "o", cases_dir=tmp_path, devices=["cuda"],
                              gpu_budget=timing.Budget(2, 5, 10, 0.01), log=print)
    statuses = [next(r for r in c["results"] if r["impl"] == "stk.dsd") for c in doc["cases"]]
    assert [s["status"] for s in statuses] == ["ok"] * 4 + ["unavailable"], statuses
