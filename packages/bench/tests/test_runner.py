"""The runner on a tiny CPU suite: every status (ok, wrong, failed, unavailable) is reached and
reported with its reason; nothing is dropped; the JSON is strict (no NaN) and complete."""

import json
from pathlib import Path

import pytest

from bsrmm_bench import ours, peers, runner, table
from bsrmm_bench.__main__ import main

from helpers import ALL, FAST, write_tiny_suite


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("bench")
    suite = write_tiny_suite(d)
    doc, path = runner.run_suite(suite, out_dir=d / "out", cases_dir=d, cpu_budget=FAST, implementations=lambda dev: ALL,
                                 log=lambda msg: None)
    return doc, path


def test_every_status_with_reason(tiny_run):
    doc, _ = tiny_run
    assert len(doc["cases"]) == 5
    for record in doc["cases"]:
        status = {r["impl"]: r for r in record["results"]}
        assert [r["impl"] for r in record["results"]] == [i.name for i in ALL]
        assert status["bsrmm"]["status"] == "ok" and status["bsrmm"]["variant"] == "fake_variant_f32"
        assert status["bsrmm"]["error"] < 1e-6 and status["bsrmm"]["time_ms"]["runs"] >= 3
        assert status["scipy.bsr"]["status"] == "ok" and status["numpy.dense"]["status"] == "ok"
        assert status["lazy"]["status"] == "wrong" and "NaN" in status["lazy"]["reason"]
        assert status["off"]["status"] == "wrong" and "tolerance" in status["off"]["reason"]
        assert status["boom"]["status"] == "failed" and "kernel launch failed" in status["boom"]["reason"]
        assert status["absent"]["status"] == "unavailable" and "no such library" in status["absent"]["reason"]
        assert status["crash"]["status"] == "failed" and status["crash"]["reason"].startswith("prepare: KeyError")
        for r in record["results"]:
            assert (r["time_ms"] is not None) == (r["status"] == "ok")  # only checked results are timed
        s = record["summary"]
        fastest = min(("scipy.bsr", "numpy.dense"), key=lambda name: status[name]["time_ms"]["median"])
        assert s["best_peer"] == fastest and s["dense_peer"] == "numpy.dense"  # best of ALL peers
        assert s["best_sparse_peer"] == "scipy.bsr"
        assert s["speedup_vs_best_peer"] == pytest.approx(s["best_peer_ms"] / s["ours_ms"])
        assert s["bytes_moved"] == record["operands"]["bytes_per_set"] and s["bandwidth_fraction"] > 0
        assert record["reference"]["rows_checked"] == 64 and record["operands"]["rotation_sets"] == 1


def test_result_file_is_strict_json(tiny_run):
    doc, path = tiny_run
    text = path.read_text()
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}")) == doc
    assert doc["schema"] == runner.SCHEMA and doc["finished"]
    assert doc["environment"]["versions"]["numpy"]


def test_table_shows_statuses_and_reasons(tiny_run):
    text = table.render(tiny_run[0])
    assert "WRONG" in text and "FAILED" in text and "n/a" in text
    assert "no such library on this machine" in text and "fake_variant_f32" in text


def test_filter_selects_by_regular_expression(tmp_path):
    suite = write_tiny_suite(tmp_path)
    assert len(runner.select(runner.cases_mod.load_suite(suite, tmp_path), "b16x16")) == 2
    assert len(runner.select(runner.cases_mod.load_suite(suite, tmp_path), r"d0\.(25|3)")) == 3


def test_cases_of_an_absent_device_are_listed_as_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "cuda_status", lambda: "torch sees no CUDA device")
    (tmp_path / "gpu.json").write_text(json.dumps({"cases": [
        {"m": 64, "k": 64, "n": 8, "block": 16, "dtype": "float16", "devices": ["cuda"],
         "pattern": {"kind": "uniform", "density": 0.5}}]}))
    doc, _ = runner.run_suite("gpu", out_dir=tmp_path / "o", cases_dir=tmp_path, log=lambda m: None)
    assert doc["cases"] == []
    assert doc["skipped"] == [{"device": "cuda", "cases": ["float16_64x64x8_b16x16_uniform-d0.5_rr_s1"],
                               "reason": "torch sees no CUDA device"}]
    assert "skipped 1 cuda case(s): torch sees no CUDA device" in table.render(doc)


def test_default_implementations_on_cpu(tmp_path):
    suite = write_tiny_suite(tmp_path)
    doc, _ = runner.run_suite(suite, out_dir=tmp_path / "o", cases_dir=tmp_path, case_filter="topk", cpu_budget=FAST,
                              log=lambda m: None)
    (record,) = doc["cases"]
    names = [r["impl"] for r in record["results"]]
    assert names == ["bsrmm"] + [p.name for p in peers.for_device("cpu")]
    mine = record["results"][0]
    try:
        ours.load()
    except ours.Unavailable:
        assert mine["status"] == "unavailable" and "bsrmm is not importable" in mine["reason"]
    else:
        assert mine["status"] == "ok", mine["reason"]
    for r in record["results"][1:]:
        # every peer runs, or says why not (torch or MKL absent here; MKL BSR takes square blocks only)
        assert r["status"] == "ok" or (r["status"] == "unavailable" and r["reason"]), r
    assert {r["impl"] for r in record["results"] if r["status"] == "ok"} >= {"scipy.bsr", "scipy.csr", "numpy.dense"}
    assert doc["environment"]["threads"]["usable_cores"] >= 1 and "threadpools" in doc["environment"]["threads"]


def test_cli_run_and_list(tmp_path, capsys):
    suite = write_tiny_suite(tmp_path)
    code = main(["run", "--suite", suite, "--cases-dir", str(tmp_path), "--out", str(tmp_path / "o"), "--filter", "b8x8_uniform-d0.25"])
    out = capsys.readouterr().out
    assert code == 0 and "result:" in out and "scipy BSR ms" in out and "x best peer" in out and "implementations:" in out
    assert main(["list", "--suite", "quick"]) == 0
    assert "float32_4096x4096x256_b16x16_uniform-d0.05_rr_s1" in capsys.readouterr().out


def test_cli_peers_narrows_the_implementations(tmp_path, capsys):
    suite = write_tiny_suite(tmp_path)
    args = ["run", "--suite", suite, "--cases-dir", str(tmp_path), "--out", str(tmp_path / "o"), "--filter", "b8x8_uniform-d0.25"]
    assert main(args + ["--peers", "none"]) == 0
    doc = json.loads(Path(capsys.readouterr().out.split("result: ")[1].split()[0]).read_text())
    assert {r["impl"] for c in doc["cases"] for r in c["results"]} == {"bsrmm"}
    assert main(args + ["--peers", "scipy.csr"]) == 0
    doc = json.loads(Path(capsys.readouterr().out.split("result: ")[1].split()[0]).read_text())
    assert {r["impl"] for c in doc["cases"] for r in c["results"]} == {"bsrmm", "scipy.csr"}
    with pytest.raises(SystemExit, match="unknown peer"):
        main(args + ["--peers", "scipy.nope"])


def test_progress_is_printed_as_work_happens(tmp_path):
    suite = write_tiny_suite(tmp_path)
    lines = []
    runner.run_suite(suite, out_dir=tmp_path / "o", cases_dir=tmp_path, cpu_budget=FAST, case_filter="topk",
                     implementations=lambda dev: ALL[:3], log=lines.append)
    assert lines[0].startswith("case ids: {dtype}")  # the id's fields, explained once
    assert any(line.startswith("cpu: memory bandwidth") for line in lines)
    assert any(line.startswith("[1/1] cpu ") for line in lines)
    assert any(line.strip().startswith("scipy BSR: ") and "ms" in line for line in lines)  # each result as it lands


def test_a_time_budget_stops_starting_cases_and_lists_the_rest(tmp_path):
    suite = write_tiny_suite(tmp_path)
    doc, _ = runner.run_suite(suite, out_dir=tmp_path / "o", cases_dir=tmp_path, cpu_budget=FAST, time_budget=0.0,
                              implementations=lambda dev: ALL[:2], log=lambda m: None)
    assert doc["cases"] == []  # no case starts once the budget is spent
    (skipped,) = doc["skipped"]
    assert len(skipped["cases"]) == 5 and "time budget of 0 s spent" in skipped["reason"]
    assert doc["finished"] and doc["settings"]["time_budget_s"] == 0.0


def test_a_run_tunes_on_a_fresh_cache_unless_one_is_given(tmp_path, monkeypatch):
    """bsrmm's tuned choices persist across processes; a run starts from an empty cache of its own
    (a temporary file, gone afterwards, the variable restored) unless $BSRMM_TUNING_CACHE names one."""
    import os

    monkeypatch.delenv("BSRMM_TUNING_CACHE", raising=False)
    seen = []
    with runner.tuning_cache_of_run() as where:
        seen.append(os.environ["BSRMM_TUNING_CACHE"])
        assert where == "fresh for this run (empty at its start)"
        assert not os.path.exists(seen[0]) and os.path.isdir(os.path.dirname(seen[0]))
    assert "BSRMM_TUNING_CACHE" not in os.environ and not os.path.exists(os.path.dirname(seen[0]))

    given = str(tmp_path / "mine.json")
    monkeypatch.setenv("BSRMM_TUNING_CACHE", given)
    with runner.tuning_cache_of_run() as where:
        assert where == given and os.environ["BSRMM_TUNING_CACHE"] == given
    assert os.environ["BSRMM_TUNING_CACHE"] == given


def test_the_result_names_its_tuning_cache(tiny_run):
    assert tiny_run[0]["settings"]["tuning_cache"] in ("fresh for this run (empty at its start)",
                                                       __import__("os").environ.get("BSRMM_TUNING_CACHE"))
