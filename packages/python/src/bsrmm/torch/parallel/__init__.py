"""Tensor-parallel block-sparse layers on torch.distributed (NCCL on GPUs, gloo on the CPU).

:func:`shard_bsr` cuts a BsrLinear's weight by block rows (dim=0) or block columns (dim=1) with
about the same number of stored blocks per rank; :class:`ColumnParallelBsrLinear` and
:class:`RowParallelBsrLinear` are Megatron's pair over those shards, with the collectives of
the forward and the backward, loading from and saving to a single-GPU BsrLinear. A pair
(column then row parallel) is cut at one place, :func:`pair_feature_bounds`, so the first's
output slices are the second's input slices."""

from __future__ import annotations

from ._layers import ColumnParallelBsrLinear, RowParallelBsrLinear
from ._shard import (BsrShard, ShardPlan, balanced_bounds, pair_feature_bounds, plan_shards,
                     shard_bsr, take_shard)

__all__ = [
    "BsrShard",
    "ColumnParallelBsrLinear",
    "RowParallelBsrLinear",
    "ShardPlan",
    "balanced_bounds",
    "pair_feature_bounds",
    "plan_shards",
    "shard_bsr",
    "take_shard",
]
