# probe: N = 8q + r through the column-tail split against what ran before (sm80), kernel time
import torch, bsrmm
from bsrmm.torch import BsrLinear
torch.manual_seed(0)
def gpu_us(f, reps=20):
    for _ in range(6): f()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    s.record()
    for _ in range(reps): f()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / reps * 1e3
for dt, block, dens in ((torch.bfloat16, 64, 0.25), (torch.float16, 128, 0.125), (torch.float16, 64, 0.5)):
    mask = torch.rand(8192 // block, 8192 // block) < dens
    layer = BsrLinear(8192, 8192, block, mask, bias=False, device="cuda", dtype=dt)
    w = layer.to_dense().detach()
    a = bsrmm.BsrMatrix.from_dense(w, (block, block), device="cuda")
    for n in (63, 65, 263, 1031, 2048, 2049, 4095, 8191):
        x = torch.randn(n, 8192, device="cuda", dtype=dt)
        ref = x.float() @ w.float().T
        row = {}
        for label, ctx in (("tuned", bsrmm.Context("cuda")), ("untuned", bsrmm.Context("cuda", tuning="off")),
                           ("sm80", bsrmm.Context("cuda", variant=f"sm80_{'bf16' if dt == torch.bfloat16 else 'f16'}_m64n128k32_s4_w2x2_bcol_mma16816"))):
            out = torch.full((n, 8192), float("nan"), device="cuda", dtype=dt).T
            try:
                us = gpu_us(lambda: bsrmm.matmul(a, x.T, out=out, context=ctx))
            except Exception as err:
                row[label] = f"({type(err).__name__})"; continue
            err = float((out.T.float() - ref).norm() / ref.norm())
            row[label] = f"{us:8.1f} us {ctx.last_variant} err {err:.1e}"
        with torch.no_grad():
            lin = gpu_us(lambda: layer(x))
        print(f"{dt} b{block} d{dens} N {n:5d}: BsrLinear {lin:8.1f} us | " + " | ".join(f"{k}: {v}" for k, v in row.items()), flush=True)
