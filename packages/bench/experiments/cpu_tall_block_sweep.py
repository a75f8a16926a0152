"""CPU: cpu_rowwise_simd against cpu_blocked_simd, both forced, on tall blocks (16x16, 32x32, 64x64;
f64 and f32; N 8-128; uniform patterns), beside the untuned heuristic's pick: the range where the
heuristic takes rowwise for blocks taller than 8 rows (cpu/rowwise.cpp, rowwise_preferred).
Each time is the better of two medians of 7 calls; run on an idle machine.

    python packages/bench/experiments/cpu_tall_block_sweep.py
"""
import pathlib
import sys

import numpy as np

import bsrmm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # packages/bench
from bsrmm_bench import patterns  # noqa: E402
from bsrmm_bench.timing import Budget, time_host  # noqa: E402

VARIANTS = ("cpu_rowwise_simd", "cpu_blocked_simd")
SEVEN_CALLS = Budget(warmup_runs=1, min_runs=7, max_runs=7, seconds=0.0)


def median_ms(call):
    return time_host(lambda _: call(), 1, SEVEN_CALLS)["median"]


def main():
    rng = np.random.default_rng(0)
    contexts = {v: bsrmm.Context("cpu", variant=v, tuning="off") for v in VARIANTS}
    for block, block_rows, density in ((16, 512, 1 / 32), (32, 256, 1 / 32), (64, 128, 1 / 16), (16, 1024, 1 / 128)):
        for dtype in (np.float64, np.float32):
            for n in (8, 16, 32, 64, 128):
                p = patterns.generate({"kind": "uniform", "density": density}, block_rows, block_rows, 1)
                values = rng.standard_normal((p.nnzb, block, block)).astype(dtype)
                size = block_rows * block
                a = bsrmm.BsrMatrix.from_arrays(p.indptr.astype(np.int32), p.indices.astype(np.int32), values,
                                                (size, size))
                b = rng.standard_normal((size, n)).astype(dtype)
                ms = [min(median_ms(lambda c=contexts[v]: bsrmm.matmul(a, b, context=c)) for _ in range(2))
                      for v in VARIANTS]
                untuned = bsrmm.Context("cpu", tuning="off")
                bsrmm.matmul(a, b, context=untuned)
                print(f"{block}x{block} {np.dtype(dtype).name} {size} d{density:.4f} N={n:4d}: rowwise {ms[0]:8.3f} "
                      f"blocked {ms[1]:8.3f} ratio {ms[0] / ms[1]:5.2f} heuristic {untuned.last_variant}", flush=True)


if __name__ == "__main__":
    main()
