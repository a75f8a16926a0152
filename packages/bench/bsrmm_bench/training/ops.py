"""Each op of a training step alone, on W (M x K, block-sparse), X (K x N: N tokens as columns)
and dY (M x N): forward Y = W X, input gradient dX = W^T dY, weight gradient dW = dY X^T at W's
stored blocks. bsrmm (bsrmm.matmul, transpose_a for W^T; bsrmm.sddmm), STK (stk.ops.dsd on W and
on its transposed view; stk.ops.sdd) and dense torch.mm on the masked weight (the whole dense
product: its weight gradient is the full M x K). Rates count the stored blocks' work,
2 * nnzb * b * b * N, for everyone."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ours
from ..backends import Unavailable
from ..impl import Implementation, Prepared
from ..peers import stk_triton
from . import weights

CHECKED_ROWS = 256  # rows of Y / dX checked against float64 (first, last, evenly spaced)
CHECKED_BLOCKS = 64  # blocks of dW checked likewise


@dataclass
class OpOperands(weights.ProductRates):
    case: object
    weight: weights.BlockSparseWeight
    x: object  # (K, N)
    dy: object  # (M, N)

    @property
    def op(self) -> str:
        return self.case.params["op"]

    def output_shape(self, dense: bool = False) -> tuple[int, ...]:
        p = self.case.params
        if self.op == "forward":
            return (p["m"], p["n"])
        if self.op == "input_grad":
            return (p["k"], p["n"])
        return (p["m"], p["k"]) if dense else (self.weight.nnzb, self.weight.block, self.weight.block)


def build(case, device: str) -> OpOperands:
    import torch

    p = case.params
    dtype = getattr(torch, case.dtype)
    gen = weights.generator(device, case.seed)
    w = weights.random_weight(p["m"], p["k"], case.block, case.density, gen, dtype)
    x = torch.randn(p["k"], p["n"], generator=gen, device=device).to(dtype)
    dy = torch.randn(p["m"], p["n"], generator=gen, device=device).to(dtype)
    return OpOperands(case=case, weight=w, x=x, dy=dy)


def checked_positions(total: int, count: int) -> np.ndarray:
    return np.unique(np.linspace(0, total - 1, min(count, total)).round().astype(np.int64))


def reference(ops: OpOperands):
    """(positions, float64 values) of the checked part of the output."""
    import torch

    w64, x64, dy64 = ops.weight.dense.double(), ops.x.double(), ops.dy.double()
    if ops.op == "weight_grad":
        which = checked_positions(ops.weight.nnzb, CHECKED_BLOCKS)
        b = ops.weight.block
        rows, cols = ops.weight.block_rows()[which], ops.weight.indices[which]
        ref = [dy64[r * b:(r + 1) * b] @ x64[c * b:(c + 1) * b].T for r, c in zip(rows, cols)]
        return which, torch.stack(ref)
    rows = checked_positions(ops.output_shape()[0], CHECKED_ROWS)
    idx = torch.from_numpy(rows).to(w64.device)
    if ops.op == "forward":
        return rows, w64[idx] @ x64
    return rows, w64[:, idx].T @ dy64


def checked_part(ops: OpOperands, out, positions: np.ndarray):
    """The part of an implementation's output the reference covers."""
    import torch

    idx = torch.from_numpy(positions).to(out.device)
    if ops.op == "weight_grad" and out.dim() == 2:  # the dense peer's full M x K gradient
        return weights.gather_blocks(out, ops.weight, idx)
    return out[idx]


def bsrmm_for(backend):
    """bsrmm, or Unavailable where the backend's device is CUDA and bsrmm has none."""
    bsrmm = ours.load()
    if backend.device == "cuda" and not bsrmm.cuda_available():
        raise Unavailable("bsrmm reports no CUDA support (built without CUDA, or no usable device)")
    return bsrmm


def bsr_matrix(bsrmm, weight: weights.BlockSparseWeight, values, device: str):
    """`weight`'s pattern with `values` as a bsrmm matrix on `device`. bsrmm takes the three
    arrays on one device: the indices go where the values are."""
    import torch

    indptr, indices = (torch.from_numpy(v.astype(np.int32)).to(values.device) for v in (weight.indptr, weight.indices))
    return bsrmm.BsrMatrix.from_arrays(indptr, indices, values, weight.shape, device=device)


def _prepare_ours(ops: OpOperands, backend) -> Prepared:
    bsrmm = bsrmm_for(backend)
    import torch

    device = backend.device
    w = ops.weight
    a = bsr_matrix(bsrmm, w, w.values, device)
    out = torch.empty(ops.output_shape(), dtype=w.values.dtype, device=w.values.device)
    run = {
        "forward": lambda i: bsrmm.matmul(a, ops.x, out=out),
        "input_grad": lambda i: bsrmm.matmul(a, ops.dy, out=out, transpose_a=True),
        "weight_grad": lambda i: bsrmm.sddmm(a, ops.dy, ops.x.T, out=out),
    }[ops.op]
    notes = {"forward": "bsrmm.matmul(W, X)", "input_grad": "bsrmm.matmul(W, dY, transpose_a=True)",
             "weight_grad": "bsrmm.sddmm(W, dY, X.T) (X^T a view, no copy)"}[ops.op]
    return Prepared(run=run, result=lambda i: out, poison=lambda i: out.fill_(float("nan")), notes=[notes])


def _prepare_dense(ops: OpOperands, backend) -> Prepared:
    import torch

    w = ops.weight.dense
    out = torch.empty(ops.output_shape(dense=True), dtype=w.dtype, device=w.device)
    run = {
        "forward": lambda i: torch.mm(w, ops.x, out=out),
        "input_grad": lambda i: torch.mm(w.T, ops.dy, out=out),
        "weight_grad": lambda i: torch.mm(ops.dy, ops.x.T, out=out),
    }[ops.op]
    note = "torch.mm on the dense masked weight" + (" (the full M x K gradient)" if ops.op == "weight_grad" else "")
    return Prepared(run=run, result=lambda i: out, poison=lambda i: out.fill_(float("nan")), notes=[note])


def _prepare_stk(ops: OpOperands, backend) -> Prepared:
    p = ops.case.params
    reason = stk_triton.why_not((ops.case.block,) * 2, ops.case.dtype, backend.device, (p["m"], p["k"], p["n"]))
    if reason:
        raise Unavailable(reason)
    stk = stk_triton.load()
    w = ops.weight
    a = stk_triton.matrix(stk, w.shape, w.indptr, w.indices, w.values)
    a_t = a.t()
    result: list = [None]

    def run(i: int) -> None:
        if ops.op == "forward":
            result[0] = stk.ops.dsd(a, ops.x)
        elif ops.op == "input_grad":
            result[0] = stk.ops.dsd(a_t, ops.dy)
        else:
            result[0] = stk.ops.sdd(ops.dy, ops.x.T, a).data

    notes = {"forward": "stk.ops.dsd(W, X)", "input_grad": "stk.ops.dsd(W.t(), dY) (STK's transposed view)",
             "weight_grad": "stk.ops.sdd(dY, X.T, W)"}[ops.op]
    return Prepared(run=run, result=lambda i: result[0], notes=[notes + ", output allocated by each call"])


OURS = Implementation(name="bsrmm", role="ours", label="bsrmm", prepare=_prepare_ours)
DENSE = Implementation(name="torch.mm", role="dense", label="dense torch.mm", prepare=_prepare_dense)
STK = Implementation(name="stk", role="sparse", label="STK", prepare=_prepare_stk)
IMPLEMENTATIONS = (OURS, STK, DENSE)
