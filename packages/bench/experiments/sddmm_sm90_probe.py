"""The Hopper SDDMM kernel's speed on the training shape (issue 25): dW-style sampled products
values[b] = (X Y)[block b] at M = K = 8192, T = 4096, for blocks 64 and 128 (and 128x64 / 64x128
with --all-shapes), densities 0.125 / 0.25 / 0.5, X row- or column-major (column-major X is the
weight gradient's dY^T view) and Y row- or column-major, f16 or bf16.

    python3 packages/bench/experiments/sddmm_sm90_probe.py [--dtype f16|bf16] [--all-shapes] [--vs-sm80]

Prints, per case, the variant that ran (bsrmm picks sm90_sddmm_* first on an H100), the median
ms and TFLOPS on the stored blocks (2 nnzb bh bw T flops), beside dense cuBLAS X @ Y on the same
operands (2 M K T flops) as the ceiling. --vs-sm80 forces, on the same operands, the case's
sm90_sddmm_* variant and the sm80_sddmm_* variant with the widest tile dividing the block
(Context(variant=...)), one row each, so the two kernels are timed side by side. Each case
is checked first: 16 random blocks against float64, the output poisoned with NaN before the run.
Times are the suite's (bsrmm_bench.timing.time_cuda: warm-ups, each call between its own CUDA
events, the median). Targets (issue 25): block 128 >= 515 / 550 / 590 TFLOPS at d 0.125 / 0.25 /
0.5, block 64 >= 400.
"""
import argparse
import pathlib
import sys

import numpy as np
import torch

import bsrmm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # packages/bench
from bsrmm_bench.timing import time_cuda  # noqa: E402

M = K = 8192
T = 4096
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def random_pattern(bh, bw, density, dtype, rng):
    """A pattern of M x K in bh x bw blocks, each present with probability `density`."""
    mask = rng.random((M // bh, K // bw)) < density
    indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(np.int32)
    indices = np.nonzero(mask)[1].astype(np.int32)
    # The pattern's values (never read by the SDDMM) fix its dtype: torch has bf16, numpy not.
    values = torch.zeros((len(indices), bh, bw), dtype=dtype, device="cuda")
    as_device = lambda a: torch.from_numpy(a).cuda()  # noqa: E731
    pattern = bsrmm.BsrMatrix.from_arrays(as_device(indptr), as_device(indices), values, (M, K), device="cuda")
    return pattern, indptr, indices


def operand(rows, cols, column_major, dtype):
    """A rows x cols operand, uniform in [-1, 1), stored row- or column-major (a transposed view)."""
    if column_major:
        return (torch.rand(cols, rows, device="cuda") * 2 - 1).to(dtype).t()
    return (torch.rand(rows, cols, device="cuda") * 2 - 1).to(dtype)


def check(out, x, y, indptr, indices, bh, bw, rng):
    """16 random stored blocks against float64, with a bound from the sum of |products|."""
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    for b in rng.choice(len(indices), size=min(16, len(indices)), replace=False):
        xs = x[rows[b] * bh:(rows[b] + 1) * bh].double()
        ys = y[:, indices[b] * bw:(indices[b] + 1) * bw].double()
        expected = xs @ ys
        bound = (xs.abs() @ ys.abs()) * 2e-2 + 1e-3
        got = out[b].double()
        if not torch.isfinite(got).all() or ((got - expected).abs() > bound).any():
            raise SystemExit(f"block {b} (block row {rows[b]}, column {indices[b]}) is wrong")


def forced_variants(bh, bw, x_cols, y_cols, dtype_name):
    """The case's sm90 variant and the sm80 one with the widest square tile dividing the block."""
    layout = ("_xc" if x_cols else "") + ("_yc" if y_cols else "_yr")
    side = max(s for s in (128, 64, 32, 16) if bh % s == 0 and bw % s == 0)
    names = [f"sm90_sddmm_{dtype_name}_wgmma_b{bh}x{bw}{layout}",
             f"sm80_sddmm_{dtype_name}_mma16816_t{side}x{side}{layout}"]
    listed = bsrmm.variants(kind="sddmm")
    missing = [name for name in names if name not in listed]
    if missing:
        raise SystemExit(f"this build has no SDDMM variant {missing}")
    return names


def run_case(bh, bw, density, x_cols, y_cols, dtype_name, rng, vs_sm80):
    dtype = DTYPES[dtype_name]
    pattern, indptr, indices = random_pattern(bh, bw, density, dtype, rng)
    x = operand(M, T, x_cols, dtype)
    y = operand(T, K, y_cols, dtype)
    dense_ms = time_cuda(lambda i: torch.mm(x, y), 1)["median"]
    dense = 2.0 * M * K * T / (dense_ms * 1e-3) / 1e12
    layout = ("xc" if x_cols else "xr") + "_" + ("yc" if y_cols else "yr")
    for variant in forced_variants(bh, bw, x_cols, y_cols, dtype_name) if vs_sm80 else [None]:
        # Poisoned afresh for each kernel: a block it skipped would keep the NaN.
        out = torch.full((len(indices), bh, bw), float("nan"), dtype=dtype, device="cuda")
        ctx = bsrmm.Context("cuda", variant=variant)
        bsrmm.sddmm(pattern, x, y, out=out, context=ctx)
        torch.cuda.synchronize()
        check(out, x, y, indptr, indices, bh, bw, rng)
        ms = time_cuda(lambda i, out=out, ctx=ctx: bsrmm.sddmm(pattern, x, y, out=out, context=ctx), 1)["median"]
        tflops = 2.0 * len(indices) * bh * bw * T / (ms * 1e-3) / 1e12
        ran = ctx.last_variant + (" (forced)" if variant else "")
        print(f"b{bh}x{bw}  d {density:<5}  {layout}  {ran:<45} {ms:8.3f} ms"
              f"  {tflops:6.1f} TFLOPS   dense cuBLAS {dense:6.1f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="f16")
    parser.add_argument("--all-shapes", action="store_true", help="also 128x64 and 64x128 blocks")
    parser.add_argument("--vs-sm80", action="store_true",
                        help="force the sm90 and the sm80 SDDMM variant of each case, one row each")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    shapes = [(128, 128), (64, 64)] + ([(128, 64), (64, 128)] if args.all_shapes else [])
    print(f"{torch.cuda.get_device_name()}  {args.dtype}  M = K = {M}, T = {T}")
    for bh, bw in shapes:
        for density in (0.125, 0.25, 0.5):
            for x_cols in (False, True):
                for y_cols in (False, True):
                    run_case(bh, bw, density, x_cols, y_cols, args.dtype, rng, args.vs_sm80)


if __name__ == "__main__":
    main()
