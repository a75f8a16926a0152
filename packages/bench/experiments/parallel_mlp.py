"""Tensor-parallel block-sparse MLP (issue 28): ColumnParallelBsrLinear -> gelu (fused) ->
RowParallelBsrLinear on 1, 2 or 4 ranks, forward and forward + backward, each rank's result
checked against the one-GPU BsrLinear pair on the same input before anything is timed.

The issue's case (the default): d_model 8192, hidden 32768, blocks of 64, density 0.25, bf16,
8192 tokens. Each world size is one torchrun; the summary divides the one-rank time (its
fastest row) by the others' (issue 28 asks >= 1.8x on 2 GPUs and >= 3.2x on 4, forward and
backward):

    for n in 1 2 4; do
      torchrun --standalone --nproc-per-node $n packages/bench/experiments/parallel_mlp.py \\
          --out packages/bench/results/parallel_mlp_w$n.json
    done
    python3 packages/bench/experiments/parallel_mlp.py --summarize packages/bench/results/parallel_mlp_w*.json

Without GPUs, the cuts alone (each rank's stored blocks and the imbalance, for the uniform
case and a power-law one), in one process:

    python3 packages/bench/experiments/parallel_mlp.py --plan 1,2,4 [--pattern power-law]

Every run also times the row-parallel reduction overlapped with the multiply (--chunks: the
tokens in that many chunks, each chunk's async all-reduce running under the next chunk's
multiply; several counts comma-separated) beside the plain all-reduce, once per count and
--margins entry: the SMs each chunk's multiply
leaves to NCCL (comm_sm_margin; 0: none, the multiply's persistent kernels on every SM, which
the 2026-11-25 s14 runs measured: no overlap). Rows "chunks_1" (plain) and
"chunks_4_margin_16" (4 chunks, 16 SMs left); "default": the layer's own defaults
(overlap_chunks=None, comm_sm_margin=32). Only the forward is chunked; the backward of every
row is the whole layer's. (Rows "pipeline_*", in the 2026-11-26 s18 results, were a
ParallelBsrMLP pipelined over both layers, since removed: perf-log 67.) On the CPU (gloo), a
small case:

    torchrun --standalone --nproc-per-node 2 packages/bench/experiments/parallel_mlp.py --cpu

Times: forward (autograd recording, as in training), inference (torch.no_grad: activations
fused) and forward + backward; per step, every rank synchronised before and after (CUDA:
torch.cuda.synchronize), the slowest rank's time, the median of --iters steps after --warmup
steps (bsrmm tunes a problem on its third call, so the warm-up covers tuning).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from typing import Any, Callable, Dict, List

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from bsrmm.torch import BsrLinear
from bsrmm.torch.parallel import (ColumnParallelBsrLinear, RowParallelBsrLinear, pair_feature_bounds,
                                  plan_shards)

CPU_CASE = {"d_model": 1024, "hidden": 4096, "block": 32, "density": 0.25, "tokens": 1024,
            "dtype": "float32"}
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d-model", type=int, default=8192)
    parser.add_argument("--hidden", type=int, default=32768)
    parser.add_argument("--block", type=int, default=64)
    parser.add_argument("--density", type=float, default=0.25)
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bfloat16")
    parser.add_argument("--chunks", default="4",
                        help="overlap: tokens in this many chunks; several counts comma-separated, "
                             "one row per count and margin")
    parser.add_argument("--margins", default="0,8,16,32",
                        help="overlap: the SMs left to NCCL, one timed row per entry (comma-separated)")
    parser.add_argument("--cap-ctas", action="store_true",
                        help="overlap: also one row per margin whose reduction runs in a group of its own "
                             "with NCCL's CTAs capped at the margin (ProcessGroupNCCL.Options.config.max_ctas)")
    parser.add_argument("--profile", metavar="ROWS", default="", help="record the kernels of two forward "
                        "steps of these rows (comma-separated, e.g. chunks_1,chunks_4_margin_16) on the first "
                        "and last rank, into the JSON")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--cpu", action="store_true", help=f"gloo on the CPU, the small case {CPU_CASE}")
    parser.add_argument("--pattern", choices=("uniform", "power-law"), default="uniform")
    parser.add_argument("--plan", metavar="SIZES", help="no run: print the per-rank work of the cuts "
                        "at these world sizes (e.g. 1,2,4), balanced by nnz and by rows")
    parser.add_argument("--out", help="write the results as JSON (rank 0)")
    parser.add_argument("--summarize", nargs="+", metavar="JSON", help="print the scaling of runs")
    arguments = parser.parse_args()
    if arguments.cpu:
        for name, value in CPU_CASE.items():
            if getattr(arguments, name) == parser.get_default(name):
                setattr(arguments, name, value)
    return arguments


def _row_densities(rows: int, density: float, pattern: str) -> torch.Tensor:
    """Each block row's share of stored blocks: all --density ("uniform"), or falling as
    (i + 1)^-0.8 from the first row, scaled to --density on average ("power-law": the heavy rows
    together, the worst case for cutting by rows)."""
    if pattern == "uniform":
        return torch.full((rows, 1), density)
    weights = (torch.arange(rows, dtype=torch.float64) + 1) ** -0.8
    return (weights * density * rows / weights.sum()).clamp(max=1.0)[:, None].float()


def _mlp(arguments: argparse.Namespace, device: torch.device) -> List[BsrLinear]:
    """The one-GPU pair, the same on every rank (seeded), random blocks at --density per
    --pattern (the second weight's block columns follow the first's block rows)."""
    generator = torch.Generator().manual_seed(0)
    dtype, block = DTYPES[arguments.dtype], arguments.block
    hidden_share = _row_densities(arguments.hidden // block, arguments.density, arguments.pattern)
    layers = []
    for out_features, in_features, activation in ((arguments.hidden, arguments.d_model, "gelu"),
                                                  (arguments.d_model, arguments.hidden, None)):
        grid = (out_features // block, in_features // block)
        share = hidden_share if activation else hidden_share.T
        mask = torch.rand(grid, generator=generator) < share
        torch.manual_seed(int(torch.randint(1 << 30, (1,), generator=generator)))
        layers.append(BsrLinear(in_features, out_features, block, mask, activation=activation,
                                device=device, dtype=dtype))
    return layers


def _time(step: Callable[[], Any], arguments: argparse.Namespace, device: torch.device) -> float:
    """The median over --iters of the slowest rank's time for ``step``, in milliseconds."""
    def synchronise() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        dist.barrier()

    times = []
    for i in range(arguments.warmup + arguments.iters):
        synchronise()
        start = time.perf_counter()
        step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        # On the device: NCCL reduces CUDA tensors only.
        elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64, device=device)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        if i >= arguments.warmup:
            times.append(float(elapsed) * 1e3)
    return statistics.median(times)


def _relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    got, want = got.detach().double(), want.detach().double()
    return float((got - want).norm() / want.norm())


def _run(arguments: argparse.Namespace, device: torch.device) -> Dict[str, Any]:
    world_size = dist.get_world_size()
    first, second = _mlp(arguments, device)
    bounds = pair_feature_bounds(first, second, world_size)
    column = ColumnParallelBsrLinear.from_bsr_linear(first, feature_bounds=bounds)
    settings: Dict[str, Any] = {"chunks_1": (1, 0)}
    for chunks in (int(count) for count in arguments.chunks.split(",")):
        if chunks == 1:
            continue
        settings.update({f"chunks_{chunks}_margin_{margin}": (chunks, margin)
                         for margin in (int(m) for m in arguments.margins.split(","))})
    groups: Dict[str, Any] = {label: None for label in settings}
    if arguments.cap_ctas and device.type == "cuda" and len(settings) > 1:
        for label, (chunks, margin) in list(settings.items()):
            if margin > 0:
                settings[f"{label}_ctas_{margin}"] = (chunks, margin)
                groups[f"{label}_ctas_{margin}"] = _capped_group(margin)
    rows = {label: RowParallelBsrLinear.from_bsr_linear(second, groups[label], feature_bounds=bounds,
                                                        overlap_chunks=chunks, comm_sm_margin=margin)
            for label, (chunks, margin) in settings.items()}
    rows["default"] = RowParallelBsrLinear.from_bsr_linear(second, feature_bounds=bounds)  # overlap_chunks=None
    steps: Dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
        label: (lambda x, row=row: row(column(x))) for label, row in rows.items()}
    torch.manual_seed(1)
    x = torch.randn(arguments.tokens, arguments.d_model, device=device, dtype=DTYPES[arguments.dtype])
    xr = x.clone().requires_grad_(True)
    reference = second(first(xr))
    reference.float().square().sum().backward()
    result: Dict[str, Any] = {
        "world_size": world_size, "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "case": {k: getattr(arguments, k)
                 for k in ("d_model", "hidden", "block", "density", "tokens", "dtype", "pattern")},
        "column_plan": column.plan.report(), "row_plan": rows["chunks_1"].plan.report(),
    }
    if device.type == "cuda":
        result["sm_count"] = torch.cuda.get_device_properties(device).multi_processor_count
    for label, run in steps.items():
        try:
            result[label] = _measure(label, run, x, reference, xr, arguments, device)
        except Exception as error:  # noqa: BLE001 - a row's failure (the same on every rank) is data
            result[label] = {"error": f"{type(error).__name__}: {error}"[:400]}
            print(f"{label}: {result[label]['error']}", flush=True)
    result["per_rank"] = _per_rank(column, rows["chunks_1"], x, arguments, device)
    profiled = [label for label in arguments.profile.split(",") if label in steps]
    if profiled:
        result["profile"] = {label: _profile(lambda: steps[label](x), device) for label in profiled}
    return result


def _measure(label: str, run: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
             reference: torch.Tensor, xr: torch.Tensor, arguments: argparse.Namespace,
             device: torch.device) -> Dict[str, float]:
    """One row: its output and dX checked against the one-GPU pair, then its times."""
    xp = x.clone().requires_grad_(True)
    y = run(xp)
    y.float().square().sum().backward()
    assert xp.grad is not None and xr.grad is not None
    errors = {"y": _relative_error(y, reference), "dx": _relative_error(xp.grad, xr.grad)}
    worst = torch.tensor([max(errors.values())], dtype=torch.float64, device=device)
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    if float(worst) > 2e-2:
        raise SystemExit(f"{label}: the parallel MLP differs from the one-GPU layer "
                         f"(relative errors {errors})")
    forward_ms = _time(lambda: run(x), arguments, device)
    with torch.no_grad():
        inference_ms = _time(lambda: run(x), arguments, device)
    xt = x.clone().requires_grad_(True)
    step_ms = _time(lambda: run(xt).float().square().sum().backward(), arguments, device)
    return {"forward_ms": forward_ms, "forward_backward_ms": step_ms, "inference_ms": inference_ms,
            "max_relative_error": float(worst)}


def _capped_group(ctas: int) -> Any:
    """A group of every rank whose NCCL kernels take at most ``ctas`` CTAs (so at most that many
    SMs while a multiply holds the rest), on a high-priority stream."""
    options = dist.ProcessGroupNCCL.Options(is_high_priority_stream=True)
    options.config.max_ctas = ctas
    return dist.new_group(list(range(dist.get_world_size())), backend="nccl", pg_options=options)


def _own_ms(step: Callable[[], Any], arguments: argparse.Namespace, device: torch.device) -> float:
    """The median over --iters of this rank's own time for ``step`` (no barrier inside)."""
    times = []
    for i in range(arguments.warmup + arguments.iters):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if i >= arguments.warmup:
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _per_rank(column: ColumnParallelBsrLinear, row: RowParallelBsrLinear, x: torch.Tensor,
              arguments: argparse.Namespace, device: torch.device) -> List[Dict[str, Any]]:
    """Each rank's work and its own times: the column shard's multiply (gelu fused), the row
    shard's, and the all-reduce of the row's output alone (the slowest rank's time)."""
    with torch.no_grad():
        hidden = column.local(x)
        partial = row.local(hidden)
        mine = {"rank": dist.get_rank(), "column_nnzb": column.local.nnzb, "row_nnzb": row.local.nnzb,
                "column_ms": _own_ms(lambda: column.local(x), arguments, device),
                "row_ms": _own_ms(lambda: row.local(hidden), arguments, device),
                "all_reduce_ms": _time(lambda: dist.all_reduce(partial.clone()), arguments, device)}
    everyone: List[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    return everyone


def _profile(step: Callable[[], Any], device: torch.device) -> Dict[str, Any]:
    """The kernels (and copies) of the second of two steps on the first and last rank: name,
    stream, start and length in microseconds from the step's first kernel."""
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with torch.no_grad(), profile(activities=activities) as prof:
        for _ in range(2):
            dist.barrier()
            step()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
    with tempfile.NamedTemporaryFile(suffix=".json") as trace:
        prof.export_chrome_trace(trace.name)
        with open(trace.name) as exported:
            events = json.load(exported)["traceEvents"]
    kernels = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
                     key=lambda e: e["ts"])
    half = len(kernels) // 2
    second = kernels[half:]
    origin = second[0]["ts"] if second else 0.0
    mine = [[e["name"][:60], e.get("args", {}).get("stream"), round(e["ts"] - origin, 1), round(e["dur"], 1)]
            for e in second]
    everyone: List[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    return {"rank_0": everyone[0], f"rank_{len(everyone) - 1}": everyone[-1]}


def _print_plans(arguments: argparse.Namespace) -> None:
    """The cuts of the case's pair (one process, no group: what each rank would hold)."""
    first, second = _mlp(arguments, torch.device("cpu"))
    print(f"first {first.out_features} x {first.in_features} nnzb {first.nnzb}, second "
          f"{second.out_features} x {second.in_features} nnzb {second.nnzb}, {arguments.pattern}")
    for world_size in (int(size) for size in arguments.plan.split(",")):
        for balance in ("nnz", "rows"):
            bounds = pair_feature_bounds(first, second, world_size, balance)
            print(f"world size {world_size}, balance={balance}:\n"
                  f"  column {plan_shards(first, world_size, 0, feature_bounds=bounds).report()}\n"
                  f"  row    {plan_shards(second, world_size, 1, feature_bounds=bounds).report()}")


def _summarize(paths: List[str]) -> None:
    """Each row's times and its speed-up against one GPU: the one-rank run's fastest row, forward
    and forward + backward apart (on one rank the chunks only cost: there is nothing to overlap,
    so a chunked row's own one-rank time would flatter it)."""
    runs = sorted((json.load(open(path)) for path in paths), key=lambda run: run["world_size"])
    base = next((run for run in runs if run["world_size"] == 1), None)
    def rows(run: Dict[str, Any]) -> List[str]:
        return sorted(k for k in run if k.startswith(("chunks_", "pipeline_")) or k == "default")

    if base is not None:
        one_gpu = {time: min(base[key].get(time, float("inf")) for key in rows(base))
                   for time in ("forward_ms", "forward_backward_ms", "inference_ms")}
        print(f"one GPU (the fastest one-rank row): forward {one_gpu['forward_ms']:.2f} ms, "
              f"forward+backward {one_gpu['forward_backward_ms']:.2f} ms")
    for run in runs:
        for key in rows(run):
            if "error" in run[key]:
                print(f"{run['device']} x{run['world_size']} {key}: {run[key]['error']}")
                continue
            line = (f"{run['device']} x{run['world_size']} {key}: forward {run[key]['forward_ms']:.2f} ms, "
                    f"forward+backward {run[key]['forward_backward_ms']:.2f} ms")
            if base is not None:
                line += (f"; speed-up {one_gpu['forward_ms'] / run[key]['forward_ms']:.2f}x / "
                         f"{one_gpu['forward_backward_ms'] / run[key]['forward_backward_ms']:.2f}x")
            if "inference_ms" in run[key] and base is not None:
                line += (f"; inference (no grad) {run[key]['inference_ms']:.2f} ms, "
                         f"{one_gpu['inference_ms'] / run[key]['inference_ms']:.2f}x")
            if key != "chunks_1" and "chunks_1" in run:
                line += (f"; overlap against one chunk {run['chunks_1']['forward_ms'] / run[key]['forward_ms']:.2f}x / "
                         f"{run['chunks_1']['forward_backward_ms'] / run[key]['forward_backward_ms']:.2f}x")
            print(line)
        for rank in run.get("per_rank", []):
            print(f"  rank {rank['rank']}: column nnzb {rank['column_nnzb']} {rank['column_ms']:.3f} ms, row nnzb "
                  f"{rank['row_nnzb']} {rank['row_ms']:.3f} ms, all-reduce alone {rank['all_reduce_ms']:.3f} ms")


def main() -> None:
    arguments = _arguments()
    if arguments.summarize:
        _summarize(arguments.summarize)
        return
    if arguments.plan:
        _print_plans(arguments)
        return
    if arguments.cpu:
        dist.init_process_group("gloo")
        device = torch.device("cpu")
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // dist.get_world_size()))
    else:
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
        device = torch.device("cuda", local_rank)
    try:
        result = _run(arguments, device)
        if dist.get_rank() == 0:
            print(json.dumps(result, indent=1))
            if arguments.out:
                with open(arguments.out, "w") as out:
                    json.dump(result, out, indent=1)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
