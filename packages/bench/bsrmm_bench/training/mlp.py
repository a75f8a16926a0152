"""Forward + backward of a transformer MLP with block-sparse weights: plain, down(gelu(up(x))),
or SiLU-gated, down(silu(gate(x)) * up(x)); no biases (as in LLaMA-style MLPs). One step is
y = mlp(x) and the gradients of x and of every weight for an upstream gradient dy. bsrmm's
BsrLinear (activations fused), dense nn.Linear holding the masked weights, and the same MLP on
STK (stk.ops.dds(x, W.t()), STK's own autograd). All start from the same weights, checked
against float64 autograd of the dense-masked MLP: y and dx on sampled rows, every weight
gradient at its stored blocks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ours
from ..backends import Unavailable
from ..impl import Implementation, Prepared
from ..peers import stk_triton
from . import weights

CHECKED_ROWS = 256
# Chained products and activations rounded to the dtype between layers: looser than one product.
TOLERANCE_FACTOR = 4


@dataclass
class MlpOperands:
    case: object
    layers: dict  # name -> BlockSparseWeight ("up", "down", and "gate" when gated)
    x: object  # (tokens, d_model)
    dy: object  # (tokens, d_model)

    @property
    def gated(self) -> bool:
        return self.case.params["mlp"] == "gated"

    @property
    def flops(self) -> int:
        """Forward, input and weight gradient of every layer on its stored blocks."""
        t = self.case.params["tokens"]
        return sum(3 * 2 * w.nnzb * w.block ** 2 * t for w in self.layers.values())

    @property
    def dense_flops(self) -> int:
        t = self.case.params["tokens"]
        return sum(3 * 2 * w.shape[0] * w.shape[1] * t for w in self.layers.values())


def build(case, device: str) -> MlpOperands:
    import torch

    p = case.params
    dtype = getattr(torch, case.dtype)
    gen = weights.generator(device, case.seed)
    shapes = {"up": (p["d_ff"], p["d_model"]), "down": (p["d_model"], p["d_ff"])}
    if p["mlp"] == "gated":
        shapes = {"gate": shapes["up"], **shapes}
    layers = {name: weights.random_weight(o, i, case.block, case.density, gen, dtype) for name, (o, i) in shapes.items()}
    x = torch.randn(p["tokens"], p["d_model"], generator=gen, device=device).to(dtype)
    dy = torch.randn(p["tokens"], p["d_model"], generator=gen, device=device).to(dtype)
    return MlpOperands(case=case, layers=layers, x=x, dy=dy)


def compose(ops: MlpOperands, linear, act_up, act_gate):
    """The MLP from `linear(name, h)` (a layer's product) and the activations applied to the
    up (plain: gelu) and gate (silu) products: identity where the layer fused them."""

    def forward(x):
        if ops.gated:
            return linear("down", act_gate(linear("gate", x)) * linear("up", x))
        return linear("down", act_up(linear("up", x)))

    return forward


def gelu(h):
    import torch.nn.functional as F

    return F.gelu(h, approximate="tanh")


def silu(h):
    import torch.nn.functional as F

    return F.silu(h)


def step_outputs(forward, x, params, dy):
    """One fwd + bwd: (y, dx, weight gradients in `params` order)."""
    import torch

    x = x.detach().requires_grad_(True)
    y = forward(x)
    grads = torch.autograd.grad(y, [x, *params], dy)
    return y, grads[0], list(grads[1:])


def reference(ops: MlpOperands):
    """float64 y and dx rows and every weight's gradient at its stored blocks."""
    import torch

    dense = {n: w.dense.double().requires_grad_(True) for n, w in ops.layers.items()}
    forward = compose(ops, lambda n, h: h @ dense[n].T, gelu, silu)
    y, dx, grads = step_outputs(forward, ops.x.double(), list(dense.values()), ops.dy.double())
    rows = checked_positions(ops)
    idx = torch.from_numpy(rows).to(y.device)
    blocks = {n: weights.gather_blocks(g, ops.layers[n]) for n, g in zip(dense, grads)}
    return {"y": y[idx].detach(), "dx": dx[idx], **{f"d{n}": b for n, b in blocks.items()}}


def checked_positions(ops: MlpOperands) -> np.ndarray:
    t = ops.case.params["tokens"]
    return np.unique(np.linspace(0, t - 1, min(CHECKED_ROWS, t)).round().astype(np.int64))


def _collect(ops: MlpOperands, y, dx, grads_as_blocks: dict) -> dict:
    import torch

    idx = torch.from_numpy(checked_positions(ops)).to(y.device)
    # "_full": every output, for the NaN / Inf count over all of it (not only the checked rows).
    return {"y": y[idx], "dx": dx[idx], **{f"d{n}": g for n, g in grads_as_blocks.items()},
            "_full": (y, dx, *grads_as_blocks.values())}


def _prepared(ops, forward, params, to_blocks, notes) -> Prepared:
    last: dict = {}

    def run(i: int) -> None:
        y, dx, grads = step_outputs(forward, ops.x, params, ops.dy)
        last["step"] = (y, dx, grads)

    def result(i: int) -> dict:
        y, dx, grads = last["step"]
        return _collect(ops, y, dx, {n: to_blocks(n, g) for n, g in zip(ops.layers, grads)})

    return Prepared(run=run, result=result, notes=notes)


def _prepare_ours(ops: MlpOperands, backend) -> Prepared:
    bsrmm_torch = ours.load_torch()
    import torch
    from torch import nn

    if backend.device == "cuda" and not ours.load().cuda_available():
        raise Unavailable("bsrmm reports no CUDA support (built without CUDA, or no usable device)")
    fused = {"up": None if ops.gated else "gelu", "gate": "silu", "down": None}
    layers = {}
    for name, w in ops.layers.items():
        linear = nn.Linear(w.shape[1], w.shape[0], bias=False, device=w.dense.device, dtype=w.dense.dtype)
        with torch.no_grad():
            linear.weight.copy_(w.dense)
        layers[name] = bsrmm_torch.BsrLinear.from_linear(linear, w.block, mask=w.mask, activation=fused[name])
    forward = compose(ops, lambda n, h: layers[n](h), lambda h: h, lambda h: h)  # fused into the layers
    params = [layers[n].values for n in ops.layers]
    return _prepared(ops, forward, params, lambda n, g: g,
                     ["BsrLinear (bsrmm.torch custom ops), activation fused into gate / up"])


def _prepare_dense(ops: MlpOperands, backend) -> Prepared:
    from torch import nn

    layers = {}
    for name, w in ops.layers.items():
        linear = nn.Linear(w.shape[1], w.shape[0], bias=False, device=w.dense.device, dtype=w.dense.dtype)
        linear.weight.data.copy_(w.dense)
        layers[name] = linear
    forward = compose(ops, lambda n, h: layers[n](h), gelu, silu)
    params = [layers[n].weight for n in ops.layers]
    return _prepared(ops, forward, params, lambda n, g: weights.gather_blocks(g, ops.layers[n]),
                     ["dense nn.Linear holding the masked weights (full dense gradients)"])


def _prepare_stk(ops: MlpOperands, backend) -> Prepared:
    p = ops.case.params
    reason = stk_triton.why_not((ops.case.block,) * 2, ops.case.dtype, backend.device,
                                (p["tokens"], p["d_model"], p["d_ff"]))
    if reason:
        raise Unavailable(reason)
    stk = stk_triton.load()
    mats, params = {}, []
    for name, w in ops.layers.items():
        data = w.values.clone().requires_grad_(True)
        mats[name] = stk_triton.matrix(stk, w.shape, w.indptr, w.indices, data).t()  # x @ W^T = dds(x, W^T)
        params.append(data)
    forward = compose(ops, lambda n, h: stk.ops.dds(h, mats[n]), gelu, silu)
    return _prepared(ops, forward, params, lambda n, g: g, ["stk.ops.dds(x, W.t()) per layer, STK's autograd"])


OURS = Implementation(name="bsrmm", role="ours", label="bsrmm BsrLinear", prepare=_prepare_ours)
DENSE = Implementation(name="torch.linear", role="dense", label="dense nn.Linear", prepare=_prepare_dense)
STK = Implementation(name="stk", role="sparse", label="STK", prepare=_prepare_stk)
IMPLEMENTATIONS = (OURS, STK, DENSE)
