# probe: per call, GPU kernels and CUDA runtime calls of the torch path and bsrmm.matmul at small / odd N
import time, torch, bsrmm
from bsrmm.torch import BsrLinear
from torch.profiler import profile, ProfilerActivity
torch.manual_seed(0)
dt = torch.bfloat16
mask = torch.rand(128, 128) < 0.25
layer = BsrLinear(8192, 8192, 64, mask, bias=False, device="cuda", dtype=dt)
a = bsrmm.BsrMatrix.from_dense(layer.to_dense().detach(), (64, 64), device="cuda")
ctx = bsrmm.default_context("cuda")
def show(label, f, calls=10):
    for _ in range(8): f()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(50): f()
    t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls): f()
        torch.cuda.synchronize()
    parts = []
    for e in prof.key_averages():
        if e.key.startswith("cuda") and e.key not in ("cudaDeviceSynchronize",) or e.device_time_total > 0 and not e.key.startswith("cuda"):
            n = e.count / calls
            if e.device_time_total > 0 and not e.key.startswith("cuda"):
                parts.append(f"K[{e.key[:60]} x{n:g} {e.device_time_total/e.count:.1f}us]")
            else:
                parts.append(f"{e.key} x{n:g} {e.self_cpu_time_total/e.count:.1f}us")
    print(f"{label:34s} host {(t1-t0)/50*1e6:6.1f} idle {(t2-t0)/50*1e6:6.1f} us/call {ctx.last_variant}\n    " + "; ".join(parts), flush=True)
with torch.no_grad():
    for n in (1, 2, 8, 9, 16, 64, 2048, 2049):
        x = torch.randn(n, 8192, device="cuda", dtype=dt)
        b = x.T
        bt = x.T.contiguous()
        out = torch.empty(8192, n, device="cuda", dtype=dt)
        show(f"BsrLinear N={n}", lambda: layer(x))
        show(f"matmul colmajor B out= N={n}", lambda: bsrmm.matmul(a, b, out=out))
        show(f"matmul rowmajor B out= N={n}", lambda: bsrmm.matmul(a, bt, out=out))
