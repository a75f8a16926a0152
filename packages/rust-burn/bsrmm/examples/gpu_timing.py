"""The Python twin of gpu_timing.rs: the same product through the Python binding on torch CUDA
tensors, timed the same way (warm-up, then ITERS multiplies queued back to back, timed to the
final synchronisation), so the three times (Python, Rust, Burn) compare directly.

    python3 packages/rust-burn/bsrmm/examples/gpu_timing.py [M K N BLOCK ITERS]
"""

import sys
import time

import numpy as np
import torch

import bsrmm

defaults = [8192, 8192, 4096, 64, 50]
m, k, n, block, iters = [int(arg) for arg in sys.argv[1:6]] + defaults[len(sys.argv[1:6]) :]
if not torch.cuda.is_available():
    sys.exit("gpu_timing.py: no CUDA device")
# In block row r, block column group j (8 columns wide) holds one block, at 8j + (3r + 5j) mod 8.
groups = k // block // 8
indices = np.array([8 * j + (3 * r + 5 * j) % 8 for r in range(m // block) for j in range(groups)], np.int32)
indptr = np.arange(0, len(indices) + 1, groups, dtype=np.int32)
rng = np.random.default_rng(7)
data = rng.uniform(-1, 1, (len(indices), block, block)).astype(np.float16)
a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (m, k), device="cuda:0")
b = torch.from_numpy(rng.uniform(-1, 1, (k, n)).astype(np.float16)).cuda()
c = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")  # poisoned

for _ in range(3):
    bsrmm.matmul(a, b, out=c)
torch.cuda.synchronize()
start = time.perf_counter()
for _ in range(iters):
    bsrmm.matmul(a, b, out=c)
torch.cuda.synchronize()
ms = (time.perf_counter() - start) * 1e3 / iters
tflops = 2 * a.nnz * n / (ms * 1e-3) / 1e12
print(f"python bsrmm (torch CUDA tensors): {ms:.3f} ms per multiply ({tflops:.0f} effective TFLOPS), "
      f"A {m}x{k} fp16 {block}x{block} blocks, {a.nnzb} stored, B {k}x{n}, {iters} iterations")

# 256 elements of C against float64.
pick = np.random.default_rng(8)
host_c = c.float().cpu().numpy()
host_b = b.double().cpu().numpy()
for i, j in zip(pick.integers(0, m, 256), pick.integers(0, n, 256)):
    r = i // block
    blocks = range(indptr[r], indptr[r + 1])
    terms = np.concatenate([data[t, i % block].astype(np.float64) * host_b[indices[t] * block:(indices[t] + 1) * block, j] for t in blocks])
    want = terms.sum()
    if abs(host_c[i, j] - want) > 2e-3 * (np.abs(terms).sum() + abs(want)):
        sys.exit(f"gpu_timing.py: C[{i}][{j}] = {host_c[i, j]}, float64 reference {want}")
print("checked 256 elements of C against float64: ok")
