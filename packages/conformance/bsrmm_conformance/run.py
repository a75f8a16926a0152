"""The conformance matrix: writes the vectors, runs every available binding's runner on every
device, checks the outputs (check.py), prints one row per case and one column per binding and
device, and writes OUT/conformance.json."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from . import bad_inputs, check, fp8, manifest, sddmm, vectors
from .bindings import Binding, runner_env

RUNNER_TIMEOUT_S = 600


def write_vectors(folder: Path, suite: str, case_filter: str | None, device: str) -> list[manifest.VectorCase]:
    """The suite's cases that run on `device`, then every bad input and mutated valid case, then
    the SDDMMs and their bad inputs (sddmm.py: every device), then the fp8 products and their bad
    inputs (fp8.py: the CPU only, where every binding computes them; Python's fp8 products are
    host-only for now)."""
    from bsrmm_bench import cases as bench_cases
    from bsrmm_bench.runner import select

    kind = "cuda" if device.startswith("cuda") else "cpu"
    chosen = [c for c in select(bench_cases.load_suite(suite), case_filter) if kind in c.devices]
    built = [(vectors.vector_case(c), vectors.case_arrays(c)) for c in chosen]
    extra = bad_inputs.vectors() + sddmm.vectors() + (fp8.vectors() if kind == "cpu" else [])
    built += [v for v in extra if not case_filter or _matches(case_filter, v[0].id)]
    manifest.write(folder, built)
    return [case for case, _ in built]


def _matches(pattern: str, text: str) -> bool:
    import re

    return re.search(pattern, text) is not None


def run_binding(binding: Binding, folder: Path, out: Path, device: str, env: dict[str, str]) -> dict | str:
    """The runner's results, or why there are none. Its output goes to out/runner.log."""
    reason = binding.unavailable()
    if reason is not None:
        return reason
    out.mkdir(parents=True, exist_ok=True)
    command = binding.command() + [str(folder), str(out), device]
    started = time.perf_counter()
    with open(out / "runner.log", "w") as log:
        try:
            done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=RUNNER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"runner timed out after {RUNNER_TIMEOUT_S} s (see {out / 'runner.log'})"
    seconds = time.perf_counter() - started
    if done.returncode != 0 or not (out / "results.txt").is_file():
        tail = (out / "runner.log").read_text().strip().splitlines()[-5:]
        return f"runner exited with {done.returncode} ({' | '.join(tail)})"
    print(f"conformance: {binding.name} on {device}: {seconds:.1f} s", file=sys.stderr)
    return check.read_results(out / "results.txt")


def run(*, suite: str, case_filter: str | None, devices: list[str], bindings: list[Binding], required: set[str],
        out: Path) -> bool:
    """Runs the matrix; True when every check passed and every required binding ran. A case's row
    holds every binding on every device it runs on, all compared with each other."""
    out.mkdir(parents=True, exist_ok=True)
    env = runner_env(out)
    problems: list[str] = []
    columns: list[str] = []
    results: dict[str, dict | str] = {}
    outputs: dict[str, Path] = {}
    cases: dict[str, tuple[Path, manifest.VectorCase, list[str]]] = {}  # id -> (vectors, case, columns)
    for device in devices:
        folder = out / "vectors" / device.replace(":", "")
        device_columns = []
        for binding in bindings:
            column = binding.name if len(devices) == 1 else f"{binding.name}@{device}"
            device_columns.append(column)
            outputs[column] = out / "results" / column.replace(":", "")
        for case in write_vectors(folder, suite, case_filter, device):
            cases.setdefault(case.id, (folder, case, []))[2].extend(device_columns)
        for binding, column in zip(bindings, device_columns):
            columns.append(column)
            results[column] = run_binding(binding, folder, outputs[column], device, env)
            if isinstance(results[column], str):
                message = f"{column}: not run: {results[column]}"
                print(f"conformance: {message}", file=sys.stderr)
                if binding.name in required:
                    problems.append(message)
    rows: list[tuple[str, dict[str, check.Cell]]] = []
    for case_id, (folder, case, case_columns) in cases.items():
        cells, case_problems = check.check_case(folder, case, {c: results[c] for c in case_columns}, outputs)
        rows.append((case_id, cells))
        problems += case_problems
    valid = sum(1 for _, case, _ in cases.values() if case.expect == "ok")
    _print_matrix(rows, columns)
    _write_json(out / "conformance.json", suite, devices, columns, rows, problems)
    if problems:
        print(f"\nconformance: FAILED, {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return False
    ran = [c for c in columns if not isinstance(results[c], str)]
    not_run = [c for c in columns if isinstance(results[c], str)]
    print(f"\nconformance: passed: {valid} valid products (each element against float64 and between bindings) and "
          f"{len(rows) - valid} bad inputs (one status everywhere) x {len(ran)} column(s): {', '.join(ran)}"
          + (f"; not run: {', '.join(not_run)} (reasons above)" if not_run else ""),
          file=sys.stderr)
    return True


def _print_matrix(rows: list[tuple[str, dict[str, check.Cell]]], columns: list[str]) -> None:
    """Valid cases show the worst |out - ref| as a fraction of the allowed bound (<= 1 passes);
    bad inputs the status reported; skips and failures are listed with their reasons."""
    width = max((len(case_id) for case_id, _ in rows), default=10)
    cell_width = max([7] + [len(c) for c in columns] + [len(cell.text) for _, cells in rows for cell in cells.values()])
    print(f"{'case':<{width}}  " + "  ".join(f"{c:>{cell_width}}" for c in columns))
    for case_id, cells in rows:
        texts = [cells[c].text if c in cells else "" for c in columns]
        print(f"{case_id:<{width}}  " + "  ".join(f"{t:>{cell_width}}" for t in texts))
    skips = sorted({(column, cell.detail) for _, cells in rows for column, cell in cells.items()
                    if cell.status == "skip" and cell.text == "skip"})
    if skips:
        print("\nskipped (not expressible through that API):")
        for column, reason in skips:
            count = sum(1 for _, cells in rows if column in cells and cells[column].status == "skip" and cells[column].detail == reason)
            print(f"  {column}: {count} bad input(s): {reason}")


def _write_json(path: Path, suite: str, devices: list[str], columns: list[str], rows, problems: list[str]) -> None:
    doc = {
        "suite": suite,
        "devices": devices,
        "columns": columns,
        "cases": [{"id": case_id, "cells": {c: {"status": cell.status, "text": cell.text, "detail": cell.detail}
                                             for c, cell in cells.items()}} for case_id, cells in rows],
        "problems": problems,
        "passed": not problems,
    }
    path.write_text(json.dumps(doc, indent=1) + "\n")
