"""Row parallelism's reduction overlapped with its multiply: the tokens are cut into chunks,
and the all-reduce of chunk i (``async_op=True``) runs while chunk i + 1 is multiplied. On CUDA
NCCL reduces on its own stream, so the two can run at once, but only where NCCL's kernel finds
SMs: bsrmm's sm90 kernels are persistent (one CTA per SM, ~200 KB of shared memory each), so a
chunk's multiply holds every SM until it ends and the reduction waits for it (measured on 2
H100s: 4 chunks 4.01 ms against 4.03 ms unchunked, packages/bench/results/
h100-sxm-x2-2026-11-25-s14-parallel_mlp_w2.json). So the chunks multiply under an SM budget
(bsrmm.Context.sm_budget: the device's SMs less ``comm_sm_margin``), the field's answer too
(DeepGEMM's set_num_sms, cuBLAS's SM count target, Transformer Engine's comm SM margin). With
gloo on the CPU the reduction runs on gloo's threads, sharing the cores the multiply uses; the
margin means nothing there.

Only the forward is chunked. The backward is the whole layer's, unchunked: the all-reduce's
backward is the identity, so dX and dW are one multiply and one SDDMM on the whole gradient
(chunking them, four of each on the same tape, made forward + backward 0.86x as fast in the same
run: 21.4 against 18.5 ms). The chunks' outputs are written into one tensor and reduced in place
(no copy and no cat: nothing keeps the partial sums, the backward needs only x and W)."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import torch
import torch.distributed as dist
from torch.autograd import Function

from .. import _ops, _patterns
from .._sm_budget import sm_budget

Group = Optional[dist.ProcessGroup]


def multiply_budget(device: torch.device, comm_sm_margin: int) -> int:
    """The SMs a chunk's multiply may take on ``device``: all of them less ``comm_sm_margin``
    (at least 1); 0 (every SM) on the CPU or with no margin."""
    if device.type != "cuda" or comm_sm_margin == 0:
        return 0
    sms: int = torch.cuda.get_device_properties(device).multi_processor_count
    return max(1, sms - comm_sm_margin)


# Measured on 4 and 2 H200s (perf-log 60; the MLP, 8192 tokens): 4 chunks with 32 SMs
# left to NCCL made the forward 1.12x and forward + backward 1.05x as fast as one all-reduce on
# 4 GPUs (2.08 -> 1.87 ms, 7.15 -> 6.81 ms) and no slower on 2; 16 SMs gained nothing. Below
# 512 tokens a chunk, a chunk's multiply is too short to hide its reduction under and the
# launches only add up.
AUTO_CHUNKS = 4
AUTO_CHUNK_TOKENS = 512


def auto_chunks(tokens: torch.Tensor, world_size: int) -> int:
    """The chunks RowParallelBsrLinear(overlap_chunks=None) cuts a forward's tokens into:
    AUTO_CHUNKS on CUDA with other ranks and at least AUTO_CHUNK_TOKENS tokens a chunk, else 1
    (one all-reduce; gloo shares the CPU's cores with the multiply, so nothing overlaps there)."""
    if not tokens.is_cuda or world_size < 2 or tokens.shape[0] < AUTO_CHUNKS * AUTO_CHUNK_TOKENS:
        return 1
    return AUTO_CHUNKS


class _ChunkedRowReduce(Function):
    """``all_reduce(x @ W^T)`` with the tokens in ``chunks``, each chunk's reduction started as
    soon as its multiply is queued; the backward is the unchunked layer's."""

    @staticmethod
    def forward(ctx: Any, values: torch.Tensor, x: torch.Tensor, pattern: int, chunks: int,
                group: Group, budget: int, bias: Optional[torch.Tensor]) -> torch.Tensor:
        y = values.new_empty((x.shape[0], _patterns.lookup(pattern).shape[0]))
        pending: List[Any] = []
        start = 0
        with sm_budget(budget):
            for piece in x.tensor_split(chunks, dim=0):
                out = y[start:start + piece.shape[0]]
                _ops.multiply_into(values, pattern, piece, out, bias)
                pending.append(dist.all_reduce(out, group=group, async_op=True))
                start += piece.shape[0]
        for handle in pending:
            handle.wait()
        ctx.pattern = pattern
        ctx.save_for_backward(values, x)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        values, x = ctx.saved_tensors
        grad = grad.contiguous()
        d_values = _ops.sampled_mm(grad.T, x, ctx.pattern) if ctx.needs_input_grad[0] else None
        d_x = _ops.bsr_mm(values, ctx.pattern, grad, None, "none", True) if ctx.needs_input_grad[1] else None
        return d_values, d_x, None, None, None, None, None


def chunked_reduce(values: torch.Tensor, pattern: int, x: torch.Tensor, chunks: int, group: Group,
                   comm_sm_margin: int, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """``all_reduce(x @ W^T (+ bias))`` over ``group`` (W the pattern holding ``values``, x's
    tokens as rows), the tokens in ``chunks`` pieces, each piece's reduction overlapping the
    next piece's multiply, which leaves ``comm_sm_margin`` SMs to NCCL. ``bias`` (no gradient
    here: one rank's share of the sum, see _collectives.AddBias) joins the multiplies' epilogue."""
    budget = multiply_budget(x.device, comm_sm_margin)
    y: torch.Tensor = _ChunkedRowReduce.apply(values, x, pattern, chunks, group, budget, bias)
    return y
