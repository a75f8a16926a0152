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
            {"dtype": "float64", "block": 4, "m": 256, "k": 256, "n": 16, "pattern": {"kind": "stencil", "dims": 3, "points": 27}},
            {"dtype": "float32", "block": 8, "n": 1, "pattern": {"kind": "banded", "lower": 1, "upper": 1}},
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
    assert first["cusparse.csr"]["status"] == "ok", first["cusparse.csr"]
    stencil, vector = ({r["impl"]: r for r in doc["cases"][i]["results"]} for i in (-2, -1))
    for by in (stencil, vector):  # the legacy bsrmm (N > 1, C column-major) and bsrmv (N = 1)
        assert by["cusparse.bsrmm"]["status"] == "ok", by["cusparse.bsrmm"]
        assert by["cusparse.csr"]["status"] == "ok", by["cusparse.csr"]
    assert doc["environment"]["gpu"]["name"]
    assert doc["environment"]["memory_bandwidth"]["cuda"]["bytes_per_s"] > 1e11
