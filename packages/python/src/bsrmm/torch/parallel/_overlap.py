"""Row parallelism's reduction overlapped with its multiply: the tokens are cut into chunks,
and the all-reduce of chunk i (``async_op=True``) runs while chunk i + 1 is multiplied. On CUDA
NCCL reduces on its own stream, so the two really run at once; with gloo on the CPU the
reduction runs on gloo's threads, sharing the cores the multiply uses.

The multiplies stay on autograd's tape (so the gradients are the layer's own); a chunk's partial
is copied before its reduction starts, because the multiply saved its output for the backward
and an in-place reduction would change what it saved."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import torch
import torch.distributed as dist
from torch.autograd import Function

Group = Optional[dist.ProcessGroup]


class _StartAllReduce(Function):
    """A copy of ``partial`` whose all-reduce has been started; ``pending`` gets its handle.
    Nothing may read the copy before :class:`_FinishAllReduces` waits. The backward is the
    all-reduce's: identity."""

    @staticmethod
    def forward(ctx: Any, partial: torch.Tensor, group: Group, pending: List[Any]) -> torch.Tensor:
        reduced = partial.contiguous().clone()
        pending.append(dist.all_reduce(reduced, group=group, async_op=True))
        return reduced

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return grad, None, None


class _FinishAllReduces(Function):
    """Waits for every started reduction and joins the chunks back into one (tokens) tensor."""

    @staticmethod
    def forward(ctx: Any, pending: List[Any], *chunks: torch.Tensor) -> torch.Tensor:
        for handle in pending:
            handle.wait()
        ctx.sizes = [chunk.shape[0] for chunk in chunks]
        return torch.cat(chunks, dim=0)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return (None, *grad.split_with_sizes(ctx.sizes, dim=0))


def chunked_reduce(multiply: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                   chunks: int, group: Group) -> torch.Tensor:
    """``all_reduce(multiply(x))`` over ``group``, with ``x``'s tokens (rows) in ``chunks``
    pieces, each piece's reduction overlapping the next piece's multiply."""
    pending: List[Any] = []
    reduced = [_StartAllReduce.apply(multiply(piece), group, pending)
               for piece in x.tensor_split(chunks, dim=0)]
    joined: torch.Tensor = _FinishAllReduces.apply(pending, *reduced)
    return joined
