"""The f64 4x4 27-point stencil at N = 1 (2^20 rows) on `narrow_f64_simt_mlanes`, run three times for ncu."""
import sys, pathlib
import numpy as np, torch
import bsrmm
sys.path.insert(0, str(pathlib.Path("packages/bench").resolve()))
from bsrmm_bench import patterns
pat = patterns.generate({"kind": "stencil", "dims": 3, "points": 27}, 262144, 262144, 1)
ip = torch.from_numpy(pat.indptr.astype(np.int32)).cuda(); ix = torch.from_numpy(pat.indices.astype(np.int32)).cuda()
a = bsrmm.BsrMatrix.from_arrays(ip, ix, torch.rand((pat.nnzb, 4, 4), device="cuda", dtype=torch.float64), (1048576, 1048576), device="cuda")
b = torch.randn(1048576, 1, device="cuda", dtype=torch.float64); c = torch.empty_like(b)
ctx = bsrmm.Context("cuda", tuning="off", variant="narrow_f64_simt_mlanes")
for _ in range(3): bsrmm.matmul(a, b, out=c, context=ctx)
torch.cuda.synchronize()
