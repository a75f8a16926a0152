"""Splitting one block-sparse weight into per-rank shards. dim=0 cuts whole block rows (each
rank owns output features: column parallel, no reduction); dim=1 cuts whole block columns (each
rank owns input features: row parallel, partial sums reduced). The cuts are chosen on the prefix
sum of stored blocks per block row / column, so a skewed pattern (a few dense rows, power-law
rows) still gives every rank about the same number of blocks to multiply."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import torch

from .._linear import BsrLinear

BALANCES = ("nnz", "rows")


@dataclass(frozen=True)
class BsrShard:
    """One rank's part of W: a (rows x cols) BSR matrix (``indptr``, ``indices`` local to the
    shard, ``values`` in its row-major block order, as BsrLinear keeps them) and where it lies
    in W: features ``row_range`` (output) and ``col_range`` (input), half-open. ``bias`` is the
    shard's output slice for dim=0, W's whole bias for dim=1 (added once, after the reduction)."""

    rank: int
    dim: int
    values: torch.Tensor
    indptr: torch.Tensor
    indices: torch.Tensor
    blocksize: Tuple[int, int]
    row_range: Tuple[int, int]
    col_range: Tuple[int, int]
    bias: Optional[torch.Tensor]

    @property
    def shape(self) -> Tuple[int, int]:
        return (self.row_range[1] - self.row_range[0], self.col_range[1] - self.col_range[0])

    @property
    def nnzb(self) -> int:
        return int(self.indices.numel())

    def block_mask(self) -> torch.Tensor:
        """The boolean block mask BsrLinear takes, (rows / bh, cols / bw)."""
        grid = (self.shape[0] // self.blocksize[0], self.shape[1] // self.blocksize[1])
        mask = torch.zeros(grid, dtype=torch.bool)
        rows = torch.repeat_interleave(torch.arange(grid[0]), self.indptr.diff().cpu())
        mask[rows, self.indices.cpu()] = True
        return mask


@dataclass(frozen=True)
class ShardPlan:
    """The cuts, in blocks (``bounds[r]`` to ``bounds[r + 1]`` is rank r's block rows or block
    columns), and the work they give each rank."""

    dim: int
    bounds: Tuple[int, ...]
    nnzb: Tuple[int, ...]

    @property
    def imbalance(self) -> float:
        """The busiest rank's blocks over the mean: 1.0 is a perfect split."""
        mean = sum(self.nnzb) / len(self.nnzb)
        return max(self.nnzb) / mean if mean else 1.0

    def report(self) -> str:
        return (f"dim={self.dim}: per-rank nnzb {list(self.nnzb)}, block bounds {list(self.bounds)}, "
                f"imbalance (max / mean) {self.imbalance:.3f}")


def balanced_bounds(counts: Sequence[int], world_size: int) -> Tuple[int, ...]:
    """Cuts of ``len(counts)`` lines (block rows or columns) into ``world_size`` non-empty runs
    whose sums of ``counts`` are as near ``total / world_size`` as whole lines allow: cut k sits at
    the line boundary whose prefix sum is closest to ``k * total / world_size``. A rank then
    holds at most ``total / world_size`` plus its largest line's count."""
    lines = len(counts)
    prefix = torch.cat([torch.zeros(1, dtype=torch.float64),
                        torch.as_tensor(counts, dtype=torch.float64).cumsum(0)])
    total = float(prefix[-1])
    bounds = [0]
    for k in range(1, world_size):
        target = k * total / world_size
        after = int(torch.searchsorted(prefix, torch.tensor([target], dtype=torch.float64))[0])
        after = min(after, lines)
        before = max(after - 1, 0)
        cut = before if target - float(prefix[before]) <= float(prefix[after]) - target else after
        # Every rank keeps at least one line: a shard of no features has nothing to multiply.
        cut = max(cut, bounds[-1] + 1)
        cut = min(cut, lines - (world_size - k))
        bounds.append(cut)
    bounds.append(lines)
    return tuple(bounds)


def _even_bounds(lines: int, world_size: int) -> Tuple[int, ...]:
    return tuple((lines * k) // world_size for k in range(world_size + 1))


def _line_counts(layer: BsrLinear, dim: int) -> torch.Tensor:
    """Stored blocks per block row (dim 0) or per block column (dim 1)."""
    indptr, indices, _ = _layer_arrays(layer)
    if dim == 0:
        return indptr.diff()
    return torch.bincount(indices, minlength=layer.in_features // layer.blocksize[1])


def _blocks_of_features(feature_bounds: Sequence[int], world_size: int, size: int,
                        lines: int) -> Tuple[int, ...]:
    bounds = tuple(int(b) for b in feature_bounds)
    if (len(bounds) != world_size + 1 or bounds[0] != 0 or bounds[-1] != lines * size
            or any(b % size for b in bounds) or any(a >= b for a, b in zip(bounds, bounds[1:]))):
        raise ValueError(f"feature_bounds must be {world_size + 1} increasing multiples of {size} "
                         f"from 0 to {lines * size}; got {list(bounds)}")
    return tuple(b // size for b in bounds)


def pair_feature_bounds(first: BsrLinear, second: BsrLinear, world_size: int,
                        balance: str = "nnz") -> Tuple[int, ...]:
    """One cut of the features between ``first`` (column parallel: its output features) and
    ``second`` (row parallel: its input features), so the first's output slices are exactly the
    second's input slices. With ``balance="nnz"`` it evens out the two layers' blocks together:
    the cut runs on units of lcm(first's bh, second's bw) features, each weighing the first's
    blocks in its rows plus the second's in its columns."""
    for name, layer in (("first", first), ("second", second)):
        if not isinstance(layer, BsrLinear):
            raise TypeError(f"{name} must be a bsrmm.torch.BsrLinear; got {type(layer).__name__}")
    if first.out_features != second.in_features:
        raise ValueError(f"first's {first.out_features} output features are not second's "
                         f"{second.in_features} input features")
    if balance not in BALANCES:
        raise ValueError(f"balance must be one of {BALANCES}; got {balance!r}")
    bh, bw = first.blocksize[0], second.blocksize[1]
    unit = math.lcm(bh, bw)
    units = first.out_features // unit
    if first.out_features % unit or units < world_size:
        raise ValueError(f"{first.out_features} features make {units} whole units of {unit} "
                         f"(lcm of the blocks' {bh} and {bw}); {world_size} ranks need one each")
    weight = (_line_counts(first, 0).reshape(units, unit // bh).sum(1)
              + _line_counts(second, 1).reshape(units, unit // bw).sum(1))
    cuts = balanced_bounds(weight.tolist(), world_size) if balance == "nnz" else _even_bounds(units, world_size)
    return tuple(c * unit for c in cuts)


def _layer_arrays(layer: BsrLinear) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return layer.indptr.detach().cpu(), layer.indices.detach().cpu(), layer.values.detach()


def plan_shards(layer: BsrLinear, world_size: int, dim: int = 0, balance: str = "nnz",
                feature_bounds: Optional[Sequence[int]] = None) -> ShardPlan:
    """Where :func:`shard_bsr` cuts ``layer``'s weight, and each rank's stored blocks. Given
    ``feature_bounds`` (cuts in features, e.g. from :func:`pair_feature_bounds`), it cuts there."""
    if not isinstance(layer, BsrLinear):
        raise TypeError(f"matrix_or_layer must be a bsrmm.torch.BsrLinear; got {type(layer).__name__}")
    if not isinstance(world_size, int) or isinstance(world_size, bool) or world_size < 1:
        raise ValueError(f"world_size must be a positive int; got {world_size!r}")
    if dim not in (0, 1):
        raise ValueError(f"dim must be 0 (split block rows: column parallel) or 1 (split block "
                         f"columns: row parallel); got {dim!r}")
    if balance not in BALANCES:
        raise ValueError(f"balance must be one of {BALANCES}; got {balance!r}")
    bh, bw = layer.blocksize
    lines = layer.out_features // bh if dim == 0 else layer.in_features // bw
    if lines < world_size:
        raise ValueError(f"world_size={world_size} ranks cannot each hold a block "
                         f"{'row' if dim == 0 else 'column'}: the weight has {lines}")
    counts = _line_counts(layer, dim)
    if feature_bounds is not None:
        bounds = _blocks_of_features(feature_bounds, world_size, bh if dim == 0 else bw, lines)
    elif balance == "nnz":
        bounds = balanced_bounds(counts.tolist(), world_size)
    else:
        bounds = _even_bounds(lines, world_size)
    nnzb = tuple(int(counts[bounds[r]:bounds[r + 1]].sum()) for r in range(world_size))
    return ShardPlan(dim, bounds, nnzb)


def _row_shard(layer: BsrLinear, plan: ShardPlan, rank: int) -> BsrShard:
    indptr, indices, values = _layer_arrays(layer)
    first, last = plan.bounds[rank], plan.bounds[rank + 1]
    start, stop = int(indptr[first]), int(indptr[last])
    bh = layer.blocksize[0]
    bias = None if layer.bias is None else layer.bias.detach()[first * bh:last * bh]
    return BsrShard(rank, 0, values[start:stop], indptr[first:last + 1] - start,
                    indices[start:stop].clone(), layer.blocksize, (first * bh, last * bh),
                    (0, layer.in_features), bias)


def _column_shard(layer: BsrLinear, plan: ShardPlan, rank: int) -> BsrShard:
    indptr, indices, values = _layer_arrays(layer)
    first, last = plan.bounds[rank], plan.bounds[rank + 1]
    keep = (indices >= first) & (indices < last)  # row-major order survives a filter
    rows = torch.repeat_interleave(torch.arange(indptr.numel() - 1), indptr.diff())
    counts = torch.bincount(rows[keep], minlength=indptr.numel() - 1)
    local_indptr = torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)])
    bw = layer.blocksize[1]
    bias = None if layer.bias is None else layer.bias.detach()
    return BsrShard(rank, 1, values[keep.to(values.device)], local_indptr, indices[keep] - first,
                    layer.blocksize, (0, layer.out_features), (first * bw, last * bw), bias)


def shard_bsr(matrix_or_layer: BsrLinear, world_size: int, dim: int = 0,
              balance: str = "nnz") -> Tuple[List[BsrShard], ShardPlan]:
    """``matrix_or_layer``'s weight cut into ``world_size`` shards along ``dim`` (0: block rows,
    1: block columns), balanced by stored blocks (``balance="nnz"``) or by lines
    (``balance="rows"``: the same number of block rows / columns each), and the plan that says
    how much each rank got. Shards hold detached views or copies of the values."""
    plan = plan_shards(matrix_or_layer, world_size, dim, balance)
    return [take_shard(matrix_or_layer, plan, rank) for rank in range(world_size)], plan


def take_shard(layer: BsrLinear, plan: ShardPlan, rank: int) -> BsrShard:
    """Rank ``rank``'s shard of ``layer`` under ``plan`` (what each process of a group builds)."""
    return (_row_shard if plan.dim == 0 else _column_shard)(layer, plan, rank)
