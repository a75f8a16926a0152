"""The fp8 suite's product (issue 27, cases/fp8.json): Y = W X with W block-sparse in e4m3, one
float32 scale per stored block (block-wise quantisation), and X (K x N tokens) in e4m3 with one
scale, given column-major: X^T is the tokens x features activation of a linear layer, row-major
(what torch._scaled_mm takes as its second operand, and what the Hopper fp8 kernels read). Y is
bfloat16. Implementations: bsrmm in fp8; bsrmm's own bfloat16 product of the same dequantised
values (B column-major too), the baseline the issue's "1.6x" is against; dense cuBLAS fp8
(torch._scaled_mm on W re-quantised with one scale: cuBLAS takes a scale per tensor, so its
error is that quantisation's, bounded looser) and dense bfloat16 torch.mm. Rates count the
stored blocks' work, 2 * nnzb * b * b * N, for everyone; checked on sampled rows against float64
of the dequantised operands."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backends import Unavailable
from ..impl import Implementation, Prepared
from . import weights
from .ops import bsr_matrix, bsrmm_for, checked_positions

CHECKED_ROWS = 256
E4M3_MAX = 448.0
# Relative Frobenius error allowed per implementation where it is not the case's (bfloat16
# output: 1e-2): dense fp8 re-quantises W with one scale (e4m3 keeps 3 mantissa bits, 2^-4 of
# each element; a sum of many such errors comes out well below that).
TOLERANCES = {"torch._scaled_mm": 0.0625}


@dataclass
class Fp8Operands(weights.ProductRates):
    case: object
    weight: weights.BlockSparseWeight  # the dequantised values (float32), dense and as blocks
    values8: object  # (nnzb, b, b) e4m3, on the host (bsrmm quantises and moves matrices itself)
    scales: np.ndarray  # (nnzb,) float32, one per stored block
    x8: object  # (N, K) e4m3, row-major, on the device: B = x8.t()
    x_scale: float

    def output_shape(self) -> tuple[int, int]:
        return (self.case.params["m"], self.case.params["n"])

    def b_dequantised(self, dtype):
        """B (K x N) as the fp8 values times their scale, in `dtype`, column-major like x8.t()."""
        return (self.x8.to(dtype) * self.x_scale).t()


def quantise_blocks(values):
    """(nnzb, b, b) float32 blocks into e4m3 with one scale each (amax / 448; 1 for a zero
    block), and the scales."""
    import torch

    amax = values.abs().amax(dim=(1, 2))
    scales = torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))
    return (values / scales[:, None, None]).to(torch.float8_e4m3fn), scales


def build(case, device: str) -> Fp8Operands:
    import torch

    p = case.params
    gen = weights.generator(device, case.seed)
    w = weights.random_weight(p["m"], p["k"], case.block, case.density, gen, torch.float32)
    values8, scales = quantise_blocks(w.values)
    dequantised = weights.from_dense(_scatter_blocks(w, values8.float() * scales[:, None, None]), w.mask,
                                     case.block, torch.float32)
    x = torch.randn(p["n"], p["k"], generator=gen, device=device)
    x_scale = float(x.abs().max()) / E4M3_MAX
    x8 = (x / x_scale).to(torch.float8_e4m3fn)
    return Fp8Operands(case=case, weight=dequantised, values8=values8.cpu(), scales=scales.cpu().numpy(),
                       x8=x8, x_scale=x_scale)


def _scatter_blocks(w: weights.BlockSparseWeight, blocks):
    """A dense (rows, cols) tensor holding `blocks` at w's stored blocks, zero elsewhere."""
    import torch

    dense = torch.zeros_like(w.dense)
    rows, cols = w.mask.shape
    dense.reshape(rows, w.block, cols, w.block).permute(0, 2, 1, 3)[w.mask] = blocks
    return dense


def reference(ops: Fp8Operands):
    """(rows, float64 values) of the checked rows of Y."""
    import torch

    rows = checked_positions(ops.output_shape()[0], CHECKED_ROWS)
    idx = torch.from_numpy(rows).to(ops.weight.dense.device)
    return rows, ops.weight.dense.double()[idx] @ ops.b_dequantised(torch.float64)


def checked_part(ops: Fp8Operands, out, positions: np.ndarray):
    import torch

    return out[torch.from_numpy(positions).to(out.device)]


def _prepare_ours(ops: Fp8Operands, backend) -> Prepared:
    bsrmm = bsrmm_for(backend)
    import torch

    device = backend.device
    try:
        import ml_dtypes  # noqa: F401
    except ImportError as e:
        raise Unavailable("bsrmm's fp8 matrices are built from numpy arrays, which need ml_dtypes") from e
    w = ops.weight
    a = bsrmm.BsrMatrix.from_arrays(w.indptr, w.indices, ops.values8, w.shape, scales=ops.scales,
                                    scale="block", device=device)
    b = ops.x8.t()
    out = torch.empty(ops.output_shape(), dtype=torch.bfloat16, device=device)
    context = bsrmm.Context(device)
    run = lambda i: bsrmm.matmul(a, b, b_scales=ops.x_scale, out=out, context=context)
    run(0)  # untimed: which kernel the call takes
    notes = ["bsrmm.matmul(W8, x8.t(), b_scales=s) (per-block scales, B column-major)",
             f"variant {context.last_variant}"]
    return Prepared(run=run, result=lambda i: out, poison=lambda i: out.fill_(float("nan")), notes=notes)


def _prepare_bf16(ops: Fp8Operands, backend) -> Prepared:
    bsrmm = bsrmm_for(backend)
    import torch

    device = backend.device
    w = ops.weight
    a = bsr_matrix(bsrmm, w, w.values.to(torch.bfloat16), device)
    b = ops.b_dequantised(torch.bfloat16)
    out = torch.empty(ops.output_shape(), dtype=torch.bfloat16, device=device)
    context = bsrmm.Context(device)
    run = lambda i: bsrmm.matmul(a, b, out=out, context=context)
    run(0)
    notes = ["bsrmm.matmul on the dequantised values in bfloat16, B column-major", f"variant {context.last_variant}"]
    return Prepared(run=run, result=lambda i: out, poison=lambda i: out.fill_(float("nan")), notes=notes)


def _prepare_dense_fp8(ops: Fp8Operands, backend) -> Prepared:
    import torch

    if backend.device != "cuda":
        raise Unavailable("torch._scaled_mm runs on CUDA only")
    dense = ops.weight.dense
    w_scale = float(dense.abs().max()) / E4M3_MAX
    w8 = (dense / w_scale).to(torch.float8_e4m3fn)
    scale_a = torch.tensor(w_scale, dtype=torch.float32, device=dense.device)
    scale_b = torch.tensor(ops.x_scale, dtype=torch.float32, device=dense.device)
    b = ops.x8.t()
    result: list = [None]

    def run(i: int) -> None:
        result[0] = torch._scaled_mm(w8, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)

    try:
        run(0)
    except RuntimeError as e:
        raise Unavailable(f"torch._scaled_mm: {e}") from e
    return Prepared(run=run, result=lambda i: result[0],
                    notes=["torch._scaled_mm(W8 dense, x8.t()), W re-quantised with one scale; "
                           "output allocated by each call"])


def _prepare_dense_bf16(ops: Fp8Operands, backend) -> Prepared:
    import torch

    w = ops.weight.dense.to(torch.bfloat16)
    b = ops.b_dequantised(torch.bfloat16)
    out = torch.empty(ops.output_shape(), dtype=torch.bfloat16, device=w.device)
    run = lambda i: torch.mm(w, b, out=out)
    return Prepared(run=run, result=lambda i: out, poison=lambda i: out.fill_(float("nan")),
                    notes=["torch.mm on the dense dequantised weight in bfloat16"])


OURS = Implementation(name="bsrmm", role="ours", label="bsrmm fp8", prepare=_prepare_ours)
BF16 = Implementation(name="bsrmm.bf16", role="sparse", label="bsrmm bf16", prepare=_prepare_bf16)
DENSE_FP8 = Implementation(name="torch._scaled_mm", role="dense", label="dense cuBLAS fp8", prepare=_prepare_dense_fp8)
DENSE_BF16 = Implementation(name="torch.mm", role="dense", label="dense torch.mm bf16", prepare=_prepare_dense_bf16)
IMPLEMENTATIONS = (OURS, BF16, DENSE_FP8, DENSE_BF16)
