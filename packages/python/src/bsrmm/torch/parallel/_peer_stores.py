"""Row parallelism's reduction written by the multiply itself: each rank's multiply stores its
partial sums straight into the peers' memory (torch's symmetric memory: buffers every rank of
the group maps), so the reduce-scatter half of the all-reduce costs no SMs and no time of its
own: it rides on the multiply's stores, spread over the whole multiply (on 4 GPUs a rank sends
3/4 of its 128 MB output in ~0.8 ms, ~120 GB/s of NVLink's ~450). The all-gather half runs on
the copy engines, under the next piece's multiplies.

Why not NCCL's all-reduce beside the multiply (parallel/_overlap.py): NCCL's kernels need SMs
that the persistent multiply must leave them (32 of 132), which slowed every chunk's multiply
~1.2x, and on 4 H100s the last chunk's reduction still showed whole: the forward stayed at
3.0-3.2x one GPU's (perf-log 67, 72, 93). An earlier copy-engine pipeline (perf-log 67) copied
both halves, and its reduce-scatter pulls ran at half speed beside the multiplies.

A forward, for each of ``pieces`` runs of the tokens, each run cut into one slice per rank:

1. For every rank p (the next rank first, this rank last, so no GPU receives from all at once):
   multiply this rank's partial sums of p's slice into p's slot for this rank
   (``slots[p][rank]``, a peer address the multiply's stores reach over NVLink).
2. Barrier: every rank's partials of this rank's slice have landed.
3. Sum this rank's slots into its slice of ``sums`` (one kernel, every SM; fp32 accumulation).
4. Barrier: every rank's slice is summed. On the copy stream, pull each rank's slice of the
   sums into the output; the compute stream goes on with the next run.

The compute stream waits for the copy stream once, at the end. The barriers order every reuse:
a slot is written again only after its owner has summed it (step 4 comes first), and the sums
are written again (next forward) only after every peer has pulled them (its compute stream
waited for its pulls before it reached the next step 2)."""

from __future__ import annotations

import threading
import warnings
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.distributed as dist
from torch.autograd import Function

from .. import _ops, _patterns
from ._overlap import whole_layer_backward

Group = Optional[dist.ProcessGroup]

# Measured on 4 H100s (perf-log 102): the token runs each forward is cut into. One run leaves
# the whole all-gather after the last multiply; more runs hide more of it but multiply fewer
# tokens a call (a rank's slice of a run: tokens / (pieces x ranks)).
DEFAULT_PIECES = 2


def _symmetric_memory() -> Any:
    """torch's symmetric-memory module, or None where this torch build has none."""
    try:
        import torch.distributed._symmetric_memory as symmetric_memory
    except ImportError:
        return None
    if not all(hasattr(symmetric_memory, name) for name in ("empty", "rendezvous")):
        return None
    return symmetric_memory


def peer_stores_unavailable(device: torch.device, group: Group) -> Optional[str]:
    """Why the peer-store reduction cannot run for ``device`` over ``group`` (None: it can)."""
    if device.type != "cuda":
        return f"it needs CUDA tensors; these are on {device}"
    if _symmetric_memory() is None:
        return (f"this torch ({torch.__version__}) has no symmetric memory "
                "(torch.distributed._symmetric_memory.empty / rendezvous)")
    backend = dist.get_backend(group)
    if backend != "nccl":
        return f"it needs an NCCL process group; this one is {backend!r}"
    return None


def _group_name(group: Group) -> str:
    resolved = group if group is not None else dist.distributed_c10d._get_default_group()
    return str(resolved.group_name)


class _Workspace:
    """One group's symmetric buffers on one device, dtype and width: the slots (``world``
    partial sums of one slice, ``slot_rows`` tokens each) and the sums (``rows`` tokens), every
    peer's view of both, and the copy stream. Allocating and mapping them is a collective that
    waits on the host, so they are kept and grown, never shrunk."""

    def __init__(self, name: str, world: int, slot_rows: int, rows: int, cols: int,
                 dtype: torch.dtype, device: torch.device) -> None:
        symmetric_memory = _symmetric_memory()
        enable = getattr(symmetric_memory, "enable_symm_mem_for_group", None)
        if enable is not None:  # needed before torch 2.9, a deprecated no-op after
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                enable(name)
        self.slot_rows, self.rows, self.cols, self.dtype = slot_rows, rows, cols, dtype
        self.slots = symmetric_memory.empty((world, slot_rows, cols), dtype=dtype, device=device)
        self.sums = symmetric_memory.empty((rows, cols), dtype=dtype, device=device)
        self.slots_handle = symmetric_memory.rendezvous(self.slots, name)
        self.sums_handle = symmetric_memory.rendezvous(self.sums, name)
        self.rank, self.world = self.slots_handle.rank, self.slots_handle.world_size
        self.peer_slots = [self.slots if peer == self.rank else
                           self.slots_handle.get_buffer(peer, (world, slot_rows, cols), dtype)
                           for peer in range(self.world)]
        self.peer_sums = [self.sums if peer == self.rank else
                          self.sums_handle.get_buffer(peer, (rows, cols), dtype)
                          for peer in range(self.world)]
        with torch.cuda.device(device):
            self.copy_stream = torch.cuda.Stream()

    def fits(self, slot_rows: int, rows: int, cols: int, dtype: torch.dtype) -> bool:
        return (self.cols == cols and self.dtype == dtype and self.slot_rows >= slot_rows
                and self.rows >= rows)

    def barrier(self) -> None:
        """Every rank's work queued on its current stream before this point is done (a kernel
        on this rank's current stream)."""
        self.slots_handle.barrier(channel=0)


_workspaces: Dict[Tuple[str, torch.device], _Workspace] = {}
_workspaces_lock = threading.Lock()


def _workspace(group: Group, slot_rows: int, rows: int, cols: int, dtype: torch.dtype,
               device: torch.device) -> _Workspace:
    name, world = _group_name(group), dist.get_world_size(group)
    with _workspaces_lock:
        space = _workspaces.get((name, device))
        if space is None or not space.fits(slot_rows, rows, cols, dtype):
            if space is not None and space.cols == cols and space.dtype == dtype:
                slot_rows, rows = max(slot_rows, space.slot_rows), max(rows, space.rows)
            space = _workspaces[(name, device)] = _Workspace(name, world, slot_rows, rows, cols, dtype, device)
        return space


def slice_bounds(tokens: int, pieces: int, world: int) -> List[List[Tuple[int, int]]]:
    """The token ranges of each rank's slice of each piece: ``pieces`` runs of about equal
    length (fewer where there are fewer tokens than pieces), each cut into ``world`` slices of
    about equal length (some empty where a run has fewer tokens than ranks)."""
    pieces = max(1, min(pieces, tokens))
    cuts = [round(i * tokens / pieces) for i in range(pieces + 1)]
    result = []
    for start, stop in zip(cuts[:-1], cuts[1:]):
        inner = [start + round(i * (stop - start) / world) for i in range(world + 1)]
        result.append(list(zip(inner[:-1], inner[1:])))
    return result


class _PeerStoreRowReduce(Function):
    """``all_reduce(x @ W^T)`` with the multiply storing into the peers' slots (see the module's
    docstring); the backward is the unchunked layer's (the all-reduce's adjoint is the
    identity)."""

    @staticmethod
    def forward(ctx: Any, values: torch.Tensor, x: torch.Tensor, pattern: int, pieces: int,
                group: Group, bias: Optional[torch.Tensor]) -> torch.Tensor:
        cols = _patterns.lookup(pattern).shape[0]
        y = values.new_empty((x.shape[0], cols))
        world = dist.get_world_size(group)
        bounds = slice_bounds(x.shape[0], pieces, world)
        widest = max(stop - start for piece in bounds for start, stop in piece)
        space = _workspace(group, widest, x.shape[0], cols, values.dtype, x.device)
        rank = space.rank
        compute = torch.cuda.current_stream(x.device)
        for piece in bounds:
            for step in range(world):
                peer = (rank + 1 + step) % world
                start, stop = piece[peer]
                if stop > start:
                    target = space.peer_slots[peer][rank, :stop - start]
                    _ops.multiply_into(values, pattern, x[start:stop], target, bias)
            space.barrier()
            start, stop = piece[rank]
            if stop > start:
                torch.sum(space.slots[:, :stop - start], dim=0, out=space.sums[start:stop])
            space.barrier()
            space.copy_stream.wait_stream(compute)
            with torch.cuda.stream(space.copy_stream):
                for peer in range(world):
                    start, stop = piece[peer]
                    if stop > start:
                        y[start:stop].copy_(space.peer_sums[peer][start:stop], non_blocking=True)
        compute.wait_stream(space.copy_stream)
        ctx.pattern = pattern
        ctx.save_for_backward(values, x)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return (*whole_layer_backward(ctx, grad), None, None, None, None)


def peer_store_reduce(values: torch.Tensor, pattern: int, x: torch.Tensor, pieces: int, group: Group,
                      bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """``all_reduce(x @ W^T (+ bias))`` over ``group`` (W the pattern holding ``values``, x's
    tokens as rows), the multiplies storing their partial sums into the peers' symmetric
    buffers; ``bias`` (one rank's share of the sum, see _collectives.AddBias) joins the
    multiplies' epilogue."""
    why = peer_stores_unavailable(x.device, group)
    if why is not None:
        raise RuntimeError(f"the peer-store reduction cannot run: {why}")
    y: torch.Tensor = _PeerStoreRowReduce.apply(values, x.contiguous(), pattern, pieces, group, bias)
    return y
