"""Block-sparse weights for the training suite, generated with torch on the case's device (an
8192 x 14336 mask and its values in milliseconds; the language-neutral PRNG of cases/PRNG.md is
for the product suites, which other runners regenerate). Every block row keeps the same number
of blocks, as the grid's "uniform" pattern does."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class BlockSparseWeight:
    mask: object  # torch.bool (rows / block, cols / block)
    dense: object  # (rows, cols) in the case dtype, zero outside the mask
    indptr: np.ndarray  # BSR, int64
    indices: np.ndarray
    values: object  # (nnzb, block, block), row-major block order, the case dtype
    block: int

    @property
    def nnzb(self) -> int:
        return int(self.indices.size)

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.dense.shape)

    def block_rows(self) -> np.ndarray:
        return np.repeat(np.arange(self.indptr.size - 1), np.diff(self.indptr))


def generator(device, seed: int):
    import torch

    return torch.Generator(device=device).manual_seed(seed)


def block_mask(rows: int, cols: int, density: float, gen):
    """round(density * cols) (at least one) blocks in every block row, columns drawn at random."""
    import torch

    keep = max(1, round(density * cols))
    scores = torch.rand(rows, cols, generator=gen, device=gen.device)
    chosen = scores.argsort(dim=1)[:, :keep]
    mask = torch.zeros(rows, cols, dtype=torch.bool, device=gen.device)
    mask.scatter_(1, chosen, True)
    return mask


def random_weight(out_features: int, in_features: int, block: int, density: float, gen, dtype) -> BlockSparseWeight:
    """A weight whose kept blocks hold N(0, 1 / fan-in kept) values, exact in `dtype`."""
    import torch

    if out_features % block or in_features % block:
        raise ValueError(f"{out_features} x {in_features} is not a whole number of {block} x {block} blocks")
    mask = block_mask(out_features // block, in_features // block, density, gen)
    kept_fan_in = int(mask.sum(1).max()) * block
    dense = torch.randn(out_features, in_features, generator=gen, device=gen.device) / kept_fan_in ** 0.5
    return from_dense(dense, mask, block, dtype)


def from_dense(dense, mask, block: int, dtype) -> BlockSparseWeight:
    """`dense` kept at `mask`'s blocks (zero elsewhere), in `dtype`, and its BSR arrays."""
    import torch

    rows, cols = mask.shape
    expanded = mask.repeat_interleave(block, 0).repeat_interleave(block, 1)
    dense = torch.where(expanded, dense, torch.zeros((), device=dense.device)).to(dtype)
    tiles = dense.reshape(rows, block, cols, block).permute(0, 2, 1, 3)
    values = tiles[mask].contiguous()  # row-major block order, as nonzero() walks the mask
    mask_cpu = mask.cpu()
    indptr = np.concatenate([[0], np.cumsum(mask_cpu.sum(1).numpy())]).astype(np.int64)
    indices = mask_cpu.nonzero()[:, 1].numpy().astype(np.int64)
    return BlockSparseWeight(mask=mask, dense=dense, indptr=indptr, indices=indices, values=values, block=block)


def gather_blocks(dense, weight: BlockSparseWeight, which=None):
    """The blocks of a dense (rows, cols) tensor at `weight`'s stored blocks (all, or the block
    positions `which`), shaped (count, block, block) like `weight.values`."""
    import torch

    b = weight.block
    rows = torch.from_numpy(weight.block_rows()).to(dense.device)
    cols = torch.from_numpy(weight.indices).to(dense.device)
    if which is not None:
        rows, cols = rows[which], cols[which]
    tiles = dense.reshape(dense.shape[0] // b, b, dense.shape[1] // b, b)
    return tiles[rows, :, cols, :]


class ProductRates:
    """The work of an M x K block-sparse `weight` times N columns, for operands holding `case`
    (params m, k, n) and `weight`: `flops` counts the stored blocks' (2 nnzb b^2 N, the rate every
    implementation is given), `dense_flops` the dense product's (2 M K N)."""

    @property
    def flops(self) -> int:
        return 2 * self.weight.nnzb * self.weight.block ** 2 * self.case.params["n"]

    @property
    def dense_flops(self) -> int:
        p = self.case.params
        return 2 * p["m"] * p["k"] * p["n"]
