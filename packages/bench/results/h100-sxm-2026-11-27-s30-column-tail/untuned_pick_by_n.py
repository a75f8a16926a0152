import torch, bsrmm
torch.manual_seed(0)
mask = torch.rand(128, 128) < 0.25
from bsrmm.torch import BsrLinear
layer = BsrLinear(8192, 8192, 64, mask, bias=False, device="cuda", dtype=torch.bfloat16)
a = bsrmm.BsrMatrix.from_dense(layer.to_dense().detach(), (64, 64), device="cuda")
ctx = bsrmm.Context("cuda", tuning="off")
for n in (65, 263, 1023, 1025, 2049):
    x = torch.randn(n, 8192, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(n, 8192, device="cuda", dtype=torch.bfloat16).T
    bsrmm.matmul(a, x.T, out=out, context=ctx)
    print(n, ctx.last_variant, flush=True)
