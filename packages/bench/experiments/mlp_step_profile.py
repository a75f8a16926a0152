"""Where a BsrLinear MLP training step spends its time (issue 25), on one GPU.

For each MLP of the training suite's shape (4096 -> 14336 -> 4096, 8192 tokens, bf16; plain or
SiLU-gated; blocks 64 / 128; d 0.125 / 0.25 / 0.5) it times fwd + bwd with CUDA events, twice
in alternation:
  - "core": W^T's values for dX written by the core (`_core.transpose_step_values`, main);
  - "gather": the same values by the torch gather bsrmm.torch used before (index_select from the
    transposed view, written into the same buffer), patched in for the comparison.
Then one step of each --profile configuration under torch.profiler: CUDA time per kernel name,
so a step's time is split into multiplies, SDDMMs, transposes and elementwise work.

    python3 packages/bench/experiments/mlp_step_profile.py [--mlp plain gated] [--block 64 128]
        [--density 0.125 0.25 0.5] [--profile plain:64:0.5 ...] [--steps 10]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bsrmm_bench.training import mlp  # noqa: E402

D_MODEL, D_FF, TOKENS = 4096, 14336, 8192


def build(kind: str, block: int, density: float):
    import bsrmm.torch as bt

    case = SimpleNamespace(params={"mlp": kind, "tokens": TOKENS, "d_model": D_MODEL, "d_ff": D_FF},
                           block=block, density=density, dtype="bfloat16", seed=2)
    ops = mlp.build(case, "cuda")
    fused = {"up": None if ops.gated else "gelu", "gate": "silu", "down": None}
    layers = {}
    for name, w in ops.layers.items():
        linear = torch.nn.Linear(w.shape[1], w.shape[0], bias=False, device="cuda", dtype=torch.bfloat16)
        with torch.no_grad():
            linear.weight.copy_(w.dense)
        layers[name] = bt.BsrLinear.from_linear(linear, block, mask=w.mask, activation=fused[name])
    forward = mlp.compose(ops, lambda n, h: layers[n](h), lambda h: h, lambda h: h)
    params = [layers[n].values for n in ops.layers]
    return ops, layers, forward, params


def gather_sources(layers) -> dict:
    """For each layer's values (by address): the index of W's block that each block of W^T is."""
    sources = {}
    for layer in layers.values():
        indptr, indices = layer.indptr.cpu(), layer.indices.cpu()
        rows = torch.repeat_interleave(torch.arange(indptr.numel() - 1), indptr.diff())
        source = torch.argsort(indices * max(indptr.numel() - 1, 1) + rows, stable=True)
        sources[layer.values.data_ptr()] = source.cuda()
    return sources


def patched_gather(sources):
    def transpose_step_values(ctx, like, values, out):
        torch.index_select(values.transpose(1, 2), 0, sources[values.data_ptr()], out=out)
        return True
    return transpose_step_values


def time_steps(forward, ops, params, steps: int) -> float:
    for _ in range(2):
        mlp.step_outputs(forward, ops.x, params, ops.dy)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        mlp.step_outputs(forward, ops.x, params, ops.dy)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / steps


def profile(forward, ops, params, label: str) -> None:
    from torch.profiler import ProfilerActivity, profile as torch_profile

    for _ in range(2):
        mlp.step_outputs(forward, ops.x, params, ops.dy)
    torch.cuda.synchronize()
    with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            mlp.step_outputs(forward, ops.x, params, ops.dy)
        torch.cuda.synchronize()
    rows = []
    for event in prof.key_averages():
        cuda_us = getattr(event, "device_time_total", None) or getattr(event, "cuda_time_total", 0)
        if cuda_us > 0:
            rows.append((cuda_us / 3, event.count // 3, event.key))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    print(f"\n[profile] {label}: {total / 1e3:.3f} ms of kernels per step")
    for us, count, name in rows[:25]:
        print(f"  {us / 1e3:8.3f} ms  x{count:<3d} {name[:110]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mlp", nargs="+", default=["plain", "gated"])
    parser.add_argument("--block", nargs="+", type=int, default=[64, 128])
    parser.add_argument("--density", nargs="+", type=float, default=[0.125, 0.25, 0.5])
    parser.add_argument("--profile", nargs="*", default=["plain:64:0.5", "plain:128:0.25"])
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    from bsrmm.torch import _ops

    core_transpose = _ops._core.transpose_step_values
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("mlp     block density  core ms  gather ms  (fwd + bwd per step, CUDA events)")
    for kind in args.mlp:
        for block in args.block:
            for density in args.density:
                t0 = time.perf_counter()
                ops, layers, forward, params = build(kind, block, density)
                patched = patched_gather(gather_sources(layers))
                times = {"core": [], "gather": []}
                for _ in range(2):
                    for name, fn in (("core", core_transpose), ("gather", patched)):
                        _ops._core.transpose_step_values = fn
                        times[name].append(time_steps(forward, ops, params, args.steps))
                _ops._core.transpose_step_values = core_transpose
                core, gather = min(times["core"]), min(times["gather"])
                print(f"{kind:7s} {block:5d} {density:7.3f} {core:8.3f} {gather:10.3f}"
                      f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
                if f"{kind}:{block}:{density:g}" in args.profile:
                    profile(forward, ops, params, f"{kind} b{block} d{density:g}")
                del ops, layers, forward, params
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
