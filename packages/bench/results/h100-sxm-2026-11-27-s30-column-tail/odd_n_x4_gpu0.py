# probe: one BsrLinear (8192 in -> 8192 out, b64 d0.25 bf16) forward at token counts around 2048/2731
import sys, torch
from bsrmm.torch import BsrLinear
from bsrmm.torch._sm_budget import sm_budget
torch.manual_seed(0)
inf, outf = int(sys.argv[1]) if len(sys.argv) > 1 else 8192, 8192
mask = torch.rand(outf // 64, inf // 64) < 0.25
layer = BsrLinear(inf, outf, 64, mask, bias=False, device="cuda", dtype=torch.bfloat16)
for budget in (0, 100):
  for n in (2048, 2049, 2056, 2730, 2731, 2736, 2047, 1639, 1640, 4096, 4095, 8192, 8191, 1, 7, 9, 100):
    x = torch.randn(n, inf, device="cuda", dtype=torch.bfloat16)
    with sm_budget(budget), torch.no_grad():
        for _ in range(6): y = layer(x)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record()
        for _ in range(20): y = layer(x)
        e.record(); torch.cuda.synchronize()
    ms = s.elapsed_time(e) / 20
    ref = (x.float() @ layer.to_dense().float().T)
    err = float((y.float() - ref).norm() / ref.norm()) if ref is not None else float("nan")
    print(f"budget {budget:3d} N {n:5d}: {ms*1e3:8.1f} us  {2*n*inf*outf*0.25/ms/1e9:6.1f} TFLOPS  err {err:.1e}", flush=True)
