"""bsrmm against dense cuBLAS (torch.mm) on the same product, timed in pairs.

The benchmark suite times each implementation's runs back to back; on an H100 that power-throttles
dense-rate GEMMs, medians of the same GEMM then move by 3-5% between neighbouring runs, which is
the size of the "x dense" margin being judged. Here every iteration times one bsrmm call and one
torch.mm call next to each other (in alternating order), so both see the same clocks; the
per-pair ratio's median is the comparison.

    python3 packages/bench/experiments/paired_dense_timing.py [ITERS]      (after the bsrmm Python package is installed)

Cases: the grid's cells where bsrmm picks its dense fallback (M = K = 8192, N = 4096).
"""

import pathlib
import sys

import numpy as np
import torch

import bsrmm

# The benchmark suite's pattern generator (packages/bench), so A is the grid case's own pattern.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from bsrmm_bench import patterns  # noqa: E402

CASES = [(16, 0.125), (16, 0.25), (16, 0.5), (32, 0.5)]


def timed(fn, start, end):
    start.record()
    fn()
    end.record()


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    m = k = 8192
    n = 4096
    print(f"{'dtype':9} {'block':>5} {'density':>7}  {'ours ms':>8} {'dense ms':>8}  {'dense/ours (pairs)':>18}  variant")
    for dtype in (torch.float16, torch.bfloat16):
        for block, density in CASES:
            # Seed 1: the grid's "_s1" cases.
            pattern = patterns.generate({"kind": "uniform", "density": density}, m // block, k // block, seed=1)
            indptr, indices = pattern.indptr.astype(np.int32), pattern.indices.astype(np.int32)
            data = torch.empty((len(indices), block, block), dtype=dtype, device="cuda").uniform_(-1, 1)
            a = bsrmm.BsrMatrix.from_arrays(torch.from_numpy(indptr).cuda(), torch.from_numpy(indices).cuda(), data,
                                            (m, k), device="cuda:0")
            # The dense copy: block p of row r at (r, indices[p]) of a (rows, block, cols, block) view.
            dense_a = torch.zeros((m // block, block, k // block, block), dtype=dtype, device="cuda")
            rows = torch.from_numpy(pattern.row_ids()).cuda()
            dense_a[rows, :, torch.from_numpy(indices).long().cuda(), :] = data
            dense_a = dense_a.reshape(m, k)
            b = torch.empty((k, n), dtype=dtype, device="cuda").uniform_(-1, 1)
            ours_c = torch.full((m, n), float("nan"), dtype=dtype, device="cuda")
            dense_c = torch.empty((m, n), dtype=dtype, device="cuda")
            context = bsrmm.Context("cuda:0")
            run_ours = lambda: bsrmm.matmul(a, b, out=ours_c, context=context)
            run_dense = lambda: torch.mm(dense_a, b, out=dense_c)
            for _ in range(10):
                run_ours()
                run_dense()
            torch.cuda.synchronize()
            # The same product: bsrmm's result against cuBLAS's, relative to the largest element.
            err = ((ours_c.float() - dense_c.float()).abs().max() / dense_c.float().abs().max()).item()
            events = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(iters)]
            for i, (s0, e0, s1, e1) in enumerate(events):
                if i % 2 == 0:
                    timed(run_ours, s0, e0)
                    timed(run_dense, s1, e1)
                else:
                    timed(run_dense, s1, e1)
                    timed(run_ours, s0, e0)
            torch.cuda.synchronize()
            ours = np.array([s0.elapsed_time(e0) for s0, e0, _, _ in events])
            dense = np.array([s1.elapsed_time(e1) for _, _, s1, e1 in events])
            ratio = dense / ours
            variant = context.last_variant
            print(f"{str(dtype).split('.')[1]:9} {block:5} {density:7}  {np.median(ours):8.3f} {np.median(dense):8.3f}  "
                  f"{np.median(ratio):8.3f} (p10 {np.percentile(ratio, 10):.3f})  {variant} max rel diff {err:.1e}")


if __name__ == "__main__":
    main()
