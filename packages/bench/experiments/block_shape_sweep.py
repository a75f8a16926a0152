"""Every sm90 variant that takes a block shape, forced one by one, beside the untuned default,
the dense fallback and torch's dense GEMM: where a shape's kernels cross the dense product.

    python3 packages/bench/experiments/block_shape_sweep.py [SHAPES] [N]     SHAPES e.g. 32x64,16x64 (the default)

M = K = 8192, f16, uniform pattern with a fixed count per block row at densities 0.05 / 0.125 /
0.25 / 0.5; each output is checked against a float64 product (C poisoned with NaN first), then
timed as the benchmark suite times (bsrmm_bench.timing.time_cuda: the median of per-call CUDA
events after warm-ups).
x dense = torch dense time / variant time. Needs the Python package (gpu-check's python step).
"""
import pathlib
import sys

import numpy as np
import torch

import bsrmm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # packages/bench
from bsrmm_bench import patterns  # noqa: E402
from bsrmm_bench.timing import time_cuda  # noqa: E402


def time_ms(fn):
    """Median ms per call of fn (one operand set)."""
    return time_cuda(lambda _: fn(), 1)["median"]


def dense_of(indptr, indices, vals, m, k, bh, bw):
    dense = torch.zeros(m // bh, bh, k // bw, bw, dtype=torch.float16, device="cuda")
    rows = torch.from_numpy(np.repeat(np.arange(m // bh), np.diff(indptr))).cuda()
    dense[rows, :, torch.from_numpy(indices.astype(np.int64)).cuda(), :] = torch.from_numpy(vals).cuda()
    return dense.reshape(m, k)


def sweep(bh, bw, n, m=8192, k=8192):
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    prefix = "sm90_tma_wgmma_f16_b" + (str(bh) if bh == bw else f"{bh}x{bw}")
    square_parts = f"sm90_tma_wgmma_f16_b{bh}_transposed"  # wide blocks run as square parts
    names = [v for v in bsrmm.variants(kind="matmul") if v.startswith(prefix + "_") or v.startswith(square_parts)]
    for density in (0.05, 0.125, 0.25, 0.5):
        pattern = patterns.generate({"kind": "uniform", "density": density}, m // bh, k // bw, seed=1)
        indptr, indices = pattern.indptr.astype(np.int32), pattern.indices.astype(np.int32)
        vals = (np.random.default_rng(0).standard_normal((len(indices), bh, bw)) * 0.5).astype(np.float16)
        a = bsrmm.BsrMatrix.from_arrays(indptr, indices, vals, (m, k), device="cuda")
        a_dense = dense_of(indptr, indices, vals, m, k, bh, bw)
        reference = a_dense.double() @ b.double()
        flops = 2.0 * len(indices) * bh * bw * n
        t_dense = time_ms(lambda: a_dense @ b)
        print(f"{bh}x{bw} d{density}: torch dense {t_dense:.3f} ms", flush=True)
        for variant in [None] + sorted(set(names)) + ["dense_cublaslt_f16"]:
            ctx = bsrmm.Context("cuda", tuning="off", variant=variant)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
            try:
                bsrmm.matmul(a, b, out=c, context=ctx)
                torch.cuda.synchronize()
            except bsrmm.UnsupportedError as error:  # a variant that does not take these arguments
                print(f"  {variant}: {type(error).__name__}", flush=True)
                continue
            error = ((c.double() - reference).norm() / reference.norm()).item()
            assert error < 1e-3, f"{variant}: relative error {error:.1e}"
            t = time_ms(lambda: bsrmm.matmul(a, b, out=c, context=ctx))
            label = variant or f"default={ctx.last_variant}"
            print(f"  {label:58s} {t:.3f} ms {flops / t / 1e9:6.1f} TFLOPS x dense {t_dense / t:.2f}"
                  f" err {error:.1e}", flush=True)


def main():
    shapes = sys.argv[1] if len(sys.argv) > 1 else "32x64,16x64"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    for shape in shapes.split(","):
        bh, bw = (int(x) for x in shape.split("x"))
        sweep(bh, bw, n)


if __name__ == "__main__":
    main()
