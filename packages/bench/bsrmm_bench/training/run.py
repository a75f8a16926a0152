"""Runs the training suite (and the fp8 suite, whose cases are of kind "fp8"): for each case,
builds its operands on the device, computes the float64 reference, checks every
implementation's output on NaN-poisoned buffers, then times it (CUDA events / perf_counter, as
the product suites). Writes the result JSON of RESULTS.md after each case (records carry
"case.kind": op, mlp, e2e or fp8)."""

from __future__ import annotations

import datetime as _dt
import re
import sys
import time
from pathlib import Path

from .. import env, runner, timing
from ..backends import Unavailable, make_backend
from ..cases import CASES_DIR
from ..summary import summarize
from . import e2e, fp8, mlp, ops, suite

MODULES = {"op": ops, "mlp": mlp, "fp8": fp8}


def relative_error(out, ref) -> float:
    diff = (out.double() - ref).norm().item()
    denom = ref.norm().item()
    return diff / denom if denom > 0 else diff


def non_finite(out) -> int:
    import torch

    parts = out["_full"] if isinstance(out, dict) else (out,)
    return int(sum((~torch.isfinite(p)).sum().item() for p in parts))


def check(out, ref, positions, module, operands) -> float:
    """Worst relative error over the checked parts (one tensor, or every named part of an MLP step)."""
    if isinstance(ref, dict):
        return max(relative_error(out[name], ref[name]) for name in ref)
    return relative_error(module.checked_part(operands, out, positions), ref)


def measure(impl, operands, backend, module, ref, positions, tolerance: float) -> dict:
    """Prepare (untimed), one checked run on NaN-poisoned outputs, then timing if it was right."""
    try:
        prepared = impl.prepare(operands, backend)
    except Unavailable as e:
        return runner._result(impl, "unavailable", reason=str(e))
    except Exception as e:
        return runner._result(impl, "failed", reason=f"prepare: {type(e).__name__}: {e}")
    try:
        if prepared.poison:
            prepared.poison(0)
        prepared.run(0)
        backend.synchronize()
        out = prepared.result(0)
        bad = non_finite(out)
        error = None if bad else check(out, ref, positions, module, operands)
    except Exception as e:
        return runner._result(impl, "failed", reason=f"run: {type(e).__name__}: {e}", notes=prepared.notes)
    base = dict(error=error, non_finite=bad, notes=prepared.notes)
    if bad:
        return runner._result(impl, "wrong", reason=f"{bad} output element(s) NaN/Inf", **base)
    if not error <= tolerance:
        return runner._result(impl, "wrong", reason=f"relative error {error:.3g} > tolerance {tolerance:g}", **base)
    del out
    try:
        stats = backend.time(prepared.run, 1)
    except Exception as e:
        return runner._result(impl, "failed", reason=f"timing: {type(e).__name__}: {e}", **base)
    return runner._result(impl, "ok", time_ms=stats, tflops=operands.flops / (stats["median"] * 1e-3) / 1e12, **base)


def run_product_case(case, backend, log) -> dict:
    """An op or MLP case: every implementation against the float64 reference, then timed."""
    module = MODULES[case.kind]
    operands = module.build(case, backend.device)
    if case.kind == "op":
        positions, ref = module.reference(operands)
        tolerance = case.tolerance
        method = f"float64 on {positions.size} sampled {'blocks' if operands.op == 'weight_grad' else 'rows'}"
    elif case.kind == "fp8":
        positions, ref = module.reference(operands)
        tolerance = case.tolerance
        method = (f"float64 of the dequantised operands on {positions.size} sampled rows; dense fp8 "
                  f"(W re-quantised with one scale) within {fp8.TOLERANCES['torch._scaled_mm']:g}")
    else:
        positions, ref = None, module.reference(operands)
        tolerance = case.tolerance * mlp.TOLERANCE_FACTOR
        method = ("float64 autograd of the dense-masked MLP: y and dx on sampled rows, every weight gradient at its "
                  f"stored blocks; tolerance {mlp.TOLERANCE_FACTOR}x the dtype's (chained products)")
    nnzb = sum(w.nnzb for w in operands.layers.values()) if case.kind == "mlp" else operands.weight.nnzb
    record = _record(case, backend, {"nnzb": nnzb, "density": case.density, "flops": operands.flops,
                                     "dense_flops": operands.dense_flops},
                     {"method": method + "; every output element checked for NaN/Inf (outputs NaN-poisoned first "
                                         "where preallocated)", "tolerance": tolerance})
    for impl in module.IMPLEMENTATIONS:
        allowed = getattr(module, "TOLERANCES", {}).get(impl.name, tolerance)
        record["results"].append(measure(impl, operands, backend, module, ref, positions, allowed))
        log("      " + runner.result_line(record["results"][-1]))
        if backend.device == "cuda":
            backend.torch.cuda.empty_cache()
    return record


def run_e2e_case(case, backend, log) -> dict:
    outcome = e2e.run(case, backend)
    ref_losses, ref_times = outcome["reference"]
    flops = e2e.step_flops(case)
    rate = lambda times: flops / (timing.summarize(times, "")["median"] * 1e-3) / 1e12
    record = _record(case, backend, {"nnzb": None, "density": case.density, "flops": flops, "dense_flops": None},
                     {"method": "loss curve of the dense-masked reference from the same weights and batches",
                      "tolerance": case.params["loss_rtol"]})
    from ..impl import Implementation

    ours_impl = Implementation(name="bsrmm", role="ours", label="bsrmm BsrLinear", prepare=None)
    ref_impl = Implementation(name="dense_masked", role="dense", label="dense-masked reference", prepare=None)
    record["results"].append(runner._result(ref_impl, "ok", time_ms=timing.summarize(ref_times, "perf_counter per step"), tflops=rate(ref_times),
                                            curve=e2e.curve_sample(ref_losses)))
    if isinstance(outcome["ours"], Exception):
        record["results"].insert(0, runner._result(ours_impl, "unavailable", reason=str(outcome["ours"])))
    else:
        losses, times = outcome["ours"]
        verdict = e2e.compare(losses, ref_losses, case.params["loss_rtol"])
        status = "ok" if verdict["agree"] else "wrong"
        reason = None if verdict["agree"] else f"loss curves disagree or did not fall: {verdict}"
        record["results"].insert(0, runner._result(ours_impl, status, reason=reason, error=verdict["max_rel_gap"],
                                                   time_ms=timing.summarize(times, "perf_counter per step"), tflops=rate(times),
                                                   curve=e2e.curve_sample(losses), verdict=verdict))
    for r in record["results"]:
        log("      " + runner.result_line(r))
    return record


def _record(case, backend, operands: dict, reference: dict) -> dict:
    return {"id": case.id, "device": backend.device, "case": case.to_json(), "operands": operands,
            "reference": reference, "results": []}


def run_suite(*, out_dir: Path, devices: list[str] | None = None, case_filter: str | None = None,
              cases_dir: Path = CASES_DIR, log=None, cpu_budget=timing.CPU_BUDGET, gpu_budget=timing.GPU_BUDGET,
              time_budget: float | None = None, name: str = "training") -> tuple[dict, Path]:
    """The suite cases/<name>.json ("training" or "fp8")."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    spec, cases = suite.load(cases_dir, name)
    cases = [c for c in cases if not case_filter or re.search(case_filter, c.id)]
    wanted = devices or ["cpu", "cuda"]
    started = _dt.datetime.now(_dt.timezone.utc)
    cuda_why_not = runner.cuda_status()
    doc = {"schema": runner.SCHEMA, "schema_version": runner.SCHEMA_VERSION, "suite": name, "filter": case_filter,
           "devices": wanted, "started": started.isoformat(timespec="seconds"), "finished": None,
           "settings": {"cpu_budget": cpu_budget.__dict__, "gpu_budget": gpu_budget.__dict__, "time_budget_s": time_budget},
           "environment": env.capture("cuda" if "cuda" in wanted and cuda_why_not is None else "cpu"),
           "skipped": [], "cases": []}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"bench-{name}-{started.strftime('%Y%m%d-%H%M%S')}.json"
    plan = []
    for device in wanted:
        on_device = [c for c in cases if c.device == device]
        if device == "cuda" and cuda_why_not and on_device:
            doc["skipped"].append({"device": device, "cases": [c.id for c in on_device], "reason": cuda_why_not})
            log(f"skipping {len(on_device)} cuda case(s): {cuda_why_not}")
            continue
        plan += on_device
    backends: dict = {}
    t_start = time.perf_counter()
    for position, case in enumerate(plan, start=1):
        elapsed = time.perf_counter() - t_start
        if time_budget is not None and elapsed > time_budget:
            left = plan[position - 1:]
            doc["skipped"].append({"device": "/".join(dict.fromkeys(c.device for c in left)), "cases": [c.id for c in left],
                                   "reason": f"time budget of {time_budget:g} s spent ({elapsed:.0f} s)"})
            break
        if case.device not in backends:
            backends[case.device] = make_backend(case.device, cpu_budget, gpu_budget)
        backend = backends[case.device]
        log(f"[{position}/{len(plan)}] {case.device} {case.id}  (+{elapsed:.0f} s)")
        t0 = time.perf_counter()
        record = (run_e2e_case if case.kind == "e2e" else run_product_case)(case, backend, log)
        record["summary"] = summarize(record)
        record["seconds"] = round(time.perf_counter() - t0, 3)
        doc["cases"].append(record)
        log("    " + runner.progress_line(record))
        runner._write(doc, path)
    doc["environment"]["threads"].update(env.thread_counts())
    doc["finished"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    runner._write(doc, path)
    return doc, path
