"""The GPU path end to end on small cases: every peer reports a status (never silently absent),
cuBLAS and the cuSPARSE BSR peer pass the check, and bsrmm does where it is built with CUDA.
Skips with the reason when no CUDA device is usable (CI, laptops)."""

import json

import pytest

from bsrmm_bench import ours, peers, runner, timing

why_not = runner.cuda_status()
pytestmark = pytest.mark.skipif(why_not is not None, reason=f"no GPU for the CUDA path: {why_not}")

QUICK_GPU = timing.Budget(warmup_runs=2, min_runs=5, max_runs=10, seconds=0.01)


def test_cuda_cases_check_every_implementation(tmp_path):
    suite = {
        "defaults": {"m": 256, "k": 512, "n": 64, "block": 32, "dtype": "float16", "devices": ["cuda"],
                     "pattern": {"kind": "uniform", "density": 0.25}},
        "cases": [
            {},
            {"dtype": "bfloat16"},
            {"dtype": "float32"},
            {"dtype": "float32", "f32_mode": "tf32"},
            {"transpose_a": True, "layout_b": "col", "layout_c": "col"},
            {"block": [16, 32], "pattern": {"kind": "power_law", "alpha": 1, "density": 0.25}},
        ],
    }
    (tmp_path / "gpu.json").write_text(json.dumps(suite))
    doc, _ = runner.run_suite("gpu", out_dir=tmp_path / "o", cases_dir=tmp_path, devices=["cuda"],
                              gpu_budget=QUICK_GPU, log=print)
    assert len(doc["cases"]) == len(suite["cases"])
    names = ["bsrmm"] + [p.name for p in peers.for_device("cuda")]
    try:
        bsrmm = ours.load()
        ours_expected = "ok" if bsrmm.cuda_available() else "unavailable"
    except ours.Unavailable:
        ours_expected = "unavailable"
    for record in doc["cases"]:
        by = {r["impl"]: r for r in record["results"]}
        assert list(by) == names
        for r in record["results"]:
            assert r["status"] in ("ok", "wrong", "failed", "unavailable")
            assert (r["reason"] is None) == (r["status"] == "ok"), r
        assert by["torch.dense"]["status"] == "ok", by["torch.dense"]
        assert by["bsrmm"]["status"] == ours_expected, by["bsrmm"]
        assert record["reference"]["rows_checked"] == 256
    first = {r["impl"]: r for r in doc["cases"][0]["results"]}
    assert first["cusparse.bsr"]["status"] == "ok", first["cusparse.bsr"]
    assert first["cusparse.blocked_ell"]["status"] == "ok", first["cusparse.blocked_ell"]
    assert doc["environment"]["gpu"]["name"]
