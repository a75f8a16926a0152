"""Small N on the GPU: bsrmm's latency per call against a dense GEMM of the same non-zero work.

Issue 5 asks that N = 16, 64 and 256 show no cliff, reported against a dense GEMM doing the same
useful work: for A of M x K at density d that is an M x (d K) x N product (torch.mm), which reads
as many A bytes as bsrmm does. Per N (and N = 4096 for scale), on the shapes suite's case (8192^2,
64 x 64 blocks, d = 1/8, fp16, uniform rows):

  bsrmm call     CUDA events around each call, back to back (the benchmark suite's method), so
                 the host path (Python binding, core checks, launch) counts where it exceeds
                 the kernel
  bsrmm kernel   the kernels' own GPU time (torch.profiler's CUDA activity for the call)
  host/call      host time per call of 200 calls queued without waiting
  dense same     torch.mm (M x dK) @ (dK x N), events as for bsrmm
  dense full     torch.mm (M x K) @ (K x N): the dense product bsrmm replaces

The result is checked on 64 sampled rows against float64 before anything is timed.
Run on the GPU machine with bsrmm (packages/python) and torch importable:
    python3 packages/bench/experiments/small_n_latency.py [--ns 1,16,64] [--out FILE.json]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np
import torch

import bsrmm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # packages/bench
from bsrmm_bench.timing import time_cuda  # noqa: E402

M = K = 8192
BLOCK = 64
PER_ROW = 16  # of 128 block columns: d = 1/8
NS = (16, 64, 256, 4096)


def events_ms(run) -> float:
    """Median per-call time, each call bracketed by its own events, no sync inside the loop."""
    return time_cuda(lambda _: run(), 1)["median"]


def host_us_per_call(run, runs: int = 200) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(runs):
        run()
    host = time.perf_counter() - t0
    torch.cuda.synchronize()
    return host / runs * 1e6


def kernel_ms(run, runs: int = 50) -> float:
    """GPU time of the kernels one call launches, from the profiler's CUDA activity."""
    from torch.profiler import ProfilerActivity, profile

    run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            run()
        torch.cuda.synchronize()
    total_us = sum(e.device_time_total for e in prof.key_averages() if e.device_time_total > 0)
    return total_us / runs / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the rows as JSON here")
    parser.add_argument("--ns", default=",".join(map(str, NS)), help="the N to run, comma-separated")
    args = parser.parse_args()
    rng = np.random.default_rng(5)
    block_rows, block_cols = M // BLOCK, K // BLOCK
    col_idx = np.concatenate([np.sort(rng.choice(block_cols, PER_ROW, replace=False)) for _ in range(block_rows)])
    row_ptr = np.arange(0, block_rows * PER_ROW + 1, PER_ROW)
    values = rng.uniform(-1, 1, (len(col_idx), BLOCK, BLOCK)).astype(np.float16)
    a = bsrmm.BsrMatrix.from_arrays(row_ptr.astype(np.int32), col_idx.astype(np.int32), values, (M, K), device="cuda")
    ctx = bsrmm.Context("cuda")
    dense_k = K * PER_ROW // block_cols
    a_same = torch.randn(M, dense_k, device="cuda", dtype=torch.float16)
    a_full = torch.randn(M, K, device="cuda", dtype=torch.float16)
    rows = []
    print(f"# {torch.cuda.get_device_name()}; A {M}x{K} fp16, {BLOCK}x{BLOCK} blocks, {PER_ROW}/{block_cols} per block row")
    print(f"{'N':>5} {'bsrmm call ms':>14} {'kernel ms':>10} {'host us/call':>13} {'dense same ms':>14} {'dense full ms':>14} {'call/same':>10}")
    for n in (int(text) for text in args.ns.split(",")):
        b = torch.empty(K, n, device="cuda", dtype=torch.float16).uniform_(-1, 1)
        c = torch.full((M, n), float("nan"), device="cuda", dtype=torch.float16)
        bsrmm.matmul(a, b, out=c, context=ctx)
        check_rows = rng.choice(M, 64, replace=False)
        b64 = b.double().cpu().numpy()
        got = c.double().cpu().numpy()
        worst = 0.0
        for r in check_rows:
            br = r // BLOCK
            ref = np.zeros(n)
            for q in range(row_ptr[br], row_ptr[br + 1]):
                ref += values[q, r % BLOCK].astype(np.float64) @ b64[col_idx[q] * BLOCK:(col_idx[q] + 1) * BLOCK]
            worst = max(worst, float(np.max(np.abs(got[r] - ref) / (np.abs(ref) + 1.0))))
        assert np.isfinite(got[check_rows]).all() and worst < 2e-2, f"N = {n}: wrong result (worst {worst:.2e})"
        b_same = b[:dense_k]
        ours = lambda: bsrmm.matmul(a, b, out=c, context=ctx)
        row = {
            "n": n,
            "bsrmm_call_ms": events_ms(ours),
            "bsrmm_kernel_ms": kernel_ms(ours),
            "bsrmm_host_us_per_call": host_us_per_call(ours),
            "dense_same_work_ms": events_ms(lambda: torch.mm(a_same, b_same)),
            "dense_full_ms": events_ms(lambda: torch.mm(a_full, b)),
            "variant": ctx.last_variant,
            "checked_rows": 64,
            "worst_relative_error": worst,
        }
        rows.append(row)
        print(f"{n:>5} {row['bsrmm_call_ms']:>14.4f} {row['bsrmm_kernel_ms']:>10.4f} {row['bsrmm_host_us_per_call']:>13.1f} "
              f"{row['dense_same_work_ms']:>14.4f} {row['dense_full_ms']:>14.4f} "
              f"{row['bsrmm_call_ms'] / row['dense_same_work_ms']:>10.2f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
