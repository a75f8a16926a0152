"""Where the CPU's f64 2x2 power-law time goes (docs/perf-log.md entry 87), on the CPU this runs on:
the coverage cell's A (8192^2, d 1/256, a 4096-block row) against two rewrites of it that keep
its block count, uniform rows of 16 blocks (no skew) and its own row lengths with each row's
columns 0, 1, 2, ... (B rows read in order, the first ones shared by every row), each with
cpu_blocked_simd and cpu_rowwise_simd forced at 1 and 2 threads; then the cell's pattern (2x2
and the 4x4 one of the suite) at N 32-512 with both variants and MKL's BSR product. Each
configuration timed in rounds interleaved with the others (median of a round, min over rounds),
so a noisy machine's drift hits all alike. Needs bsrmm, numpy, scipy, and sparse_dot_mkl + mkl
for the MKL column:

    PYTHONPATH=packages/bench python3 packages/bench/experiments/cpu_powerlaw_walk.py
"""
import dataclasses
import time

import numpy as np
import scipy.sparse as sp

import bsrmm
from bsrmm_bench import cases, operands
from bsrmm_bench.peers import cpu as cpu_peers

CELL = "float64_8192x8192x256_b2x2_power_law-a1-d0.00390625_rr_s1"
CELL_4X4 = "float64_8192x8192x1_b4x4_power_law-a1-d0.0078125_rr_s1"
VARIANTS = ("cpu_blocked_simd", "cpu_rowwise_simd")


def case_named(name, n=None):
    case = next(c for c in cases.load_suite("coverage") if cases.case_id(c) == name)
    return dataclasses.replace(case, n=n) if n else case


def median_ms(f, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def interleaved(runs, reps, rounds=3):
    for f in runs.values():
        f()
    best = {k: [] for k in runs}
    for _ in range(rounds):
        for k, f in runs.items():
            best[k].append(median_ms(f, reps))
    return {k: min(v) for k, v in best.items()}


def bsrmm_run(a, b, variant, threads):
    matrix = bsrmm.BsrMatrix.from_scipy(a)
    context = bsrmm.Context("cpu", num_threads=threads, variant=variant)
    out = np.empty((a.shape[0], b.shape[1]), dtype=b.dtype)
    return lambda: bsrmm.matmul(matrix, b, out=out, context=context)


def operands_of(case):
    ops = operands.build(case)
    bh, bw = case.block
    a = sp.bsr_matrix((ops.sets[0].data, ops.pattern.indices, ops.pattern.indptr), shape=(case.m, case.k))
    return a, np.ascontiguousarray(ops.sets[0].b), ops.pattern


def walk_order():
    case = case_named(CELL)
    a, b, pattern = operands_of(case)
    counts = np.diff(pattern.indptr)
    rng = np.random.default_rng(0)
    rows, cols = case.block_grid
    uniform = np.concatenate([np.sort(rng.choice(cols, 16, replace=False)) for _ in range(rows)])
    in_order = np.concatenate([np.arange(c) for c in counts])
    data = a.data
    matrices = {
        "the cell": a,
        "uniform 16 a row": sp.bsr_matrix((data, uniform, np.arange(0, 16 * rows + 1, 16)), shape=a.shape),
        "its rows, columns in order": sp.bsr_matrix((data, in_order, pattern.indptr), shape=a.shape),
    }
    runs = {(name, v, t): bsrmm_run(m, b, v, t) for name, m in matrices.items() for v in VARIANTS for t in (1, 2)}
    for (name, variant, threads), ms in interleaved(runs, reps=9).items():
        print(f"{name:28s} {variant:18s} {threads} threads {ms:8.2f} ms")


def n_sweep():
    cpu_peers.mkl_library()
    import sparse_dot_mkl

    for name in (CELL, CELL_4X4):
        for n in (32, 64, 128, 256, 512):
            case = case_named(name, n)
            a, b, _ = operands_of(case)
            runs = {v: bsrmm_run(a, b, v, 0) for v in VARIANTS}
            runs["MKL BSR"] = lambda a=a, b=b: sparse_dot_mkl.dot_product_mkl(a, b)
            times = interleaved(runs, reps=max(5, min(40, int(2e9 / (2 * a.nnz * n)))))
            print(f"{case.block[0]}x{case.block[1]} N {n:4d} B {case.k * n * 8 / 2**20:5.1f} MiB  " +
                  "  ".join(f"{k} {ms:7.2f} ms" for k, ms in times.items()), flush=True)


if __name__ == "__main__":
    walk_order()
    n_sweep()
