"""The collectives of tensor parallelism as autograd Functions, each with its adjoint as the
backward: a copy to every rank is summed back (all-reduce) in the backward, a sum over ranks
(all-reduce) is copied back (identity), a reduce-scatter over tokens is all-gathered back, and a
gather of feature slices is sliced back. Tensors are (tokens x features), tokens first."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import torch
import torch.distributed as dist
from torch.autograd import Function

Group = Optional[dist.ProcessGroup]


def _whole_storage(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` is contiguous and covers all of its storage (a view of a whole fresh
    output, such as a reshape, does; a slice does not)."""
    return (tensor.is_contiguous() and tensor.storage_offset() == 0
            and tensor.untyped_storage().nbytes() == tensor.numel() * tensor.element_size())


class AddBias(Function):
    """``y`` returned as is, ``bias`` having been added inside the first rank's multiply (its
    epilogue: free, where a separate add after the reduction read and wrote the whole output,
    165 us of 2.4 ms in the issue's MLP on 4 H200s); the backward gives every rank the bias'
    whole gradient, so the replicated bias stays the same everywhere."""

    @staticmethod
    def forward(ctx: Any, y: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return y.view_as(y)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return grad, grad.reshape(-1, grad.shape[-1]).sum(0)


def _all_reduce(tensor: torch.Tensor, group: Group) -> torch.Tensor:
    tensor = tensor.contiguous().clone()
    dist.all_reduce(tensor, group=group)
    return tensor


class CopyToParallel(Function):
    """Identity forward (every rank already holds the replicated input); the backward sums the
    ranks' partial input gradients, since each rank's output slice saw the whole input."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, group: Group) -> torch.Tensor:
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return _all_reduce(grad, ctx.group), None


class ReduceFromParallel(Function):
    """All-reduce forward (the partial products of the ranks' input slices); identity backward
    (the sum's gradient reaches every partial unchanged)."""

    @staticmethod
    def forward(ctx: Any, partial: torch.Tensor, group: Group) -> torch.Tensor:
        # The partial sum is the local multiply's fresh output, which nothing else reads (the
        # multiply's backward keeps x and W, not its result): reduced in place, it skips a copy
        # of the whole output (62 us of 2.4 ms in the MLP on 4 H200s, perf-log 60). A
        # tensor that is only part of its storage may share it with others and is copied.
        if _whole_storage(partial):
            ctx.mark_dirty(partial)
            dist.all_reduce(partial, group=group)
            return partial
        return _all_reduce(partial, group)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return grad, None


def _check_tokens(tokens: int, world_size: int) -> None:
    if tokens % world_size:
        raise ValueError(f"sequence_parallel splits the tokens evenly: {tokens} tokens do not "
                         f"divide among {world_size} ranks")


def _all_gather_tokens(local: torch.Tensor, group: Group) -> torch.Tensor:
    world_size = dist.get_world_size(group)
    full = local.new_empty((local.shape[0] * world_size, *local.shape[1:]))
    dist.all_gather_into_tensor(full, local.contiguous(), group=group)
    return full


def _reduce_scatter_tokens(full: torch.Tensor, group: Group) -> torch.Tensor:
    world_size = dist.get_world_size(group)
    _check_tokens(full.shape[0], world_size)
    local = full.new_empty((full.shape[0] // world_size, *full.shape[1:]))
    dist.reduce_scatter_tensor(local, full.contiguous(), group=group)
    return local


class ReduceScatterTokens(Function):
    """Sequence parallelism's reduction: each rank gets the sum of the partials for its slice of
    the tokens (reduce-scatter); the backward gathers the slices' gradients (all-gather)."""

    @staticmethod
    def forward(ctx: Any, partial: torch.Tensor, group: Group) -> torch.Tensor:
        ctx.group = group
        return _reduce_scatter_tokens(partial, group)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return _all_gather_tokens(grad, ctx.group), None


class GatherTokens(Function):
    """Sequence parallelism's entry: the token slices gathered into the whole input
    (all-gather); the backward reduce-scatters the input gradient back to the slices."""

    @staticmethod
    def forward(ctx: Any, local: torch.Tensor, group: Group) -> torch.Tensor:
        ctx.group = group
        return _all_gather_tokens(local, group)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return _reduce_scatter_tokens(grad, ctx.group), None


class GatherFeatures(Function):
    """The column-parallel outputs' feature slices (of the widths ``widths``, rank order)
    concatenated on every rank; the backward keeps this rank's slice of the gradient. Slices
    may differ in width (balanced cuts), so each is padded to the widest for the all-gather."""

    @staticmethod
    def forward(ctx: Any, local: torch.Tensor, widths: Sequence[int], group: Group) -> torch.Tensor:
        rank = dist.get_rank(group)
        ctx.start, ctx.width = sum(widths[:rank]), widths[rank]
        widest = max(widths)
        padded = local.new_zeros((local.shape[0], widest))
        padded[:, :local.shape[1]] = local
        pieces = [torch.empty_like(padded) for _ in widths]
        dist.all_gather(pieces, padded, group=group)
        return torch.cat([piece[:, :width] for piece, width in zip(pieces, widths)], dim=1)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return grad[:, ctx.start:ctx.start + ctx.width].contiguous(), None, None
