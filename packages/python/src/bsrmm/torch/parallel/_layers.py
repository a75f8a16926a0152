"""Megatron's pair of tensor-parallel linear layers, block-sparse. ColumnParallelBsrLinear owns
whole output features (W's block rows) and its output stays split by features; that split is
exactly the input RowParallelBsrLinear takes (W's block columns), which reduces the ranks'
partial sums. So an MLP runs column -> activation (fused) -> row with one collective each way.

Each rank's shard is a BsrLinear of its own (``local``): the custom ops, the pattern registry and
the state_dict format are BsrLinear's. Both layers load from and save to the single-GPU
BsrLinear's state (``from_bsr_linear`` / ``to_bsr_linear``)."""

from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist
from torch import nn

from .. import _ops
from .._linear import BsrLinear
from . import _collectives
from ._groups import resolve_group
from ._overlap import auto_chunks, chunked_reduce
from ._shard import BsrShard, ShardPlan, plan_shards, take_shard


def _local_layer(shard: BsrShard, activation: Optional[str], with_bias: bool) -> BsrLinear:
    rows, cols = shard.shape
    device = shard.values.device
    # BsrLinear initialises its values at random, and the shards differ in size: without a
    # forked generator the ranks' random streams would part here (dropout masks, data order).
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        local = BsrLinear(cols, rows, shard.blocksize, shard.block_mask(), bias=with_bias,
                          activation=activation, device=device, dtype=shard.values.dtype)
    with torch.no_grad():
        local.values.copy_(shard.values)
        if with_bias and shard.bias is not None:
            local.bias.copy_(shard.bias)  # type: ignore[union-attr]
    return local


def _gather_dim(tensor: torch.Tensor, widths: List[int], group: Any, dim: int) -> torch.Tensor:
    """The ranks' pieces of ``tensor`` along ``dim`` (of sizes ``widths``) joined, on every rank."""
    moved = tensor.detach().movedim(dim, 0)
    flat = moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))
    gathered: torch.Tensor = _collectives.GatherFeatures.apply(flat.T.contiguous(), widths, group)
    return gathered.T.reshape(sum(widths), *moved.shape[1:]).movedim(0, dim)


class _ParallelBsrLinear(nn.Module):
    """What both layers share: the group, the plan, this rank's shard as ``local``."""

    dim: int

    def __init__(self, layer: BsrLinear, group: Any, balance: str,
                 feature_bounds: Optional[Sequence[int]], activation: Optional[str],
                 local_bias: bool) -> None:
        super().__init__()
        self.group = resolve_group(group)
        self.rank, self.world_size = dist.get_rank(self.group), dist.get_world_size(self.group)
        self.plan: ShardPlan = plan_shards(layer, self.world_size, self.dim, balance, feature_bounds)
        shard = take_shard(layer, self.plan, self.rank)
        self.in_features, self.out_features = layer.in_features, layer.out_features
        self.blocksize = layer.blocksize
        self.local = _local_layer(shard, activation, local_bias)
        self.row_range, self.col_range = shard.row_range, shard.col_range

    def _widths(self) -> List[int]:
        size = self.blocksize[0] if self.dim == 0 else self.blocksize[1]
        return [(b - a) * size for a, b in zip(self.plan.bounds[:-1], self.plan.bounds[1:])]

    def _block_coordinates(self) -> torch.Tensor:
        """(nnzb, 2): each local block's (block row, block column) in W."""
        rows = torch.repeat_interleave(torch.arange(self.local.indptr.numel() - 1,
                                                    device=self.local.indptr.device),
                                       self.local.indptr.diff())
        offset = self.plan.bounds[self.rank]
        if self.dim == 0:
            return torch.stack([rows + offset, self.local.indices], dim=1)
        return torch.stack([rows, self.local.indices + offset], dim=1)

    def _assemble(self, bias: Optional[torch.Tensor], activation: Optional[str]) -> BsrLinear:
        """W from every rank's blocks (values and coordinates gathered, never a dense W)."""
        counts = list(self.plan.nnzb)
        values = _gather_dim(self.local.values.detach(), counts, self.group, 0)
        coordinates = _gather_dim(self._block_coordinates(), counts, self.group, 0).cpu()
        grid = (self.out_features // self.blocksize[0], self.in_features // self.blocksize[1])
        mask = torch.zeros(grid, dtype=torch.bool)
        mask[coordinates[:, 0], coordinates[:, 1]] = True
        row_major = torch.argsort(coordinates[:, 0] * grid[1] + coordinates[:, 1])
        with torch.random.fork_rng(devices=[values.device] if values.is_cuda else []):
            layer = BsrLinear(self.in_features, self.out_features, self.blocksize, mask,
                              bias=bias is not None, activation=activation,
                              device=values.device, dtype=values.dtype)
        with torch.no_grad():
            layer.values.copy_(values[row_major.to(values.device)])
            if bias is not None:
                layer.bias.copy_(bias)  # type: ignore[union-attr]
        return layer

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, rank={self.rank} "
                f"of {self.world_size}, rows={self.row_range}, cols={self.col_range}, {self.plan.report()}")


class ColumnParallelBsrLinear(_ParallelBsrLinear):
    """``y[:, row_range] = act(x @ W[row_range]^T + bias[row_range])`` on each rank: x is the
    replicated input (or, with ``sequence_parallel``, this rank's slice of the tokens, gathered
    here); the output is this rank's output features, or all of them with ``gather_output``.
    The backward all-reduces dX (each rank's slice saw all of x), or reduce-scatters it back to
    the token slices with ``sequence_parallel``."""

    dim = 0

    def __init__(self, layer: BsrLinear, group: Any = None, *, balance: str = "nnz",
                 feature_bounds: Optional[Sequence[int]] = None, gather_output: bool = False,
                 sequence_parallel: bool = False) -> None:
        activation = None if layer.activation == "none" else layer.activation
        super().__init__(layer, group, balance, feature_bounds, activation, layer.bias is not None)
        self.gather_output, self.sequence_parallel = gather_output, sequence_parallel

    @classmethod
    def from_bsr_linear(cls, layer: BsrLinear, group: Any = None, **options: Any) -> "ColumnParallelBsrLinear":
        """This rank's shard of the single-GPU ``layer`` (its values, bias, pattern, activation)."""
        return cls(layer, group, **options)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead: Tuple[int, ...] = tuple(x.shape[:-1])
        tokens = x.reshape(-1, x.shape[-1])
        if self.sequence_parallel:
            tokens = _collectives.GatherTokens.apply(tokens, self.group)
            lead = (tokens.shape[0],)
        else:
            tokens = _collectives.CopyToParallel.apply(tokens, self.group)
        y: torch.Tensor = self.local(tokens)
        if self.gather_output:
            y = _collectives.GatherFeatures.apply(y, self._widths(), self.group)
        return y.reshape(*lead, y.shape[-1])

    def to_bsr_linear(self) -> BsrLinear:
        """The whole layer, gathered from every rank (a collective: call it on all of them)."""
        bias = None
        if self.local.bias is not None:
            bias = _gather_dim(self.local.bias.detach()[:, None], self._widths(), self.group, 0)[:, 0]
        activation = None if self.local.activation == "none" else self.local.activation
        return self._assemble(bias, activation)


class RowParallelBsrLinear(_ParallelBsrLinear):
    """``y = sum over ranks of x[:, col_range] @ W[:, col_range]^T, + bias``: x is this rank's
    input features (a ColumnParallelBsrLinear's output, or the replicated input sliced with
    ``input_is_parallel=False``). The sum is an all-reduce (every rank gets y), or with
    ``sequence_parallel`` a reduce-scatter (each rank gets its slice of the tokens); with
    ``overlap_chunks`` > 1 the forward's tokens go in that many chunks, each one's all-reduce
    overlapping the next one's multiply, which runs on all the GPU's SMs but ``comm_sm_margin``
    (left to NCCL's reduction; 0: every SM), while the backward stays whole (_overlap.py says
    why). ``overlap_chunks=None`` (the default) chunks where that was measured to pay
    (:func:`auto_chunks`). The bias is replicated; it joins the sum in the first rank's
    multiply (its epilogue)."""

    dim = 1

    def __init__(self, layer: BsrLinear, group: Any = None, *, balance: str = "nnz",
                 feature_bounds: Optional[Sequence[int]] = None, input_is_parallel: bool = True, sequence_parallel: bool = False,
                 overlap_chunks: Optional[int] = None, comm_sm_margin: int = 32) -> None:
        if layer.activation != "none":
            raise ValueError("a RowParallelBsrLinear cannot fuse an activation: each rank holds a "
                             "partial sum, and the activation applies to the whole one; apply it "
                             "after this layer")
        if overlap_chunks is not None and (isinstance(overlap_chunks, bool) or not isinstance(overlap_chunks, int)
                                           or overlap_chunks < 1):
            raise ValueError(f"overlap_chunks must be a positive int or None (chosen per call); got "
                             f"{overlap_chunks!r}")
        if isinstance(comm_sm_margin, bool) or not isinstance(comm_sm_margin, int) or comm_sm_margin < 0:
            raise ValueError(f"comm_sm_margin must be a non-negative int (SMs left to NCCL while "
                             f"overlapping; 0: none); got {comm_sm_margin!r}")
        if sequence_parallel and overlap_chunks is not None and overlap_chunks > 1:
            raise ValueError("overlap_chunks overlaps all-reduces; sequence_parallel reduce-scatters "
                             "(choose one)")
        super().__init__(layer, group, balance, feature_bounds, None, False)
        self.bias = None if layer.bias is None else nn.Parameter(layer.bias.detach().clone())
        self.input_is_parallel, self.sequence_parallel = input_is_parallel, sequence_parallel
        self.overlap_chunks, self.comm_sm_margin = overlap_chunks, comm_sm_margin

    @classmethod
    def from_bsr_linear(cls, layer: BsrLinear, group: Any = None, **options: Any) -> "RowParallelBsrLinear":
        """This rank's shard of the single-GPU ``layer`` (its values, pattern; the whole bias)."""
        return cls(layer, group, **options)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.input_is_parallel:
            x = x[..., self.col_range[0]:self.col_range[1]]
        elif x.shape[-1] != self.local.in_features:
            raise ValueError(
                f"x has {x.shape[-1]} features but this rank's input slice is {self.col_range}: a "
                "column-parallel layer feeding this one must cut its outputs where this one cuts "
                "its inputs (build both with feature_bounds=pair_feature_bounds(first, second, ...))")
        lead: Tuple[int, ...] = tuple(x.shape[:-1])
        tokens = x.reshape(-1, x.shape[-1])
        y: torch.Tensor
        if self.sequence_parallel:
            y = _collectives.ReduceScatterTokens.apply(self.local(tokens), self.group)
            if self.bias is not None:
                # Each rank adds the bias to its own tokens only, so the bias' gradient is the
                # sum of the ranks' (the all-reduce of CopyToParallel).
                y = y + _collectives.CopyToParallel.apply(self.bias, self.group)
            return y.reshape(y.shape[0], y.shape[-1])
        # The bias joins the sum once: in the first rank's multiply (its epilogue), where adding
        # it after the reduction was a pass over the whole output; AddBias gives it its gradient.
        first_rank_bias = self.bias.detach() if self.bias is not None and self.rank == 0 else None
        chunks = self.overlap_chunks
        if chunks is None:
            chunks = auto_chunks(tokens, self.world_size)
        if chunks > 1 and tokens.shape[0] > 1:
            y = chunked_reduce(self.local.values, self.local._pattern_key, tokens,
                               min(chunks, tokens.shape[0]), self.group, self.comm_sm_margin,
                               first_rank_bias)
        else:
            partial = _ops.bsr_mm(self.local.values, self.local._pattern_key, tokens, first_rank_bias, "none", False)
            y = _collectives.ReduceFromParallel.apply(partial, self.group)
        if self.bias is not None:
            y = _collectives.AddBias.apply(y, self.bias)
        return y.reshape(*lead, y.shape[-1])

    def to_bsr_linear(self) -> BsrLinear:
        """The whole layer, gathered from every rank (a collective: call it on all of them)."""
        return self._assemble(None if self.bias is None else self.bias.detach(), None)
