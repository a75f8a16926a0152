"""How one token chunk's partial sums (a row-parallel layer's output) are summed over the ranks
while the next chunk is being computed: the pipelined MLP's reductions (_mlp.py).

``"all_reduce"``: the process group's own all-reduce, asynchronous (NCCL on GPUs, gloo on the
CPU). NCCL's kernel needs SMs, which bsrmm's persistent multiplies (one CTA per SM, ~200 KB of
shared memory each) leave it only under an SM budget: on 4 H200s, 32 SMs left to NCCL reduced
32 MB chunks at ~100 GB/s (0.29-0.39 ms each, perf-log 60), while the multiplies lost a quarter
of the GPU.

``"copy_engine"``: torch's low-contention reduce-scatter then all-gather
(``torch.distributed._symmetric_memory``, the collectives of torch's async tensor
parallelism, written for overlap with persistent matmuls). Their peer-to-peer copies run on the
GPU's copy engines; only the sum of the ranks' slices, the barriers and the copies into place
run on SMs, so the multiplies can leave a few SMs instead of 32. CUDA only, with symmetric
memory in the torch build; a chunk whose tokens the ranks do not divide (the reduce-scatter
cuts them evenly) goes to the all-reduce.

Each reduction is started per chunk (``start``, in place: the chunk's partial sums become the
whole sums) and waited for once, after the last chunk (``finish``)."""

from __future__ import annotations

import warnings
from typing import Any, List, Optional, Tuple

import torch
import torch.distributed as dist

REDUCTIONS = ("all_reduce", "copy_engine")

Group = Optional[dist.ProcessGroup]


class AllReduce:
    """Each chunk reduced by the group's own asynchronous all-reduce, in place."""

    def __init__(self, group: Group) -> None:
        self.group = group
        self.pending: List[Any] = []

    def start(self, partial: torch.Tensor) -> None:
        self.pending.append(dist.all_reduce(partial, group=self.group, async_op=True))

    def finish(self) -> None:
        for handle in self.pending:
            handle.wait()
        self.pending.clear()


def _symmetric_memory() -> Any:
    """torch's symmetric-memory module (importing it registers the low-contention ops' CUDA
    kernels), or None where this torch build has none."""
    try:
        import torch.distributed._symmetric_memory as symmetric_memory
    except ImportError:
        return None
    ops = getattr(torch.ops, "symm_mem", None)
    needed = ("_low_contention_reduce_scatter", "_low_contention_all_gather")
    if ops is None or not all(hasattr(ops, name) for name in needed):
        return None
    if not hasattr(symmetric_memory, "_get_backend_stream"):
        return None
    return symmetric_memory


def copy_engine_unavailable(device: torch.device) -> Optional[str]:
    """Why the copy-engine reduction cannot run on ``device`` (None: it can)."""
    if device.type != "cuda":
        return f"the copy-engine reduction needs CUDA tensors; these are on {device}"
    if _symmetric_memory() is None:
        return (f"this torch ({torch.__version__}) has no symmetric-memory low-contention "
                "collectives (torch.ops.symm_mem._low_contention_reduce_scatter)")
    return None


def _group_name(group: Group) -> str:
    resolved = group if group is not None else dist.distributed_c10d._get_default_group()
    return str(resolved.group_name)


class CopyEngineAllReduce:
    """Each chunk reduce-scattered then all-gathered by torch's low-contention collectives on
    its symmetric-memory backend stream; the whole sums are copied back into the chunk there, so
    the compute stream waits only once, in ``finish``."""

    def __init__(self, group: Group) -> None:
        symmetric_memory = _symmetric_memory()
        if symmetric_memory is None:
            raise RuntimeError(copy_engine_unavailable(torch.device("cuda")))
        self.name = _group_name(group)
        self.world_size = dist.get_world_size(group)
        enable = getattr(symmetric_memory, "enable_symm_mem_for_group", None)
        if enable is not None:  # needed before torch 2.9, a deprecated no-op after
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                enable(self.name)
        self.stream = symmetric_memory._get_backend_stream()
        self.uneven = AllReduce(group)
        # Kept until finish: the backend stream still reads and writes them.
        self.pending: List[Tuple[torch.Tensor, ...]] = []

    def start(self, partial: torch.Tensor) -> None:
        if partial.shape[0] % self.world_size:
            # The reduce-scatter cuts the tokens evenly over the ranks; a chunk they do not
            # divide (the last, ParallelBsrMLP.plan) is all-reduced.
            self.uneven.start(partial)
            return
        ops = torch.ops.symm_mem
        # Both ops make their backend stream wait for the compute stream's work so far (this
        # chunk's multiply), then run there: copies on the copy engines, the sum on free SMs.
        reduced = ops._low_contention_reduce_scatter(partial, "sum", self.name)
        gathered = ops._low_contention_all_gather(reduced, self.name)
        stream = self.stream
        with torch.cuda.stream(stream) if isinstance(stream, torch.cuda.Stream) else stream:
            partial.copy_(gathered)
        self.pending.append((partial, reduced, gathered))

    def finish(self) -> None:
        torch.cuda.current_stream().wait_stream(self.stream)
        self.uneven.finish()
        self.pending.clear()


def make_reduction(name: str, group: Group) -> Any:
    return CopyEngineAllReduce(group) if name == "copy_engine" else AllReduce(group)
