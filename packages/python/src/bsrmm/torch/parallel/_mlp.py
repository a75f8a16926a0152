"""ParallelBsrMLP: Megatron's MLP, ``second(act(first(x)))`` with the first layer column parallel
and the second row parallel, whose forward runs as a pipeline over chunks of tokens: chunk i's
reduction over the ranks runs while chunk i + 1 goes through both layers.

Why both layers: the row layer alone (RowParallelBsrLinear(overlap_chunks=...)) hides the
reduction only under its own multiplies, about half of a rank's work; on 4 H200s the issue's
MLP spent 1.40 ms a rank multiplying and 0.70 ms all-reducing its 128 MB output, of which the
row layer's chunks hid ~0.2 ms (perf-log 60). Pipelined over both, the reductions of chunks
0 .. n - 2 have every later multiply to run under, and only the last chunk's shows.

The reduction (_reductions.py) is the group's all-reduce or, on GPUs, copy-engine pulls over
torch's symmetric memory, which leave the multiplies nearly every SM. The backward is the whole
MLP's, unchunked (_overlap.py says why): dW and dX of both layers on the whole gradient, and
one all-reduce of dX."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import torch
from torch import nn
from torch.autograd import Function

from .. import _ops
from .._linear import BsrLinear
from .._sm_budget import sm_budget
from . import _collectives
from ._groups import resolve_group
from ._layers import ColumnParallelBsrLinear, RowParallelBsrLinear
from ._overlap import AUTO_CHUNK_TOKENS, multiply_budget
from ._reductions import REDUCTIONS, copy_engine_unavailable, make_reduction
from ._shard import pair_feature_bounds

# The SMs the multiplies leave to the reduction, per reduction: NCCL's kernel wants many (perf-log
# 60: 32 paid, 16 did not); the copy engines need SMs only for the sum, the barriers and one copy.
DEFAULT_MARGINS = {"all_reduce": 32, "copy_engine": 8}
AUTO_PIPELINE_CHUNKS = 4


def _activate_into(z: torch.Tensor, out: torch.Tensor, activation: str) -> None:
    """``out = act(z)``, as BsrLinear's unfused training step computes it (gelu's tanh form)."""
    if activation == "gelu":
        torch.ops.aten.gelu.out(z, approximate="tanh", out=out)
    elif activation == "silu":
        torch.ops.aten.silu.out(z, out=out)
    else:
        torch.clamp_min(z, 0, out=out)


def chunk_bounds(tokens: int, chunks: int, multiple: int) -> List[Tuple[int, int]]:
    """``chunks`` runs of about equal length covering ``tokens``, each a multiple of ``multiple``
    tokens long except possibly the last (fewer chunks where there are too few tokens)."""
    units = max(1, tokens // multiple)
    chunks = max(1, min(chunks, units))
    cuts = [round(i * units / chunks) * multiple for i in range(chunks)] + [tokens]
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


class _PipelinedMLP(Function):
    """``all_reduce(act(x @ W1^T + b1) @ W2^T (+ b2 on the first rank))`` over token chunks,
    each chunk's reduction started as soon as its second multiply is queued."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, v1: torch.Tensor, b1: Optional[torch.Tensor],
                v2: torch.Tensor, b2: Optional[torch.Tensor], spec: "_Spec") -> torch.Tensor:
        training = spec.training
        hidden = x.new_empty((x.shape[0], spec.hidden))
        # Training keeps the pre-activation z as well (the activation's derivative reads it);
        # inference fuses the activation into the first multiply's epilogue.
        keep_z = training and spec.activation != "none"
        z = x.new_empty(hidden.shape) if keep_z else hidden
        y = x.new_empty((x.shape[0], spec.out_features))
        reduction = make_reduction(spec.reduction, spec.group, y)
        with sm_budget(spec.budget):
            for start, stop in spec.bounds:
                if keep_z:
                    _ops.multiply_into(v1, spec.first, x[start:stop], z[start:stop], b1)
                    _activate_into(z[start:stop], hidden[start:stop], spec.activation)
                else:
                    _ops.multiply_into(v1, spec.first, x[start:stop], hidden[start:stop], b1, spec.activation)
                _ops.multiply_into(v2, spec.second, hidden[start:stop], reduction.partial_out(start, stop), b2)
                reduction.start(start, stop)
        reduction.finish()
        if training:
            ctx.spec = spec
            ctx.has_b1 = b1 is not None
            ctx.save_for_backward(x, v1, v2, hidden, z if keep_z else None)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        x, v1, v2, hidden, z = ctx.saved_tensors
        spec = ctx.spec
        grad = grad.contiguous()
        # The reduction's backward is the identity: every rank holds the whole gradient of y.
        d_v2 = _ops.sampled_mm(grad.T, hidden, spec.second) if ctx.needs_input_grad[3] else None
        d_hidden = _ops.bsr_mm(v2, spec.second, grad, None, "none", True)
        d_z = _ops._activation_grad(d_hidden, hidden, lambda: z, spec.activation)
        d_v1 = _ops.sampled_mm(d_z.T, x, spec.first) if ctx.needs_input_grad[1] else None
        d_b1 = d_z.sum(0) if ctx.has_b1 and ctx.needs_input_grad[2] else None
        d_x = None
        if ctx.needs_input_grad[0]:
            # Each rank's hidden slice saw the whole x: dX is the sum of the ranks' parts
            # (CopyToParallel's backward), reduced in place in the multiply's fresh output.
            d_x = _ops.bsr_mm(v1, spec.first, d_z, None, "none", True)
            torch.distributed.all_reduce(d_x, group=spec.group)
        return d_x, d_v1, d_b1, d_v2, None, None


class _Spec:
    """What a pipelined forward needs besides its tensors."""

    def __init__(self, mlp: "ParallelBsrMLP", bounds: List[Tuple[int, int]], reduction: str,
                 budget: int, training: bool) -> None:
        self.first, self.second = mlp.column.local._pattern_key, mlp.row.local._pattern_key
        self.hidden, self.out_features = mlp.column.local.out_features, mlp.row.out_features
        self.activation, self.group = mlp.activation, mlp.group
        self.bounds, self.reduction, self.budget = bounds, reduction, budget
        # Whether autograd records this step (Function.forward runs with grad mode off, and its
        # ctx.needs_input_grad says only which inputs require grad, also under no_grad).
        self.training = training


class ParallelBsrMLP(nn.Module):
    """``second(act(first(x)))`` over the ranks of ``group``: ``column`` holds ``first``'s
    output features cut by :func:`pair_feature_bounds` (the activation fused), ``row`` the same
    features of ``second``'s input, and every rank ends with the whole output.

    ``overlap_chunks``: the forward's tokens in that many chunks, pipelined (1: the two layers
    one after the other and one reduction; None: :data:`AUTO_PIPELINE_CHUNKS` on CUDA with 2+
    ranks and at least AUTO_CHUNK_TOKENS tokens a chunk, else 1). ``reduction``:
    ``"all_reduce"`` (the group's) or ``"copy_engine"`` (copy-engine pulls over torch's
    symmetric memory, CUDA only); None: the copy engines where they can run, else the all-reduce.
    ``comm_sm_margin``: the SMs the chunks' multiplies leave to the reduction (None: 32 for
    the all-reduce, 8 for the copy engines). The backward is the whole MLP's."""

    def __init__(self, first: BsrLinear, second: BsrLinear, group: Any = None, *, balance: str = "nnz",
                 overlap_chunks: Optional[int] = None, reduction: Optional[str] = None,
                 comm_sm_margin: Optional[int] = None) -> None:
        super().__init__()
        if second.activation != "none":
            raise ValueError("second must have no activation: its ranks hold partial sums, and an "
                             "activation applies to the whole one")
        if overlap_chunks is not None and (isinstance(overlap_chunks, bool) or not isinstance(overlap_chunks, int)
                                           or overlap_chunks < 1):
            raise ValueError(f"overlap_chunks must be a positive int or None (chosen per call); got "
                             f"{overlap_chunks!r}")
        if reduction is not None and reduction not in REDUCTIONS:
            raise ValueError(f"reduction must be one of {REDUCTIONS} or None (chosen per call); got "
                             f"{reduction!r}")
        if comm_sm_margin is not None and (isinstance(comm_sm_margin, bool) or not isinstance(comm_sm_margin, int)
                                           or comm_sm_margin < 0):
            raise ValueError(f"comm_sm_margin must be a non-negative int or None (chosen per "
                             f"reduction); got {comm_sm_margin!r}")
        self.group = resolve_group(group)
        world_size = torch.distributed.get_world_size(self.group)
        bounds = pair_feature_bounds(first, second, world_size, balance)
        self.column = ColumnParallelBsrLinear(first, self.group, balance=balance, feature_bounds=bounds)
        self.row = RowParallelBsrLinear(second, self.group, balance=balance, feature_bounds=bounds,
                                        overlap_chunks=1)
        self.activation = first.activation
        self.overlap_chunks, self.reduction, self.comm_sm_margin = overlap_chunks, reduction, comm_sm_margin

    @property
    def world_size(self) -> int:
        return self.row.world_size

    def plan(self, tokens: torch.Tensor) -> Tuple[List[Tuple[int, int]], str, int]:
        """The forward's chunks (token ranges), reduction and the multiplies' SM budget for
        ``tokens`` (tokens x features)."""
        count = tokens.shape[0]
        chunks = self.overlap_chunks
        if chunks is None:
            wanted = tokens.is_cuda and self.world_size > 1 and count >= AUTO_PIPELINE_CHUNKS * AUTO_CHUNK_TOKENS
            chunks = AUTO_PIPELINE_CHUNKS if wanted else 1
        reduction = self.reduction
        if reduction is None:
            reduction = "copy_engine" if copy_engine_unavailable(tokens.device) is None else "all_reduce"
        elif reduction == "copy_engine":
            why = copy_engine_unavailable(tokens.device)
            if why is not None:
                raise RuntimeError(f"ParallelBsrMLP(reduction='copy_engine'): {why}; use "
                                   "reduction='all_reduce'")
        # The copy engines' reduce-scatter cuts a chunk evenly over the ranks: every chunk but
        # the last is a whole multiple of them (the last, if not, goes to the all-reduce).
        multiple = self.world_size if reduction == "copy_engine" else 1
        margin = self.comm_sm_margin if self.comm_sm_margin is not None else DEFAULT_MARGINS[reduction]
        return chunk_bounds(count, chunks, multiple), reduction, multiply_budget(tokens.device, margin)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.column.in_features:
            raise ValueError(f"x has {x.shape[-1]} features; this MLP takes {self.column.in_features}")
        lead = tuple(x.shape[:-1])
        tokens = x.reshape(-1, x.shape[-1])
        bounds, reduction, budget = self.plan(tokens)
        if self.world_size == 1 or len(bounds) <= 1:
            y = self.row(self.column(tokens))
        else:
            first_rank_bias = self.row.bias.detach() if self.row.bias is not None and self.row.rank == 0 else None
            local = self.column.local
            inputs = (tokens, local.values, local.bias, self.row.local.values)
            training = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in inputs)
            y = _PipelinedMLP.apply(tokens.contiguous(), local.values, local.bias, self.row.local.values,
                                    first_rank_bias, _Spec(self, bounds, reduction, budget, training))
            if self.row.bias is not None:
                y = _collectives.AddBias.apply(y, self.row.bias)
        return y.reshape(*lead, y.shape[-1])

    def to_bsr_linears(self) -> Tuple[BsrLinear, BsrLinear]:
        """The whole first and second layers, gathered from every rank (a collective)."""
        return self.column.to_bsr_linear(), self.row.to_bsr_linear()

    def extra_repr(self) -> str:
        return (f"activation={self.activation!r}, overlap_chunks={self.overlap_chunks}, "
                f"reduction={self.reduction!r}, comm_sm_margin={self.comm_sm_margin}")
