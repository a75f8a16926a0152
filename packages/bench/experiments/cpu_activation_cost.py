"""The CPU cost of a fused activation (perf-log 61, 63): one BsrLinear (1024 -> 2048, blocks of
32, d 0.25) over 1024 tokens on one thread, with no activation and with ReLU, GELU and SiLU
fused (the mean of 5 calls after 4 warm-ups), beside torch's own tanh-GELU over an output of
that size.

    python packages/bench/experiments/cpu_activation_cost.py
"""
from __future__ import annotations

import time
from typing import Callable

import torch

from bsrmm.torch import BsrLinear


def _milliseconds(call: Callable[[], object], warmups: int = 4, calls: int = 5) -> float:
    for _ in range(warmups):
        call()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e3


def main() -> None:
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    mask = torch.rand(2048 // 32, 1024 // 32, generator=generator) < 0.25
    x = torch.randn(1024, 1024, generator=generator)
    with torch.no_grad():
        for activation in (None, "relu", "gelu", "silu"):
            layer = BsrLinear(1024, 2048, 32, mask, activation=activation)
            print(f"{activation or 'none'}: {_milliseconds(lambda: layer(x)):.2f} ms")
        output = torch.randn(1024, 2048, generator=generator)
        gelu = _milliseconds(lambda: torch.nn.functional.gelu(output, approximate="tanh"))
        print(f"torch's tanh-GELU alone over the output: {gelu:.2f} ms")


if __name__ == "__main__":
    main()
