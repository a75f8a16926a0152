"""Host time of one BsrLinear forward at N = 1 on the CPU (perf-log 62, 94): the eager path
(the op's body called directly, no_grad) against the same call through torch's dispatcher
(the custom op), the one-call step product (_core.matmul_step) against the general path it
falls back to (BsrMatrix.with_values + bsrmm.matmul), beside nn.Linear, with and without a bias. The layer is tiny (64 x 64, blocks of
32), so what is timed is the Python and C++ around the kernel, which on CUDA sits in front of
every decode-size kernel. One thread; the minimum of 5 rounds of 3000 calls.

    python packages/bench/experiments/torch_step_overhead.py
"""
from __future__ import annotations

import time
from typing import Callable

import torch

import bsrmm.torch as bt
from bsrmm.torch import BsrLinear


def _microseconds(call: Callable[[], object], calls: int = 3000, rounds: int = 5) -> float:
    for _ in range(200):
        call()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def main() -> None:
    torch.set_num_threads(1)
    x = torch.randn(1, 64)
    for bias in (False, True):
        layer = BsrLinear(64, 64, 32, torch.ones(2, 2, dtype=torch.bool), bias=bias)
        dense = torch.nn.Linear(64, 64, bias=bias)
        with torch.no_grad():
            one_call = _microseconds(lambda: layer(x))
            eager = bt._ops.runs_eagerly
            bt._ops.runs_eagerly = lambda *tensors: False  # every call through the op
            try:
                through_op = _microseconds(lambda: layer(x))
            finally:
                bt._ops.runs_eagerly = eager
            step = bt._ops._core.matmul_step
            bt._ops._core.matmul_step = lambda *arguments: False  # every call declines
            try:
                general = _microseconds(lambda: layer(x))
            finally:
                bt._ops._core.matmul_step = step
            linear = _microseconds(lambda: dense(x))
        print(f"bias={bias}: BsrLinear eager {one_call:.1f} us, through the op {through_op:.1f} us, "
              f"general path {general:.1f} us, nn.Linear {linear:.1f} us")


if __name__ == "__main__":
    main()
