"""The CPU cost of a fused activation (perf-log 61, 63): one BsrLinear (1024 -> 2048, blocks of
32, d 0.25) over 1024 tokens on one thread, with no activation, GELU, ReLU and SiLU fused, the
mean of 5 runs after 4 warm-ups; beside it torch's own tanh-GELU over an output of that size.

    python packages/bench/experiments/cpu_activation_cost.py
"""
import time, torch
from bsrmm.torch import BsrLinear
torch.set_num_threads(1)
g = torch.Generator().manual_seed(0)
for act in ("none", "gelu", "relu", "silu"):
    mask = torch.rand(2048 // 32, 1024 // 32, generator=g) < 0.25
    layer = BsrLinear(1024, 2048, 32, mask, activation=None if act == "none" else act)
    x = torch.randn(1024, 1024)
    with torch.no_grad():
        for _ in range(4): layer(x)
        t = time.perf_counter(); n = 5
        for _ in range(n): layer(x)
        print(act, (time.perf_counter() - t) / n * 1e3, "ms")
    y = torch.empty(1024, 2048); t = time.perf_counter(); torch.nn.functional.gelu(y, approximate="tanh"); print(" torch gelu tanh alone", (time.perf_counter()-t)*1e3)
