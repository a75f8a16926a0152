"""Suite files: they load, expand in the stated order, name cases stably, and contain what the
project's claims need."""

import json

import pytest

from bsrmm_bench import cases


def test_every_suite_loads_with_unique_ids():
    for suite in cases.available_suites():
        loaded = cases.load_suite(suite)
        assert loaded, suite
        assert len({c.id for c in loaded}) == len(loaded)


def test_quick_has_the_cpu_claim_cases():
    quick = [c for c in cases.load_suite("quick") if "cpu" in c.devices]
    got = {(c.block, c.pattern["density"]) for c in quick
           if (c.m, c.k, c.n, c.dtype, c.pattern["kind"]) == (4096, 4096, 256, "float32", "uniform")}
    assert got == {((b, b), d) for b in (16, 32, 64) for d in (0.05, 0.25)}
    assert any("cuda" in c.devices for c in cases.load_suite("quick"))


def test_grid_is_the_perf_grid():
    grid = cases.load_suite("grid")
    main = {(c.dtype, c.block[0], c.pattern["density"]) for c in grid if (c.m, c.k, c.n) == (8192, 8192, 4096)}
    assert main == {(t, b, d) for t in ("float16", "bfloat16") for b in (16, 32, 64, 128) for d in (0.05, 0.125, 0.25, 0.5)}
    assert any((c.m, c.k, c.n, c.block, c.pattern["density"]) == (4096, 4096, 4096, (64, 64), 0.125) for c in grid)


def test_shapes_cover_the_issue_list():
    shapes = cases.load_suite("shapes")
    assert {16, 64, 256} <= {c.n for c in shapes}
    assert any(c.m > c.k for c in shapes) and any(c.m < c.k for c in shapes)
    assert any(c.block[0] != c.block[1] for c in shapes)
    kinds = {c.pattern["kind"] for c in shapes}
    assert {"uniform", "power_law", "causal", "banded", "block_diagonal", "topk", "bernoulli"} <= kinds
    assert any(c.transpose_a for c in shapes) and any(c.layout_b == "col" for c in shapes)


def test_blocks_cross_non_square_blocks_with_the_grid_densities():
    blocks = cases.load_suite("blocks")
    got = {(c.block, c.pattern["density"]) for c in blocks if (c.m, c.k, c.n) == (8192, 8192, 4096)}
    shapes = {b for b, _ in got}
    assert all(h != w for h, w in shapes) and {(64, 32), (128, 64), (32, 64)} <= shapes
    assert got == {(b, d) for b in shapes for d in (0.05, 0.125, 0.25, 0.5)}


def test_full_includes_every_other_suite():
    full = {c.id for c in cases.load_suite("full")}
    for suite in ("quick", "grid", "shapes", "blocks"):
        assert {c.id for c in cases.load_suite(suite)} <= full


def test_vary_expands_first_path_outermost():
    entry = {"m": 64, "vary": [["block", [16, 32]], ["pattern.density", [0.1, 0.2]]]}
    got = [(f["block"], f["pattern"]["density"]) for f in cases.expand_entry(entry)]
    assert got == [(16, 0.1), (16, 0.2), (32, 0.1), (32, 0.2)]


def make(**fields):
    base = {**cases._DEFAULTS, "m": 64, "k": 128, "n": 8, "block": 16, "dtype": "float16",
            "pattern": {"kind": "uniform", "density": 0.25}}
    return cases.make_case({**base, **fields})


def test_case_id_format():
    assert make().id == "float16_64x128x8_b16x16_uniform-d0.25_rr_s1"
    c = make(dtype="float32", f32_mode="tf32", block=[16, 32], transpose_a=True, layout_b="col",
             pattern={"kind": "power_law", "alpha": 1.0, "density": 0.5}, seed=9)
    assert c.id == "float32-tf32_64x128x8_b16x32_power_law-a1-d0.5_cr_tA_s9"
    assert c.stored_shape == (128, 64) and c.block_grid == (8, 2) and c.tolerance == 1e-3


def test_conformance_fields_extend_the_id_only_when_set():
    plain = make(layout_c="col")
    assert plain.is_plain_product and plain.ld_b == 8 and plain.ld_c == 64
    c = make(layout_c="col", alpha=1.5, beta=-0.5, bias=True, activation="gelu", pad_b=3, pad_c=2)
    assert c.id == plain.id + "_alpha1.5_beta-0.5_bias_gelu_pb3_pc2"
    assert not c.is_plain_product and c.ld_b == 11 and c.ld_c == 66
    assert make(alpha=2.0).id.endswith("_s1_alpha2")


def test_the_bench_skips_conformance_only_cases(tmp_path):
    (tmp_path / "mixed.json").write_text(json.dumps({"cases": [
        {"m": 16, "k": 16, "n": 4, "block": 8, "dtype": "float32", "devices": ["cpu"],
         "pattern": {"kind": "uniform", "density": 0.5}, "vary": [["beta", [0, 1]]]}]}))
    from bsrmm_bench import runner

    doc, _ = runner.run_suite("mixed", out_dir=tmp_path / "out", devices=["cpu"], cases_dir=tmp_path,
                              implementations=lambda device: [], log=lambda msg: None)
    assert [c["id"] for c in doc["cases"]] == ["float32_16x16x4_b8x8_uniform-d0.5_rr_s1"]
    assert doc["skipped"][0]["cases"] == ["float32_16x16x4_b8x8_uniform-d0.5_rr_s1_beta1"]


@pytest.mark.parametrize("fields,message", [
    ({"m": 60}, "divisible"),
    ({"dtype": "int8"}, "dtype"),
    ({"f32_mode": "tf32"}, "tf32"),
    ({"layout_b": "diag"}, "layout_b"),
    ({"devices": []}, "devices"),
    ({"colour": 1}, "unknown field"),
    ({"pattern": {"kind": "zigzag"}}, "pattern.kind"),
    ({"alpha": float("nan")}, "alpha must be a finite number"),
    ({"beta": "1"}, "beta must be a finite number"),
    ({"bias": 1}, "bias must be true or false"),
    ({"activation": "tanh"}, "activation must be one of"),
    ({"pad_c": -1}, "pad_c must be a non-negative integer"),
])
def test_bad_cases_say_what_is_wrong(fields, message):
    with pytest.raises(ValueError, match=message):
        make(**fields)


def test_suite_errors(tmp_path):
    (tmp_path / "loop.json").write_text(json.dumps({"include": ["loop"]}))
    with pytest.raises(ValueError, match="includes itself"):
        cases.load_suite("loop", tmp_path)
    with pytest.raises(ValueError, match="no suite 'absent'"):
        cases.load_suite("absent", tmp_path)
    (tmp_path / "bad.json").write_text(json.dumps({"cases": [{"vary": {"block": [1]}}]}))
    with pytest.raises(ValueError, match="vary must be"):
        cases.load_suite("bad", tmp_path)
