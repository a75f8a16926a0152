"""NCCL's all-reduce alone, the sizes the tensor-parallel MLP reduces (issue 28): a token chunk's
output and the whole output, bf16, timed with CUDA events over --iters calls after a warm-up;
prints each size's time and bus bandwidth (2 (n - 1) / n x bytes / time) on rank 0, and the
NCCL kernel's name (its algorithm and protocol, which NCCL_ALGO / NCCL_PROTO set) from one
profiled call. One torchrun per setting, since NCCL reads its environment once:

    torchrun --standalone --nproc-per-node 4 packages/bench/experiments/all_reduce_probe.py
    NCCL_PROTO=Simple torchrun --standalone --nproc-per-node 4 packages/bench/experiments/all_reduce_probe.py
"""
from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", default="8,32,128", help="sizes in MiB (comma-separated)")
    parser.add_argument("--iters", type=int, default=20)
    arguments = parser.parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=device)
    world = dist.get_world_size()
    try:
        for mib in (int(m) for m in arguments.mib.split(",")):
            tensor = torch.randn(mib << 19, device=device, dtype=torch.bfloat16)
            for _ in range(3):
                dist.all_reduce(tensor)
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dist.barrier()
            start.record()
            for _ in range(arguments.iters):
                dist.all_reduce(tensor)
            stop.record()
            torch.cuda.synchronize()
            ms = start.elapsed_time(stop) / arguments.iters
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                dist.all_reduce(tensor)
                torch.cuda.synchronize()
            kernels = {e.name[:60] for e in prof.events() if "nccl" in e.name.lower()}
            if dist.get_rank() == 0:
                bus = 2 * (world - 1) / world * (mib << 20) / (ms * 1e-3) / 1e9
                print(f"all-reduce {mib} MiB bf16 x{world}: {ms:.3f} ms, bus {bus:.0f} GB/s, "
                      f"NCCL_PROTO={os.environ.get('NCCL_PROTO', '')} NCCL_ALGO={os.environ.get('NCCL_ALGO', '')} "
                      f"{sorted(kernels)}")
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
