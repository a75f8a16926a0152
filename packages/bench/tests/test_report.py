"""Report: markdown, HTML and every plot in PNG and SVG are produced and are not blank, with
and without bsrmm results."""

import numpy as np
import pytest

from bsrmm_bench import report, runner
from bsrmm_bench.__main__ import main

from helpers import ALL, FAST, write_tiny_suite


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    d = tmp_path_factory.mktemp("rep")
    suite = write_tiny_suite(d)
    return runner.run_suite(suite, out_dir=d / "out", cases_dir=d, cpu_budget=FAST,
                            implementations=lambda dev: ALL, log=lambda m: None)


def assert_not_blank(png):
    import matplotlib.image as mpimg

    pixels = mpimg.imread(png)
    assert pixels.shape[0] > 100 and pixels.shape[1] > 300
    rgb = pixels[..., :3]
    assert (rgb < 0.5).mean() > 0.002, f"{png} looks blank"
    assert len(np.unique(rgb.reshape(-1, 3), axis=0)) > 20, f"{png} has almost no colours"


def test_report_files_through_the_cli(result, tmp_path, capsys):
    doc, path = result
    out = tmp_path / "r"
    assert main(["report", str(path), "--out", str(out)]) == 0
    assert "report:" in capsys.readouterr().out
    for name in report.PLOTS:
        assert_not_blank(out / f"{name}.png")
        assert not (out / f"{name}.svg").exists()  # the SVGs live in report.html only
    md = (out / "report.md").read_text()
    assert "float32_64x96x8_b8x8_uniform-d0.25_rr_s1" in md and "rate_vs_density.png" in md
    page = (out / "report.html").read_text()
    assert page.count("<svg") == len(report.PLOTS) and "<table>" in page and "fake_variant_f32" in page


def test_density_families(result):
    fams = report.families(result[0])
    (label,) = fams
    assert label == "cpu float32 64x96x8 uniform"
    assert sorted(fams[label]) == ["16", "8"] and [d for d, _ in fams[label]["8"]] == [0.25, 0.5]


def test_report_without_bsrmm_results_still_renders(result, tmp_path):
    doc = {**result[0], "cases": [
        {**c, "results": [r for r in c["results"] if r["role"] != "ours"],
         "summary": {**c["summary"], "speedup_vs_best_peer": None, "speedup_vs_dense": None}}
        for c in result[0]["cases"]]}
    out = report.write(doc, tmp_path / "r")
    for name in report.PLOTS:
        assert_not_blank(out / f"{name}.png")

