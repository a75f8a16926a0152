"""Runs a suite: for every case and device, builds the operands once, computes the float64
reference, then checks and times ours and every peer on the same operands. The result document
(RESULTS.md) is rewritten after each case, so a run cut short still leaves its finished cases."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from . import cases as cases_mod
from . import env, operands, ours, peers, timing
from .summary import summarize
from .backends import Unavailable, make_backend
from .impl import Implementation

SCHEMA = "bsrmm-bench/result"
SCHEMA_VERSION = 1


def select(cases: list[cases_mod.Case], pattern: str | None) -> list[cases_mod.Case]:
    """Cases whose id matches the regular expression `pattern` (search, not full match)."""
    if not pattern:
        return cases
    rx = re.compile(pattern)
    return [c for c in cases if rx.search(c.id)]


def cuda_status() -> str | None:
    """None when CUDA cases can run here, else why not."""
    try:
        import torch
    except Exception as e:
        return (f"torch is not importable ({type(e).__name__}: {e}); GPU timing and peers need it (the bootstrap "
                f"installs it on every machine: tools/toolchain/requirements/torch.txt)")
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


CACHE_VARIABLE = "BSRMM_TUNING_CACHE"


def run_suite(suite: str, **kwargs) -> tuple[dict, Path]:
    """Runs the suite (see _run_suite) on a tuning cache of its own, unless $BSRMM_TUNING_CACHE
    names one: bsrmm keeps its tuned choices across processes, and a choice made while the
    machine was busy stays (on the 2-core host the coverage suite timed bsrmm on choices of one
    thread cached under the previous day's load: a 2x2 f32 N = 128 product 0.63 ms on 1 thread,
    0.39 ms on 2; docs/perf-log.md entry 59), so a run starts from an empty cache and tunes what
    it measures. The result's settings name the cache."""
    with tuning_cache_of_run() as where:
        doc, path = _run_suite(suite, tuning_cache=where, **kwargs)
    return doc, path


@contextlib.contextmanager
def tuning_cache_of_run():
    """Yields the tuning cache bsrmm uses for this run: the caller's $BSRMM_TUNING_CACHE, or a
    fresh file in a temporary directory (removed afterwards, the variable restored)."""
    given = os.environ.get(CACHE_VARIABLE)
    if given:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="bsrmm-bench-tuning-") as folder:
        os.environ[CACHE_VARIABLE] = str(Path(folder) / "tuning.json")
        try:
            yield "fresh for this run (empty at its start)"
        finally:
            os.environ.pop(CACHE_VARIABLE, None)


def _run_suite(
    suite: str,
    *,
    out_dir: Path,
    devices: list[str] | None = None,
    case_filter: str | None = None,
    tuning: str = "auto",
    cpu_budget: timing.Budget = timing.CPU_BUDGET,
    gpu_budget: timing.Budget = timing.GPU_BUDGET,
    log=None,
    cases_dir: Path = cases_mod.CASES_DIR,
    implementations=None,
    time_budget: float | None = None,
    tuning_cache: str = "",
) -> tuple[dict, Path]:
    """Runs the suite and returns (result document, path of its JSON file).
    `implementations(device)` overrides the list [ours] + peers (tests use it). With
    `time_budget` (seconds), no case starts once that much time has passed; the cases left are
    listed as skipped, so a run inside a time-limited command still ends with its results."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    selected = select(cases_mod.load_suite(suite, cases_dir), case_filter)
    wanted = devices or list(cases_mod.DEVICES)
    started = _dt.datetime.now(_dt.timezone.utc)
    doc = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "suite": suite,
        "filter": case_filter,
        "devices": wanted,
        "started": started.isoformat(timespec="seconds"),
        "finished": None,
        "settings": {"tuning": tuning, "tuning_cache": tuning_cache, "cpu_budget": cpu_budget.__dict__, "gpu_budget": gpu_budget.__dict__,
                     "tolerance": cases_mod.TOLERANCE, "time_budget_s": time_budget},
        "environment": env.capture("cuda" if "cuda" in wanted and cuda_status() is None else "cpu"),
        "skipped": [],
        "cases": [],
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"bench-{suite}-{started.strftime('%Y%m%d-%H%M%S')}.json"

    # alpha, beta, bias, activations and padded leading dimensions exist for the conformance
    # checks (packages/conformance); the peers compute only C = op(A) B, so those are not timed.
    conformance_only = [c.id for c in selected if not c.is_plain_product]
    if conformance_only:
        doc["skipped"].append({"device": "/".join(wanted), "cases": conformance_only,
                               "reason": "conformance-only case (alpha, beta, bias, activation or padded ld): "
                                         "the benchmark times C = op(A) B"})
        log(f"skipping {len(conformance_only)} conformance-only case(s)")
        selected = [c for c in selected if c.is_plain_product]

    plan = []
    for device in wanted:
        on_device = [c for c in selected if device in c.devices]
        why_not = cuda_status() if device == "cuda" else None
        if why_not and on_device:
            doc["skipped"].append({"device": device, "cases": [c.id for c in on_device], "reason": why_not})
            log(f"skipping {len(on_device)} {device} case(s): {why_not}")
            continue
        plan += [(device, c) for c in on_device]
    if not plan:
        log(f"suite {suite!r}: no case to run (filter {case_filter!r}, devices {wanted})")

    if plan:
        log(CASE_ID_LEGEND)
    backends: dict = {}
    b_cache: dict = {}
    started_at = time.perf_counter()
    for position, (device, case) in enumerate(plan, start=1):
        elapsed = time.perf_counter() - started_at
        if time_budget is not None and elapsed > time_budget:
            left = plan[position - 1:]
            reason = f"time budget of {time_budget:g} s spent ({elapsed:.0f} s) before this case started"
            for dev in dict.fromkeys(d for d, _ in left):
                doc["skipped"].append({"device": dev, "cases": [c.id for d, c in left if d == dev], "reason": reason})
            log(f"stopping: {reason}; {len(left)} case(s) not run")
            break
        if device not in backends:
            backends[device] = make_backend(device, cpu_budget, gpu_budget)
            bw = backends[device].bandwidth()
            doc["environment"].setdefault("memory_bandwidth", {})[device] = bw
            rate = f"{bw['bytes_per_s'] / 1e9:.0f} GB/s" if bw.get("bytes_per_s") else "unknown"
            log(f"{device}: memory bandwidth {rate} ({bw['source']})")
        impls = implementations(device) if implementations else [ours.OURS] + peers.for_device(device)
        log(f"[{position}/{len(plan)}] {device} {case.id}  (+{time.perf_counter() - started_at:.0f} s)")
        t0 = time.perf_counter()
        record = run_case(case, backends[device], impls, tuning=tuning, log=log, b_cache=b_cache)
        record["seconds"] = round(time.perf_counter() - t0, 3)
        doc["cases"].append(record)
        log("    " + progress_line(record))
        _write(doc, path)

    doc["environment"]["threads"].update(env.thread_counts())
    if "cuda" in backends:
        doc["environment"]["gpu_after"] = env.gpu_info().get("nvidia_smi")
    doc["finished"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    _write(doc, path)
    return doc, path


def run_case(case, backend, impls: list[Implementation], *, tuning: str = "auto", log=print, b_cache=None) -> dict:
    ops = operands.build(case, sets=1, b_cache=b_cache)
    sets = backend.rotation_sets(ops.bytes_per_set())
    operands.add_sets(ops, sets, b_cache)
    rows = operands.reference_rows(ops, backend.full_flop_limit, backend.full_bytes_limit)
    record = {
        "id": case.id,
        "device": backend.device,
        "case": case.to_json(),
        "operands": {
            "nnzb": ops.nnzb,
            "density": ops.pattern.density,
            "row_blocks_min": int(ops.pattern.row_counts.min(initial=0)),
            "row_blocks_max": int(ops.pattern.row_counts.max(initial=0)),
            "flops": ops.flops,
            "dense_flops": ops.dense_flops,
            "bytes_per_set": ops.bytes_per_set(),
            "rotation_sets": sets,
        },
        "reference": {
            "rows_checked": int(rows.size),
            "rows_total": case.m,
            "method": ("float64 op(A) @ B on the GPU (cuBLAS DGEMM; cuSPARSE SpMM where op(A)'s rows as dense float64 pass 256 MiB)" if backend.device == "cuda" else "float64 op(A) @ B on the host (numpy BLAS; scipy CSR where op(A)'s rows as dense float64 pass 256 MiB)")
            + ("" if rows.size == case.m else "; rows sampled: whole block rows incl. first, last, longest, shortest, then evenly spaced")
            + "; every output element also checked for NaN/Inf (outputs are NaN-poisoned before the checked run)",
            "tolerance": case.tolerance,
        },
        "results": [],
    }
    try:
        context = {"b": [backend.array(s.b, case.dtype, case.layout_b) for s in ops.sets], "tuning": tuning}
        ref = backend.reference(ops, rows)
    except Unavailable as e:  # e.g. bfloat16 on a host without ml_dtypes
        record["results"] = [_result(impl, "unavailable", reason=str(e)) for impl in impls]
        record["summary"] = summarize(record, ops.bytes_per_set(), backend.bandwidth()["bytes_per_s"])
        return record
    for impl in impls:
        record["results"].append(measure(impl, ops, backend, context, rows, ref))
        log("      " + result_line(record["results"][-1]))
    record["summary"] = summarize(record, ops.bytes_per_set(), backend.bandwidth()["bytes_per_s"])
    ops.release()
    context.clear()
    if backend.device == "cuda":
        backend.torch.cuda.empty_cache()
    return record


def measure(impl: Implementation, ops, backend, context: dict, rows, ref) -> dict:
    """Prepare (untimed), one checked run on NaN-poisoned outputs, then timing if it was right."""
    case = ops.case
    try:
        prepared = impl.prepare(ops, backend, context)
    except Unavailable as e:
        return _result(impl, "unavailable", reason=str(e))
    except Exception as e:
        return _result(impl, "failed", reason=f"prepare: {type(e).__name__}: {e}")
    try:
        try:
            if prepared.poison:
                prepared.poison(0)
            prepared.run(0)
            backend.synchronize()
            out = prepared.result(0)
            if tuple(out.shape) != (case.m, case.n):
                return _result(impl, "failed", reason=f"output shape {tuple(out.shape)}, expected {(case.m, case.n)}")
            check = backend.check(out, rows, ref)
        except Exception as e:
            return _result(impl, "failed", reason=f"run: {type(e).__name__}: {e}", notes=prepared.notes)
        base = dict(error=check["error"], non_finite=check["non_finite"], notes=prepared.notes,
                    variant=_safe(prepared.variant))
        if check["non_finite"]:
            return _result(impl, "wrong", reason=f"{check['non_finite']} output element(s) NaN/Inf (unwritten or not finite)", **base)
        if not check["error"] <= case.tolerance:
            return _result(impl, "wrong", reason=f"relative error {check['error']:.3g} > tolerance {case.tolerance:g}", **base)
        try:
            stats = backend.time(prepared.run, len(ops.sets))
        except Exception as e:
            return _result(impl, "failed", reason=f"timing: {type(e).__name__}: {e}", **base)
        base["variant"] = _safe(prepared.variant)
        return _result(impl, "ok", time_ms=stats, tflops=ops.flops / (stats["median"] * 1e-3) / 1e12, **base)
    finally:
        try:
            prepared.close()
        except Exception:
            pass


CASE_ID_LEGEND = (
    "case ids: {dtype}[-tf32]_{m}x{k}x{n}_b{block h}x{block w}_{pattern}[-{d density|a alpha|l lower|u upper|"
    "w window|g groups|D dims p points}]_{layout of B}{layout of C: r row, c col}[_tA: A transposed]_s{seed}; "
    "op(A) is m x k, B k x n (packages/bench/cases/README.md)")


def result_line(r: dict) -> str:
    """One implementation's outcome, printed as soon as it is measured."""
    if r["status"] == "ok":
        return f"{r['label']}: {r['time_ms']['median']:.4g} ms"
    return f"{r['label']}: {r['status']} ({r['reason']})"


def progress_line(record: dict) -> str:
    parts = []
    for r in record["results"]:
        if r["status"] == "ok":
            parts.append(f"{r['impl']} {r['time_ms']['median']:.3g} ms")
        else:
            parts.append(f"{r['impl']} {r['status']}")
    s = record.get("summary", {}).get("speedup_vs_best_peer")
    best = record.get("summary", {}).get("best_peer")
    tail = f"  -> {s:.2f}x best peer ({best})" if s else ""
    return " | ".join(parts) + tail + f"  ({record.get('seconds', 0):.1f} s)"


def _result(impl: Implementation, status: str, **fields) -> dict:
    out = {"impl": impl.name, "label": impl.label, "role": impl.role, "status": status, "reason": None,
           "error": None, "non_finite": None, "time_ms": None, "tflops": None, "variant": None, "notes": []}
    out.update(fields)
    if isinstance(out["error"], float) and not math.isfinite(out["error"]):
        out["error"] = None  # JSON has no inf; non_finite says why
    return out


def _safe(fn):
    try:
        return fn()
    except Exception:
        return None


def _write(doc: dict, path: Path) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    tmp.replace(path)
