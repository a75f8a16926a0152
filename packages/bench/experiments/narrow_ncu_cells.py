"""Two narrow-kernel cells of the coverage suite, built alone for ncu: bf16 1x1 blocks of a 2-D
9-point stencil (128^2 grid) at N = 1024 (lanes along N) and f32 4x4 blocks of a 3-D 27-point
stencil (64^3 grid) at N = 1 (lanes along K, where cuSPARSE's bsrmv is faster). Three untuned
calls; profile one with
    ncu --section SpeedOfLight --section WarpStateStats -k regex:'column_lanes|narrow_kernel' -c 1 \
        python3 packages/bench/experiments/narrow_ncu_cells.py {1x1|4x4}
(session 21: both issue-bound, results/h100-sxm-2026-11-26-s21-nlanes/ncu_*.txt)."""
import sys
import ml_dtypes
import numpy as np
import scipy.sparse as sp
import torch

import bsrmm

def stencil2d(n):  # 9-point on n x n
    idx = np.arange(n * n).reshape(n, n); rows, cols = [], []
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            a = idx[max(0, -dy):n + min(0, -dy), max(0, -dx):n + min(0, -dx)]
            b = idx[max(0, dy):n + min(0, dy), max(0, dx):n + min(0, dx)]
            rows.append(a.ravel()); cols.append(b.ravel())
    r = np.concatenate(rows); c = np.concatenate(cols)
    return sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n * n, n * n))

def stencil3d(n):
    idx = np.arange(n ** 3).reshape(n, n, n); rows, cols = [], []
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                a = idx[max(0, -dz):n + min(0, -dz), max(0, -dy):n + min(0, -dy), max(0, -dx):n + min(0, -dx)]
                b = idx[max(0, dz):n + min(0, dz), max(0, dy):n + min(0, dy), max(0, dx):n + min(0, dx)]
                rows.append(a.ravel()); cols.append(b.ravel())
    r = np.concatenate(rows); c = np.concatenate(cols)
    return sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n ** 3, n ** 3))

which = sys.argv[1]
rng = np.random.default_rng(0)
if which == "1x1":
    s = stencil2d(128); s.sort_indices()
    vals = rng.uniform(-1, 1, (s.nnz, 1, 1)).astype(np.float32)
    a = bsrmm.BsrMatrix.from_arrays(s.indptr.astype(np.int32), s.indices.astype(np.int32), vals.astype(ml_dtypes.bfloat16), s.shape, device="cuda")
    b = torch.randn(s.shape[1], 1024, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(s.shape[0], 1024, device="cuda", dtype=torch.bfloat16)
else:
    s = stencil3d(64); s.sort_indices()
    vals = rng.uniform(-1, 1, (s.nnz, 4, 4)).astype(np.float32)
    a = bsrmm.BsrMatrix.from_arrays(s.indptr.astype(np.int32), s.indices.astype(np.int32), vals, (s.shape[0] * 4, s.shape[1] * 4), device="cuda")
    b = torch.randn(s.shape[1] * 4, 1, device="cuda", dtype=torch.float32)
    c = torch.empty(s.shape[0] * 4, 1, device="cuda", dtype=torch.float32)
ctx = bsrmm.Context("cuda", tuning="off")
for _ in range(3):
    bsrmm.matmul(a, b, out=c, context=ctx)
torch.cuda.synchronize()
print(which, ctx.last_variant, file=sys.stderr)
