"""The decode cell (8192^2, block 64, d 1/8, fp16, N = 1) built alone for ncu, beside cuBLAS's
dense GEMV over the same 16.8 MB (8192 x 1024 fp16 times a vector), which decode_roof.py timed
1.6x faster than bsrmm's best kernel. Two calls of each: torch.mv, then bsrmm with `warprows` and
`splitrows` forced (output checked against float64 first). Profile with

    ncu --clock-control none -k regex:'nvjet|gemv|narrow_kernel' -c 6 \
        --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
        --section MemoryWorkloadAnalysis python3 packages/bench/experiments/decode_ncu.py
"""
import pathlib
import sys

import numpy as np
import torch

import bsrmm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # packages/bench
from bsrmm_bench import patterns  # noqa: E402


def main() -> None:
    dense = torch.randn(8192, 1024, device="cuda", dtype=torch.float16)
    vec = torch.randn(1024, device="cuda", dtype=torch.float16)
    out = torch.empty(8192, device="cuda", dtype=torch.float16)
    for _ in range(2):
        torch.mv(dense, vec, out=out)

    pattern = patterns.generate({"kind": "uniform", "density": 0.125}, 128, 128, 1)
    values = torch.from_numpy(np.random.default_rng(1).uniform(-1, 1, (pattern.nnzb, 64, 64))).half()
    a = bsrmm.BsrMatrix.from_arrays(pattern.indptr.astype(np.int32), pattern.indices.astype(np.int32),
                                    values, (8192, 8192), device="cuda")
    b = torch.randn(8192, 1, device="cuda", dtype=torch.float16)
    rows = torch.from_numpy(pattern.row_ids()).cuda()
    cols = torch.from_numpy(pattern.indices.astype(np.int64)).cuda()
    ref = torch.zeros(128, 64, 1, dtype=torch.float64, device="cuda").index_add_(
        0, rows, torch.bmm(values.double().cuda(), b.double().view(128, 64, 1)[cols])).view(8192, 1)
    for variant in ("narrow_f16_simt_warprows", "narrow_f16_simt_splitrows"):
        ctx = bsrmm.Context("cuda", variant=variant, tuning="off")
        c = torch.full((8192, 1), float("nan"), device="cuda", dtype=torch.float16)
        for _ in range(2):
            bsrmm.matmul(a, b, out=c, context=ctx)
        error = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        assert torch.isfinite(c).all() and error < 4e-3, f"{variant}: relative error {error}"
    torch.cuda.synchronize()
    print("decode cell: GEMV, warprows, splitrows ran (2 calls each)", file=sys.stderr)


if __name__ == "__main__":
    main()
