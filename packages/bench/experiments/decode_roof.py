"""What reading the decode cell's 16.8 MB of fp16 costs on this GPU, in kernel time (the
profiler's CUDA activity per call), beside bsrmm's own kernel on that cell (8192^2, block 64,
d 1/8, N = 1 / 2 / 4, `warprows` forced): the same bytes as a dense GEMV (cuBLAS, 8192 x 1024
fp16 times a vector) and a GEMM at N = 2, a read-only reduction (torch.sum), a device-to-device
copy, a one-element fill (the floor of any kernel); every operand rotated over 8 copies, past
the 50 MB L2. Run on the GPU machine from the repo root with bsrmm and torch importable:

    python3 packages/bench/experiments/decode_roof.py
"""
import pathlib
import sys

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

import bsrmm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # packages/bench
from bsrmm_bench import patterns  # noqa: E402

COPIES = 8  # of every operand: 8 x 16.8 MB, past the 50 MB L2


def kus(calls, runs=60):
    """Mean kernel microseconds per call, cycling through `calls`, and the kernels' names."""
    for call in calls:
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(runs):
            calls[i % len(calls)]()
        torch.cuda.synchronize()
    events = [e for e in prof.key_averages() if e.device_time_total > 0]
    return sum(e.device_time_total for e in events) / runs, ", ".join(sorted({e.key[:40] for e in events}))


def dense_reads():
    """The decode cell's bytes as dense operands: GEMV, GEMM at N = 2, sum, copy; a fill's floor."""
    mats = [torch.randn(8192, 1024, device="cuda", dtype=torch.float16) for _ in range(COPIES)]
    vec = torch.randn(1024, device="cuda", dtype=torch.float16)
    out = torch.empty(8192, device="cuda", dtype=torch.float16)
    print("dense GEMV 8192x1024 fp16 (16.8 MB):", kus([lambda m=m: torch.mv(m, vec, out=out) for m in mats]))
    vec2 = torch.randn(1024, 2, device="cuda", dtype=torch.float16)
    out2 = torch.empty(8192, 2, device="cuda", dtype=torch.float16)
    print("dense GEMM N=2 8192x1024 fp16:", kus([lambda m=m: torch.mm(m, vec2, out=out2) for m in mats]))
    total = torch.empty((), device="cuda", dtype=torch.float32)
    print("sum of 16.8 MB fp16:",
          kus([lambda m=m: torch.sum(m, dim=(0, 1), dtype=torch.float32, out=total) for m in mats]))
    dst = torch.empty_like(mats[0])
    print("copy 16.8 MB:", kus([lambda m=m: dst.copy_(m) for m in mats]))
    tiny = torch.empty(1, device="cuda")
    print("empty-ish kernel (fill 1 element):", kus([lambda: tiny.fill_(1.0)]))
    big = [torch.randn(8192 * 8, 1024, device="cuda", dtype=torch.float16) for _ in range(2)]
    print("sum of 134 MB fp16:",
          kus([lambda m=m: torch.sum(m, dim=(0, 1), dtype=torch.float32, out=total) for m in big]))


def decode_cell():
    """bsrmm's lanes-along-K kernel on the decode cell at N = 1, 2, 4, checked against float64 first."""
    pattern = patterns.generate({"kind": "uniform", "density": 0.125}, 128, 128, 1)
    rng = np.random.default_rng(1)
    values = torch.from_numpy(rng.uniform(-1, 1, (pattern.nnzb, 64, 64))).half()
    indptr, indices = pattern.indptr.astype(np.int32), pattern.indices.astype(np.int32)
    mats = [bsrmm.BsrMatrix.from_arrays(indptr, indices, values, (8192, 8192), device="cuda") for _ in range(COPIES)]
    rows = torch.from_numpy(pattern.row_ids()).cuda()
    cols = torch.from_numpy(pattern.indices.astype(np.int64)).cuda()
    ctx = bsrmm.Context("cuda", variant="narrow_f16_simt_warprows", tuning="off")
    for n in (1, 2, 4):
        b = torch.randn(8192, n, device="cuda", dtype=torch.float16)
        c = torch.full((8192, n), float("nan"), device="cuda", dtype=torch.float16)
        # float64 reference first (C poisoned with NaN): the blocks' products summed per block row
        bsrmm.matmul(mats[0], b, out=c, context=ctx)
        products = torch.bmm(values.double().cuda(), b.double().view(128, 64, n)[cols])
        ref = torch.zeros(128, 64, n, dtype=torch.float64, device="cuda").index_add_(0, rows, products).view(8192, n)
        error = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        assert torch.isfinite(c).all() and error < 4e-3, f"N = {n}: relative error {error}"
        print(f"bsrmm decode N={n} warprows:", kus([lambda a=a: bsrmm.matmul(a, b, out=c, context=ctx) for a in mats]))


if __name__ == "__main__":
    dense_reads()
    decode_cell()
