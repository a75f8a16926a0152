"""The untuned heuristic against every eligible variant, forced, around the coverage suite's
heuristic misses (docs/perf-log.md entry 76): f64 blocks the DMMA tiles take at N = 2-8, exact
f32 tall blocks at N = 8-32 (uniform and power-law), and tiny blocks on power-law and uniform rows at
wide N; with --set small-n, tiny blocks (1x1-16x16) on 27-point stencils and bands at N = 1-4,
the sparse matrix-vector products of entry 82.
Each case: the default pick (tuning off), then each variant that accepts it, every output
checked against a float64 product first (C poisoned with NaN), times from
bsrmm_bench.timing.time_cuda. Writes one JSON line per case to stdout (or --out FILE).

    python3 packages/bench/experiments/heuristic_audit.py [--set misses|small-n] [--out FILE] [--only REGEX]
"""
import argparse
import json
import pathlib
import re
import sys

import numpy as np
import torch

import bsrmm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # packages/bench
from bsrmm_bench import patterns  # noqa: E402
from bsrmm_bench.timing import Budget, time_cuda  # noqa: E402

TORCH = {"f32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
         "f64": torch.float64}
# Shorter than the suite's budget: ~60 cases x ~15 variants must fit one device call.
BUDGET = Budget(warmup_runs=3, min_runs=10, max_runs=100, seconds=0.1)
TOL = {"f32": 1e-5, "tf32": 5e-3, "bf16": 3e-2, "f16": 4e-3, "f64": 1e-12}


def cases():
    for bh, bw in [(16, 16), (32, 32), (64, 32), (64, 64), (128, 128)]:
        for n in (2, 4, 8):
            yield "f64", bh, bw, 32768, {"kind": "uniform", "density": 1 / 64}, n
    for bh, bw in [(32, 32), (64, 32), (64, 64), (128, 128)]:
        for kind in ("uniform", "power_law"):
            for n in (8, 16, 32):
                yield "f32", bh, bw, 16384, {"kind": kind, "density": 1 / 32, "alpha": 1.0}, n
    for b in (2, 4, 8):
        for dtype in ("tf32", "bf16", "f64"):
            for n in (256, 1024):
                yield dtype, b, b, 4096, {"kind": "power_law", "density": 1 / 32, "alpha": 1.0}, n
    # The same tiny blocks on uniform rows: where the dense fallback would be the default too
    for b in (2, 4, 8):
        for dtype in ("tf32", "bf16"):
            for n in (64, 256, 1024):
                yield dtype, b, b, 4096, {"kind": "uniform", "density": 1 / 32}, n


def small_n_cases():
    """Tiny blocks at N = 1-4 on the operators that store them: a 3-D 27-point stencil (up to 2^18
    block rows, fewer where the values would pass 2^27 elements) and a tridiagonal band (N = 1)."""
    for dtype in ("f64", "f32", "bf16"):
        for b in (1, 2, 3, 4, 6, 8, 12, 16):
            block_rows = 1 << 18
            while block_rows * 27 * b * b > 1 << 27:
                block_rows //= 2
            for n in (1, 2, 4):
                yield dtype, b, b, block_rows * b, {"kind": "stencil", "dims": 3, "points": 27}, n
            yield dtype, b, b, (1 << 18) * b, {"kind": "banded", "lower": 1, "upper": 1}, 1


def operands(dtype, bh, bw, size, spec, n, seed=1):
    pattern = patterns.generate(spec, size // bh, size // bw, seed)
    rng = np.random.default_rng(seed)
    values = torch.from_numpy(rng.uniform(-1, 1, (pattern.nnzb, bh, bw))).to(TORCH[dtype])
    a = bsrmm.BsrMatrix.from_arrays(pattern.indptr.astype(np.int32), pattern.indices.astype(np.int32),
                                    values, (size, size), device="cuda")
    b = torch.from_numpy(rng.uniform(-1, 1, (size, n))).to(TORCH[dtype]).cuda()
    # float64 reference: the blocks' products summed per block row on the GPU
    v64 = values.double().cuda()
    b64 = b.double().view(size // bw, bw, n)
    rows = torch.from_numpy(pattern.row_ids()).cuda()
    cols = torch.from_numpy(pattern.indices.astype(np.int64)).cuda()
    products = torch.bmm(v64, b64[cols])  # nnzb x bh x n
    ref = torch.zeros(size // bh, bh, n, dtype=torch.float64, device="cuda").index_add_(0, rows, products)
    return a, b, ref.view(size, n), pattern


def run_case(dtype, bh, bw, size, spec, n):
    a, b, ref, pattern = operands(dtype, bh, bw, size, spec, n)
    mode = "tf32" if dtype == "tf32" else "exact"
    out = torch.empty(size, n, dtype=TORCH[dtype], device="cuda")
    scale = ref.abs().max().item() + 1e-30

    def measure(ctx):
        out.fill_(float("nan"))
        bsrmm.matmul(a, b, out=out, context=ctx)
        torch.cuda.synchronize()
        error = ((out.double() - ref).abs().max().item()) / scale
        ok = bool(torch.isfinite(out).all().item()) and error <= TOL[dtype] * max(1.0, (bw * 4) ** 0.5)
        ms = time_cuda(lambda i: bsrmm.matmul(a, b, out=out, context=ctx), 1, BUDGET)["median"]
        return ms, ok, error

    default_ctx = bsrmm.Context("cuda", tuning="off", f32_mode=mode)
    ms, ok, error = measure(default_ctx)
    row = {"case": f"{dtype} {bh}x{bw} {size} {spec['kind']} N={n}", "nnzb": pattern.nnzb,
           "max_row_blocks": int(pattern.row_counts.max()), "mean_row_blocks": pattern.nnzb / pattern.block_rows,
           "default": default_ctx.last_variant, "default_ms": ms, "variants": {}}
    if not ok:
        row["default_error"] = error
    for name in (v for v in bsrmm.variants("matmul") if not v.startswith("cpu_")):
        ctx = bsrmm.Context("cuda", variant=name, tuning="off", f32_mode=mode)
        try:
            ms, ok, error = measure(ctx)
        except bsrmm.UnsupportedError:
            continue
        row["variants"][name] = ms if ok else f"WRONG {error:.2e}"
    timed = {k: v for k, v in row["variants"].items() if isinstance(v, float)}
    best = min(timed, key=timed.get)
    row["best"], row["best_ms"], row["miss"] = best, timed[best], row["default_ms"] / timed[best]
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--only", default=".")
    parser.add_argument("--set", choices=("misses", "small-n"), default="misses")
    args = parser.parse_args()
    sink = open(args.out, "w") if args.out else sys.stdout
    for case in (small_n_cases() if args.set == "small-n" else cases()):
        label = f"{case[0]} {case[1]}x{case[2]} {case[3]} {case[4]['kind']} N={case[5]}"
        if not re.search(args.only, label):
            continue
        row = run_case(*case)
        print(json.dumps(row), file=sink, flush=True)
        print(f"{row['miss']:5.2f}x {row['case']:<38} default {row['default']} {row['default_ms']:.4f} "
              f"best {row['best']} {row['best_ms']:.4f}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
