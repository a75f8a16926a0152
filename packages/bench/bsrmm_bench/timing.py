"""Timers: perf_counter on the host, CUDA events on the GPU; both return per-run milliseconds,
summarised the same way (median, p10, p90) so `compare` can judge noise from the spread."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Budget:
    """How long to measure one implementation on one case."""

    warmup_runs: int
    min_runs: int
    max_runs: int
    seconds: float  # stop adding runs (beyond min_runs) once this much time was measured


# On the host the checked run is the warm-up: a scipy run can take a second on 2 cores.
CPU_BUDGET = Budget(warmup_runs=0, min_runs=3, max_runs=10, seconds=0.5)
GPU_BUDGET = Budget(warmup_runs=5, min_runs=30, max_runs=300, seconds=0.4)


def summarize(samples_ms: list[float], timer: str) -> dict:
    """The summary stored in result JSON (RESULTS.md, "time_ms")."""
    x = np.asarray(samples_ms, dtype=np.float64)
    return {
        "median": float(np.median(x)),
        "p10": float(np.percentile(x, 10)),
        "p90": float(np.percentile(x, 90)),
        "min": float(x.min()),
        "mean": float(x.mean()),
        "runs": int(x.size),
        "timer": timer,
    }


def time_host(run: Callable[[int], None], sets: int, budget: Budget = CPU_BUDGET) -> dict:
    """Median of repeated host-clock timings; run(i) computes with operand set i % sets."""
    for i in range(budget.warmup_runs):
        run(i % sets)
    samples: list[float] = []
    spent = 0.0
    i = 0
    while len(samples) < budget.max_runs and (len(samples) < budget.min_runs or spent < budget.seconds):
        t0 = time.perf_counter()
        run(i % sets)
        dt = time.perf_counter() - t0
        samples.append(dt * 1e3)
        spent += dt
        i += 1
    return summarize(samples, "perf_counter")


def time_cuda(run: Callable[[int], None], sets: int, budget: Budget = GPU_BUDGET) -> dict:
    """CUDA-event timings on torch's current stream, after warm-up; each run is bracketed by its
    own event pair, and events are read only after the last run (no sync inside the loop)."""
    import torch

    stream = torch.cuda.current_stream()
    for i in range(budget.warmup_runs):
        run(i % sets)
    torch.cuda.synchronize()
    # Estimate the per-run time from a short burst to size the measured loop within the budget.
    probe_start, probe_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    probe_start.record(stream)
    for i in range(3):
        run(i % sets)
    probe_end.record(stream)
    probe_end.synchronize()
    per_run_s = max(probe_start.elapsed_time(probe_end) / 3e3, 1e-6)
    runs = int(min(budget.max_runs, max(budget.min_runs, budget.seconds / per_run_s)))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for i, (start, end) in enumerate(events):
        start.record(stream)
        run(i % sets)
        end.record(stream)
    torch.cuda.synchronize()
    return summarize([start.elapsed_time(end) for start, end in events], "cuda_events")
