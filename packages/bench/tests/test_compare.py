"""compare flags an injected 20% slowdown and status regressions, and stays quiet on run-to-run
noise (timings drawn with a few percent of spread, summarised exactly as the runner does)."""

import json

import numpy as np

from bsrmm_bench import compare, timing
from bsrmm_bench.__main__ import main


def fake_doc(rng, slow=None, factor=1.0, sigma=0.03, status=None):
    cases = []
    for i in range(12):
        case_id = f"float16_8192x8192x4096_b{16 << (i % 4)}x{16 << (i % 4)}_uniform-d0.{i + 1}_rr_s1"
        results = []
        for impl, role, base in (("bsrmm", "ours", 1.0 + i), ("cusparse.bsr", "sparse", 5.0 + i)):
            scale = factor if (slow == case_id and impl == "bsrmm") else 1.0
            samples = base * scale * rng.lognormal(0.0, sigma, size=40)
            r = {"impl": impl, "role": role, "label": impl, "status": "ok", "reason": None,
                 "time_ms": timing.summarize(samples.tolist(), "cuda_events")}
            if status and status[0] == case_id and impl == "bsrmm":
                r.update(status=status[1], reason="relative error 0.5 > tolerance 0.001", time_ms=None)
            results.append(r)
        cases.append({"id": case_id, "device": "cuda", "results": results})
    return {"cases": cases}


def test_noise_is_not_flagged():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        old, new = fake_doc(rng), fake_doc(rng)
        outcome = compare.compare(old, new, impls=None)
        assert outcome["regressions"] == [] and outcome["improvements"] == [], seed


def test_injected_20_percent_slowdown_is_flagged():
    rng = np.random.default_rng(1)
    target = "float16_8192x8192x4096_b64x64_uniform-d0.3_rr_s1"
    outcome = compare.compare(fake_doc(rng), fake_doc(rng, slow=target, factor=1.2))
    assert len(outcome["regressions"]) == 1 and target in outcome["regressions"][0]
    assert [r["verdict"] for r in outcome["rows"]].count("SLOWER") == 1


def test_speedup_is_an_improvement_not_a_regression():
    rng = np.random.default_rng(2)
    target = "float16_8192x8192x4096_b16x16_uniform-d0.1_rr_s1"
    outcome = compare.compare(fake_doc(rng), fake_doc(rng, slow=target, factor=0.8))
    assert outcome["regressions"] == [] and len(outcome["improvements"]) == 1


def test_wide_spread_hides_a_small_change():
    rng = np.random.default_rng(3)
    target = "float16_8192x8192x4096_b32x32_uniform-d0.2_rr_s1"
    outcome = compare.compare(fake_doc(rng, sigma=0.3), fake_doc(rng, slow=target, factor=1.2, sigma=0.3))
    assert outcome["regressions"] == []


def test_ok_to_wrong_is_a_regression():
    rng = np.random.default_rng(4)
    target = "float16_8192x8192x4096_b16x16_uniform-d0.5_rr_s1"
    outcome = compare.compare(fake_doc(rng), fake_doc(rng, status=(target, "wrong")))
    assert len(outcome["regressions"]) == 1 and "now wrong" in outcome["regressions"][0]


def test_cli_exit_codes(tmp_path, capsys):
    rng = np.random.default_rng(5)
    target = "float16_8192x8192x4096_b128x128_uniform-d0.4_rr_s1"
    paths = {}
    for name, doc in (("old", fake_doc(rng)), ("noise", fake_doc(rng)), ("slow", fake_doc(rng, slow=target, factor=1.2))):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(doc))
    assert main(["compare", str(paths["old"]), str(paths["noise"])]) == 0
    assert "no regression beyond noise" in capsys.readouterr().out
    assert main(["compare", str(paths["old"]), str(paths["slow"])]) == 1
    assert "1 regression(s)" in capsys.readouterr().out


def with_machine(doc, gpu=None, cpu=None):
    env = {}
    if gpu:
        env["gpu"] = {"name": gpu}
    if cpu:
        env.update(cpu_model=cpu, cpu_affinity=2)
    return {**doc, "environment": env}


def test_different_machines_are_not_compared(tmp_path, capsys):
    rng = np.random.default_rng(6)
    target = "float16_8192x8192x4096_b64x64_uniform-d0.3_rr_s1"
    old = with_machine(fake_doc(rng), gpu="NVIDIA H100 80GB HBM3")
    new = with_machine(fake_doc(rng, slow=target, factor=8.0), gpu="NVIDIA H200")
    outcome = compare.compare(old, new)
    assert outcome["regressions"] == [] and outcome["rows"] == []
    assert len(outcome["mismatched"]) == 1 and "H200" in outcome["mismatched"][0]
    paths = [tmp_path / "old.json", tmp_path / "new.json"]
    for p, doc in zip(paths, (old, new)):
        p.write_text(json.dumps(doc))
    assert main(["compare", *map(str, paths)]) == 0
    captured = capsys.readouterr()
    assert "NOT COMPARED, different machines" in captured.out and "NOT COMPARED" in captured.err


def test_same_machine_is_still_compared():
    rng = np.random.default_rng(7)
    target = "float16_8192x8192x4096_b64x64_uniform-d0.3_rr_s1"
    old = with_machine(fake_doc(rng), gpu="NVIDIA H100 80GB HBM3")
    new = with_machine(fake_doc(rng, slow=target, factor=1.2), gpu="NVIDIA H100 80GB HBM3")
    outcome = compare.compare(old, new)
    assert len(outcome["regressions"]) == 1 and outcome["mismatched"] == []


def test_cpu_results_compare_by_cpu_model_and_cores():
    rng = np.random.default_rng(8)
    doc = fake_doc(rng)
    for record in doc["cases"]:
        record["device"] = "cpu"
    a = with_machine(doc, cpu="Intel Xeon 8480")
    b = with_machine(doc, cpu="AMD EPYC 9654")
    assert compare.compare(a, b)["mismatched"] and compare.compare(a, a)["mismatched"] == []
