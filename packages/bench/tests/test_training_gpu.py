"""The training suite's CUDA path on small cases (block 128 so STK applies): bsrmm, STK and the
dense peers checked against float64 for each op, an MLP step (plain and gated) and a short
training run. Skips with the reason when no CUDA device is usable (CI, laptops); STK is reported
unavailable with its reason unless staged (.carry/stk, experiments/stage-stk.sh)."""

import json

import pytest

from bsrmm_bench import ours, runner, timing
from bsrmm_bench.backends import Unavailable
from bsrmm_bench.peers import stk_triton
from bsrmm_bench.training import run

why_not = runner.cuda_status()
pytestmark = pytest.mark.skipif(why_not is not None, reason=f"no GPU for the CUDA path: {why_not}")
QUICK_GPU = timing.Budget(warmup_runs=2, min_runs=5, max_runs=10, seconds=0.01)
SMALL = {"suite": "training", "cases": [
    {"kind": "op", "device": "cuda", "dtype": "bfloat16", "seed": 1, "m": 512, "k": 384, "n": 256,
     "vary": {"op": ["forward", "input_grad", "weight_grad"], "block": [64, 128], "density": [0.5]}},
    {"kind": "mlp", "device": "cuda", "dtype": "bfloat16", "seed": 2, "d_model": 256, "d_ff": 768, "tokens": 384,
     "vary": {"mlp": ["plain", "gated"], "block": [128], "density": [0.5]}},
    {"kind": "e2e", "device": "cuda", "dtype": "float32", "seed": 3, "d_in": 128, "d_hidden": 512, "d_out": 128,
     "batch": 256, "steps": 100, "lr": 2.0, "loss_rtol": 0.001, "vary": {"block": [64], "density": [0.5]}}]}


def test_small_cuda_training_suite(tmp_path):
    (tmp_path / "training.json").write_text(json.dumps(SMALL))
    doc, _ = run.run_suite(out_dir=tmp_path / "o", devices=["cuda"], cases_dir=tmp_path, gpu_budget=QUICK_GPU, log=print)
    try:
        ours_expected = "ok" if ours.load().cuda_available() else "unavailable"
    except Unavailable:
        ours_expected = "unavailable"
    try:
        stk_triton.load()
        stk_expected = "ok"
    except Unavailable:
        stk_expected = "unavailable"
    assert len(doc["cases"]) == 6 + 2 + 1
    for record in doc["cases"]:
        by = {r["impl"]: r for r in record["results"]}
        assert by["bsrmm"]["status"] == ours_expected, (record["id"], by["bsrmm"])
        if record["case"]["kind"] == "e2e":
            assert by["dense_masked"]["status"] == "ok"
            continue
        dense = by["torch.mm" if record["case"]["kind"] == "op" else "torch.linear"]
        assert dense["status"] == "ok", (record["id"], dense)
        wanted = stk_expected if record["case"]["block"] == [128, 128] else "unavailable"
        assert by["stk"]["status"] == wanted, (record["id"], by["stk"])
