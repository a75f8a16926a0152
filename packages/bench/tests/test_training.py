"""The training suite on the CPU: its cases (the issue's sizes on CUDA, tiny ones on the CPU),
the weights' BSR arrays, the tiny CPU run end to end (every check passes, the loss curves of
BsrLinear and the dense-masked reference agree, the report renders), and the checks catching a
wrong output and diverging curves."""

import json

import numpy as np
import pytest

from bsrmm_bench import ours, report, table, timing
from bsrmm_bench.backends import HostBackend, Unavailable
from bsrmm_bench.impl import Implementation, Prepared
from bsrmm_bench.training import e2e, ops, run, suite, weights

torch = pytest.importorskip("torch")
FAST = timing.Budget(warmup_runs=0, min_runs=2, max_runs=3, seconds=0.01)


def bsrmm_torch_or_reason():
    try:
        ours.load_torch()
        return None
    except Unavailable as e:
        return str(e)


def test_cuda_cases_are_the_issues_sizes():
    _, cases = suite.load()
    cuda = [c for c in cases if c.device == "cuda"]
    op_cases = [c for c in cuda if c.kind == "op"]
    assert {(c.params["op"], c.block, c.density) for c in op_cases} == {
        (o, b, d) for o in suite.OPS for b in (64, 128) for d in (0.125, 0.25, 0.5)}
    assert all((c.params["m"], c.params["k"], c.params["n"], c.dtype) == (8192, 8192, 4096, "bfloat16") for c in op_cases)
    mlps = [c for c in cuda if c.kind == "mlp"]
    assert {(c.params["mlp"], c.block, c.density) for c in mlps} == {
        (m, b, d) for m in suite.MLPS for b in (64, 128) for d in (0.125, 0.25, 0.5)}
    assert all((c.params["d_model"], c.params["d_ff"], c.params["tokens"]) == (4096, 14336, 8192) for c in mlps)
    assert any(c.kind == "e2e" for c in cuda)
    assert {c.kind for c in cases if c.device == "cpu"} == set(suite.TRAINING_KINDS)


def test_suite_rejects_an_unknown_op():
    with pytest.raises(ValueError, match="op must be one of"):
        suite.expand({"kind": "op", "device": "cpu", "dtype": "float32", "block": 8, "density": 0.5, "seed": 1,
                      "m": 8, "k": 8, "n": 8, "vary": {"op": ["backward"]}})


def test_weight_bsr_arrays_hold_the_dense_weights_blocks():
    gen = weights.generator("cpu", 5)
    w = weights.random_weight(48, 64, 16, 0.5, gen, torch.float32)
    assert w.nnzb == 3 * 2 and np.all(np.diff(w.indptr) == 2)
    assert torch.equal(weights.gather_blocks(w.dense, w), w.values)
    rebuilt = torch.zeros_like(w.dense)
    for j, (r, c) in enumerate(zip(w.block_rows(), w.indices)):
        rebuilt[r * 16:(r + 1) * 16, c * 16:(c + 1) * 16] = w.values[j]
    assert torch.equal(rebuilt, w.dense)


def test_tiny_cpu_run_checks_every_implementation_and_the_curves_agree(tmp_path):
    why_not = bsrmm_torch_or_reason()
    doc, path = run.run_suite(out_dir=tmp_path, devices=["cpu"], cpu_budget=FAST, log=lambda m: None)
    assert json.loads(path.read_text())["suite"] == "training"
    assert {c["case"]["kind"] for c in doc["cases"]} == set(suite.TRAINING_KINDS)
    for record in doc["cases"]:
        by = {r["impl"]: r for r in record["results"]}
        assert by["bsrmm"]["status"] == ("ok" if why_not is None else "unavailable"), (record["id"], by["bsrmm"])
        if record["case"]["kind"] != "e2e":
            assert by["stk"]["status"] == "unavailable" and "CUDA" in by["stk"]["reason"]
            dense = by["torch.mm" if record["case"]["kind"] == "op" else "torch.linear"]
            assert dense["status"] == "ok" and dense["error"] <= record["reference"]["tolerance"]
        if why_not is None and record["case"]["kind"] == "e2e":
            verdict = by["bsrmm"]["verdict"]
            assert verdict["agree"] and verdict["ours_fell"] and verdict["reference_fell"]
    assert "cpu_f32_mlp-gated" in table.render(doc)
    assert (report.write(doc, tmp_path / "report") / "report.md").read_text().startswith("# bsrmm benchmark")


def test_a_wrong_output_is_reported_wrong():
    (c,) = [c for c in suite.load()[1] if c.device == "cpu" and c.kind == "op" and c.params["op"] == "weight_grad"]
    operands = ops.build(c, "cpu")
    positions, ref = ops.reference(operands)  # the first stored block is among the checked ones
    b = operands.weight.block
    corner = (int(operands.weight.block_rows()[0]) * b, int(operands.weight.indices[0]) * b)

    def prepare(o, backend):
        out = torch.mm(o.dy, o.x.T)
        out[corner] += 10.0  # one element off, in the first stored block
        return Prepared(run=lambda i: None, result=lambda i: out)

    bad = Implementation(name="bad", role="sparse", label="bad", prepare=prepare)
    result = run.measure(bad, operands, HostBackend(FAST), ops, ref, positions, c.tolerance)
    assert result["status"] == "wrong" and "relative error" in result["reason"], result
    good = Implementation(name="good", role="dense", label="good", prepare=ops.DENSE.prepare)
    assert run.measure(good, operands, HostBackend(FAST), ops, ref, positions, c.tolerance)["status"] == "ok"


def test_diverging_or_flat_curves_do_not_agree():
    ref = list(np.linspace(1.0, 0.1, 100))
    assert e2e.compare(ref, ref, 1e-3)["agree"]
    off = ref[:50] + [v * 1.01 for v in ref[50:]]
    assert not e2e.compare(off, ref, 1e-3)["agree"]
    flat = [1.0] * 100
    assert not e2e.compare(flat, flat, 1e-3)["agree"]
