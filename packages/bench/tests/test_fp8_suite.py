"""The fp8 suite (issue 27, cases/fp8.json): its cases (the grid in e4m3 and pruned-LLM shapes
at N = 16, 128 and 2048 on CUDA, a tiny one on the CPU), quantisation with one scale per block,
the tiny CPU run end to end (bsrmm's fp8 product, its bfloat16 one and dense bfloat16 checked
against float64 of the dequantised operands; dense cuBLAS fp8 unavailable off CUDA), and a wrong
output caught."""

import json

import pytest

from bsrmm_bench import table, timing
from bsrmm_bench.backends import HostBackend
from bsrmm_bench.impl import Implementation, Prepared
from bsrmm_bench.training import fp8, run, suite

torch = pytest.importorskip("torch")
pytest.importorskip("ml_dtypes", reason="bsrmm's fp8 matrices are built from numpy arrays, which need ml_dtypes")
FAST = timing.Budget(warmup_runs=0, min_runs=2, max_runs=3, seconds=0.01)


def test_cuda_cases_are_the_issues():
    _, cases = suite.load(name="fp8")
    assert {c.kind for c in cases} == {"fp8"}
    cuda = [c for c in cases if c.device == "cuda"]
    grid = [c for c in cuda if (c.params["m"], c.params["k"]) == (8192, 8192)]
    assert {(c.block, c.density, c.params["n"]) for c in grid} == {
        (b, d, 4096) for b in (16, 32, 64, 128) for d in (0.05, 0.125, 0.25, 0.5)}
    llm = [c for c in cuda if c not in grid]
    assert {c.params["n"] for c in llm} == {16, 128, 2048}
    assert {(c.params["m"], c.params["k"]) for c in llm} == {(4096, 4096), (14336, 4096), (4096, 14336)}
    assert all(c.dtype == "bfloat16" for c in cases) and any(c.device == "cpu" for c in cases)


def test_each_block_is_quantised_with_its_own_scale():
    values = torch.randn(3, 4, 4) * torch.tensor([1e-3, 1.0, 1e3])[:, None, None]
    values[2] = 0
    q, scales = fp8.quantise_blocks(values)
    assert q.dtype == torch.float8_e4m3fn and scales.tolist()[2] == 1.0
    assert torch.allclose(q.float().abs().amax(dim=(1, 2))[:2], torch.full((2,), 448.0))
    back = q.float() * scales[:, None, None]
    assert torch.allclose(back, values, rtol=2.0**-4, atol=0)


def test_tiny_cpu_run_checks_every_implementation(tmp_path):
    doc, path = run.run_suite(out_dir=tmp_path, devices=["cpu"], cpu_budget=FAST, log=lambda m: None, name="fp8")
    assert json.loads(path.read_text())["suite"] == "fp8" and path.name.startswith("bench-fp8-")
    (record,) = doc["cases"]
    by = {r["impl"]: r for r in record["results"]}
    for name in ("bsrmm", "bsrmm.bf16", "torch.mm"):
        assert by[name]["status"] == "ok" and by[name]["error"] <= record["reference"]["tolerance"], by[name]
    assert by["torch._scaled_mm"]["status"] == "unavailable" and "CUDA" in by["torch._scaled_mm"]["reason"]
    assert any(note.startswith("variant cpu_") for note in by["bsrmm"]["notes"]), by["bsrmm"]["notes"]
    assert "cpu_bf16_e4m3_256x256x32_b32_d0.5" in table.render(doc)


def test_a_wrong_output_is_reported_wrong():
    (c,) = [c for c in suite.load(name="fp8")[1] if c.device == "cpu"]
    operands = fp8.build(c, "cpu")
    positions, ref = fp8.reference(operands)

    def prepare(o, backend):
        out = o.weight.dense @ o.b_dequantised(torch.float32)
        out[int(positions[0])] *= 1.5  # one checked row off by half
        return Prepared(run=lambda i: None, result=lambda i: out)

    bad = Implementation(name="bad", role="sparse", label="bad", prepare=prepare)
    result = run.measure(bad, operands, HostBackend(FAST), fp8, ref, positions, c.tolerance)
    assert result["status"] == "wrong" and "relative error" in result["reason"], result
