"""How one token chunk's partial sums (a row-parallel layer's output) are summed over the ranks
while the next chunk is being computed: the pipelined MLP's reductions (_mlp.py).

``"all_reduce"``: the process group's own all-reduce, asynchronous (NCCL on GPUs, gloo on the
CPU), in place in the output. NCCL's kernel needs SMs, which bsrmm's persistent multiplies (one
CTA per SM, ~200 KB of shared memory each) leave it only under an SM budget: on 4 H100s, with
32 SMs left, NCCL reduced 32 MB chunks in 0.17-0.28 ms while the multiplies ran 1.16x longer
(perf-log 67).

``"copy_engine"``: a reduce-scatter then an all-gather whose peer-to-peer copies run on the
GPU's copy engines, over torch's symmetric memory (``torch.distributed._symmetric_memory``:
buffers every rank maps, barriers between ranks). Only the sum of the ranks' slices (one small
kernel) and the barriers run on SMs, so the multiplies can leave a few SMs instead of 32. The
multiply writes its partial sums straight into the symmetric buffer; each rank pulls its slice
of the tokens from every peer, sums it in place there, and after a barrier every rank pulls the
others' sums into its output. torch's own low-contention collectives do the same in ~15 host
calls a chunk (copies into and out of a workspace): measured, the host fell behind the GPU
(perf-log 67); this takes 2n + 4 for n ranks. CUDA only; a chunk whose tokens the ranks do not
divide (the last, at most) goes to the all-reduce.

Each chunk's reduction is started as soon as its multiply is queued (``start``); the whole
output is waited for once, after the last chunk (``finish``)."""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.distributed as dist

REDUCTIONS = ("all_reduce", "copy_engine")

Group = Optional[dist.ProcessGroup]


class AllReduce:
    """Each chunk reduced in place in the output by the group's asynchronous all-reduce."""

    def __init__(self, group: Group, y: torch.Tensor) -> None:
        self.group, self.y = group, y
        self.pending: List[Any] = []

    def partial_out(self, start: int, stop: int) -> torch.Tensor:
        """Where the chunk's multiply writes its partial sums."""
        return self.y[start:stop]

    def start(self, start: int, stop: int) -> None:
        self.pending.append(dist.all_reduce(self.y[start:stop], group=self.group, async_op=True))

    def finish(self) -> None:
        for handle in self.pending:
            handle.wait()
        self.pending.clear()


def _symmetric_memory() -> Any:
    """torch's symmetric-memory module, or None where this torch build has none."""
    try:
        import torch.distributed._symmetric_memory as symmetric_memory
    except ImportError:
        return None
    if not all(hasattr(symmetric_memory, name) for name in ("empty", "rendezvous")):
        return None
    return symmetric_memory


def copy_engine_unavailable(device: torch.device) -> Optional[str]:
    """Why the copy-engine reduction cannot run on ``device`` (None: it can)."""
    if device.type != "cuda":
        return f"the copy-engine reduction needs CUDA tensors; these are on {device}"
    if _symmetric_memory() is None:
        return (f"this torch ({torch.__version__}) has no symmetric memory "
                "(torch.distributed._symmetric_memory.empty / rendezvous)")
    return None


def _group_name(group: Group) -> str:
    resolved = group if group is not None else dist.distributed_c10d._get_default_group()
    return str(resolved.group_name)


class _Workspace:
    """One group's symmetric buffer of partial sums on one device and dtype (grown, never
    shrunk: allocating and mapping it is a collective that waits on the host), every rank's
    view of it, a local staging buffer for the pulled slices, and the stream the reductions
    run on."""

    def __init__(self, name: str, rows: int, cols: int, dtype: torch.dtype, device: torch.device) -> None:
        symmetric_memory = _symmetric_memory()
        enable = getattr(symmetric_memory, "enable_symm_mem_for_group", None)
        if enable is not None:  # needed before torch 2.9, a deprecated no-op after
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                enable(name)
        self.rows, self.cols = rows, cols
        self.partials = symmetric_memory.empty((rows, cols), dtype=dtype, device=device)
        self.handle = symmetric_memory.rendezvous(self.partials, name)
        self.rank, self.world_size = self.handle.rank, self.handle.world_size
        self.views = [self.partials if peer == self.rank else
                      self.handle.get_buffer(peer, (rows, cols), dtype)
                      for peer in range(self.world_size)]
        self.staging = torch.empty((rows, cols), dtype=dtype, device=device)
        with torch.cuda.device(device):
            # High priority: the sum, the one kernel of a reduction, goes before the next
            # multiply's CTAs when SMs free up.
            self.stream = torch.cuda.Stream(priority=-1)


_workspaces: Dict[Tuple[str, torch.device, torch.dtype], _Workspace] = {}


def _workspace(name: str, y: torch.Tensor) -> _Workspace:
    key = (name, y.device, y.dtype)
    space = _workspaces.get(key)
    rows, cols = y.shape
    if space is None or space.cols != cols or space.rows < rows:
        space = _workspaces[key] = _Workspace(name, max(rows, space.rows if space and space.cols == cols else 0),
                                              cols, y.dtype, y.device)
    return space


class CopyEngineAllReduce:
    """Each chunk reduce-scattered then all-gathered with copy-engine pulls over symmetric
    memory, on a stream of its own; the compute stream waits once, in ``finish``."""

    def __init__(self, group: Group, y: torch.Tensor) -> None:
        why = copy_engine_unavailable(y.device)
        if why is not None:
            raise RuntimeError(why)
        self.y = y
        self.space = _workspace(_group_name(group), y)
        self.uneven = AllReduce(group, y)

    def partial_out(self, start: int, stop: int) -> torch.Tensor:
        if (stop - start) % self.space.world_size:
            return self.uneven.partial_out(start, stop)
        return self.space.partials[start:stop]

    def start(self, start: int, stop: int) -> None:
        space = self.space
        n, rank = space.world_size, space.rank
        if (stop - start) % n:
            self.uneven.start(start, stop)
            return
        share = (stop - start) // n
        mine = slice(start + rank * share, start + (rank + 1) * share)
        space.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(space.stream):
            space.handle.barrier(channel=0)  # every rank's partial sums of the chunk are written
            staging = space.staging[:n * share].view(n, share, space.cols)
            for peer in range(n):
                staging[peer].copy_(space.views[peer][mine])
            # This rank's slice summed in place: no peer reads it before the next barrier.
            torch.sum(staging, dim=0, out=space.partials[mine])
            space.handle.barrier(channel=0)
            for peer in range(n):
                theirs = slice(start + peer * share, start + (peer + 1) * share)
                self.y[theirs].copy_(space.views[peer][theirs])

    def finish(self) -> None:
        space = self.space
        with torch.cuda.stream(space.stream):
            # No rank writes the next step's partial sums over a slice a peer still pulls.
            space.handle.barrier(channel=0)
        torch.cuda.current_stream().wait_stream(space.stream)
        self.uneven.finish()


def make_reduction(name: str, group: Group, y: torch.Tensor) -> Any:
    return CopyEngineAllReduce(group, y) if name == "copy_engine" else AllReduce(group, y)
