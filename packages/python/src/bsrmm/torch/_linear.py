"""BsrLinear: nn.Linear with a block-sparse weight. The stored blocks are one Parameter
``values`` of shape (nnzb, bh, bw) in row-major block order (as ``to_sparse_bsr`` and scipy
store them); which blocks those are is the buffers ``indptr`` and ``indices`` (BSR, int64). The
state_dict is those plain tensors (and ``bias``), so ``torch.load(weights_only=True)`` reads it."""

from __future__ import annotations

import math
import weakref
from typing import Any, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import nn

from . import _ops, _patterns

BlockSize = Union[int, Tuple[int, int]]


def _blocksize(blocksize: BlockSize) -> Tuple[int, int]:
    pair = (blocksize, blocksize) if isinstance(blocksize, int) else tuple(blocksize)
    if len(pair) != 2 or not all(isinstance(v, int) and v >= 1 for v in pair):
        raise ValueError(f"blocksize must be a positive int or (height, width); got {blocksize!r}")
    return (pair[0], pair[1])


def _block_grid(out_features: int, in_features: int, blocksize: Tuple[int, int]) -> Tuple[int, int]:
    bh, bw = blocksize
    if out_features % bh or in_features % bw:
        raise ValueError(
            f"a {out_features} x {in_features} weight is not a whole number of {bh} x {bw} blocks"
        )
    return out_features // bh, in_features // bw


def _pattern_of_mask(mask: torch.Tensor, grid: Tuple[int, int]) -> Tuple[torch.Tensor, torch.Tensor]:
    """BSR indptr and indices of the True blocks of a boolean block mask, row by row."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean torch tensor; got {type(mask).__name__}"
                        f"{'' if not isinstance(mask, torch.Tensor) else ' of ' + str(mask.dtype)}")
    if tuple(mask.shape) != grid:
        raise ValueError(
            f"mask must have shape {grid} (out_features / bh, in_features / bw); got {tuple(mask.shape)}"
        )
    mask = mask.detach().to("cpu")
    indptr = torch.cat([torch.zeros(1, dtype=torch.int64), mask.sum(1).cumsum(0)])
    return indptr, mask.nonzero()[:, 1].contiguous()


def _mask_of_density(weight: torch.Tensor, blocksize: Tuple[int, int], density: float) -> torch.Tensor:
    """The blocks of ``weight`` with the largest Frobenius norms, ``density`` of them (rounded,
    at least one)."""
    if not isinstance(density, (int, float)) or isinstance(density, bool) or not 0 < density <= 1:
        raise ValueError(f"density must be a number in (0, 1]; got {density!r}")
    bh, bw = blocksize
    rows, cols = weight.shape[0] // bh, weight.shape[1] // bw
    norms = weight.detach().float().reshape(rows, bh, cols, bw).square().sum((1, 3)).flatten()
    keep = max(1, round(density * norms.numel()))
    mask = torch.zeros(norms.numel(), dtype=torch.bool, device=norms.device)
    mask[torch.topk(norms, keep).indices] = True
    return mask.reshape(rows, cols)


class BsrLinear(nn.Module):
    """``y = activation(x @ W^T + bias)`` with W (out_features x in_features) block-sparse: the
    blocks ``mask`` (boolean, (out_features / bh, in_features / bw)) names are stored in
    ``values``, initialised as nn.Linear initialises its weight. ``activation`` (None, "relu",
    "gelu" (tanh approximation) or "silu") is fused into the multiply, and its gradient into the
    backward."""

    indptr: torch.Tensor  # buffers (register_buffer), named here for the type checker
    indices: torch.Tensor
    values: nn.Parameter
    bias: Optional[nn.Parameter]

    def __init__(
        self, in_features: int, out_features: int, blocksize: BlockSize, mask: torch.Tensor,
        *, bias: bool = True, activation: Optional[str] = None,
        device: Any = None, dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.blocksize = _blocksize(blocksize)
        self.activation = "none" if activation is None else activation
        if self.activation not in _ops.ACTIVATIONS:
            raise ValueError(f"activation must be None, 'relu', 'gelu' or 'silu'; got {activation!r}")
        grid = _block_grid(self.out_features, self.in_features, self.blocksize)
        indptr, indices = _pattern_of_mask(mask, grid)
        self.register_buffer("indptr", indptr.to(device))
        self.register_buffer("indices", indices.to(device))
        options = {"device": device, "dtype": dtype}
        self.values = nn.Parameter(torch.empty((indices.numel(), *self.blocksize), **options))
        self.bias = nn.Parameter(torch.empty(self.out_features, **options)) if bias else None
        bound = 1 / math.sqrt(self.in_features)  # nn.Linear's: kaiming_uniform(a=sqrt(5))
        nn.init.uniform_(self.values, -bound, bound)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -bound, bound)
        self._register_pattern()

    @classmethod
    def from_linear(
        cls, linear: nn.Linear, blocksize: BlockSize, *, density: Optional[float] = None,
        mask: Optional[torch.Tensor] = None, activation: Optional[str] = None,
    ) -> "BsrLinear":
        """``linear``'s weight kept at the blocks ``mask`` names, or at the ``density`` fraction
        of blocks with the largest Frobenius norms (one of the two); its bias, device, dtype."""
        if not isinstance(linear, nn.Linear):
            raise TypeError(f"linear must be a torch.nn.Linear; got {type(linear).__name__}")
        if (density is None) == (mask is None):
            raise ValueError("pass exactly one of density= (prune by block norm) and mask= (keep these blocks)")
        size = _blocksize(blocksize)
        weight = linear.weight
        grid = _block_grid(linear.out_features, linear.in_features, size)
        if mask is None:
            mask = _mask_of_density(weight, size, density)  # type: ignore[arg-type]
        layer = cls(linear.in_features, linear.out_features, size, mask,
                    bias=linear.bias is not None, activation=activation,
                    device=weight.device, dtype=weight.dtype)
        bh, bw = size
        blocks = weight.detach().reshape(grid[0], bh, grid[1], bw).permute(0, 2, 1, 3)
        with torch.no_grad():
            layer.values.copy_(blocks[mask.to(weight.device)])
            if linear.bias is not None and layer.bias is not None:
                layer.bias.copy_(linear.bias)
        return layer

    # ---- the pattern's life: registered under a key the ops take, prepared where values are ----

    def _register_pattern(self) -> None:
        self._pattern_key = _patterns.register(self._pattern())
        weakref.finalize(self, _patterns.release, self._pattern_key)
        self._prepare()

    def _pattern(self) -> _patterns.Pattern:
        return _patterns.Pattern(self.indptr, self.indices, (self.out_features, self.in_features),
                                 self.blocksize)

    def _prepare(self) -> None:
        """Uploads the pattern to where the values are, in their dtype, before any step does."""
        _patterns.lookup(self._pattern_key).prepare(self.values.device, self.values.dtype)

    def _apply(self, fn: Any, recurse: bool = True) -> "BsrLinear":  # .to(), .half(), ...: the pattern follows
        module: BsrLinear = super()._apply(fn, recurse)  # type: ignore[no-untyped-call]
        self._prepare()
        return module

    def _load_from_state_dict(  # type: ignore[no-untyped-def]  # torch's own is untyped
        self, state_dict, prefix, *args, **kwargs
    ):
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
        _patterns.replace(self._pattern_key, self._pattern())
        self._prepare()

    def __setstate__(self, state: Any) -> None:  # copy.deepcopy and pickle: a key of the copy's own
        super().__setstate__(state)  # type: ignore[no-untyped-call]
        self._register_pattern()

    # ---- use ----

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.in_features:
            raise ValueError(f"x has {x.shape[-1]} features; this layer takes {self.in_features}")
        tokens = x if x.dim() == 2 else x.reshape(-1, self.in_features)
        unfused = self._activation_unfused(x)
        activation = "none" if unfused else self.activation
        # Inference in eager mode skips torch's dispatcher (a third of a decode step's host
        # time); anything autograd, a trace or a mode must see goes through the op.
        values, bias = self.values, self.bias
        multiply = _ops.bsr_mm_body if _ops.runs_eagerly(values, tokens, bias) else _ops.bsr_mm
        y: torch.Tensor = multiply(values, self._pattern_key, tokens, bias, activation, False)
        if unfused:
            y = F.gelu(y, approximate="tanh") if self.activation == "gelu" else F.silu(y)
        return y if x.dim() == 2 else y.reshape(*x.shape[:-1], self.out_features)

    def _activation_unfused(self, x: torch.Tensor) -> bool:
        """Whether gelu / silu runs as torch's own op after the multiply instead of in its
        epilogue: when autograd records the step. Their backward needs z, the multiply's output
        before the activation; fused, the op keeps only y and recomputes z with a second
        multiply in the backward (a fifth product per MLP step, and silu's derivative in four
        elementwise ops): an MLP fwd + bwd took 3.51 ms (H100, 4096 -> 14336 -> 4096, 8192
        tokens, block 128, d 0.25; STK 3.89), docs/perf-log.md entry 57. Unfused, autograd
        keeps z and runs torch's fused activation backward, as it does for STK and nn.Linear.
        Inference (no grad) keeps the fused epilogue, which saves the activation's pass."""
        if self.activation not in ("gelu", "silu") or not torch.is_grad_enabled():
            return False
        bias_grad = self.bias is not None and self.bias.requires_grad
        return self.values.requires_grad or x.requires_grad or bias_grad

    def to_dense(self) -> torch.Tensor:
        """W as a dense (out_features x in_features) tensor, zeros outside the stored blocks
        (differentiable in ``values``)."""
        rows, cols = _block_grid(self.out_features, self.in_features, self.blocksize)
        block_rows = torch.repeat_interleave(
            torch.arange(rows, device=self.indptr.device), self.indptr.diff()
        )
        grid = self.values.new_zeros((rows, cols, *self.blocksize))
        grid = grid.index_put((block_rows, self.indices), self.values)
        return grid.permute(0, 2, 1, 3).reshape(self.out_features, self.in_features)

    @property
    def nnzb(self) -> int:
        return self.values.shape[0]

    def extra_repr(self) -> str:
        grid = _block_grid(self.out_features, self.in_features, self.blocksize)
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"blocksize={self.blocksize}, nnzb={self.nnzb} of {grid[0] * grid[1]}, "
                f"bias={self.bias is not None}, activation={self.activation!r}")
