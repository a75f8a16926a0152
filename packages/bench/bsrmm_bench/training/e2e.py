"""A small end-to-end training run: a two-layer MLP, d_in -> d_hidden (GELU) -> d_out, with
block-sparse weights learns a synthetic regression task (a random teacher MLP of the same
sparsity) by SGD on mean squared error. bsrmm's BsrLinear model against the dense-masked
reference (nn.Parameter dense weights multiplied by the block mask in every forward, so their
gradients vanish outside it), from the same initial weights on the same batches: the loss curves
must agree within `loss_rtol` at every step and both must fall."""

from __future__ import annotations

import time

from .. import ours
from ..backends import Unavailable
from . import weights

# Both curves must fall to this fraction of their first loss (each averaged over a tenth of the
# steps): proof that training happened. The curves' agreement is the check of the gradients.
MUST_FALL_TO = 0.75


def task(case, device: str):
    """(student weights, teacher, batches): the student's initial layers, a teacher function and
    the `steps` input / target batches, all generated from the case seed."""
    import torch
    import torch.nn.functional as F

    p = case.params
    dtype = getattr(torch, case.dtype)
    gen = weights.generator(device, case.seed)
    shapes = {"hidden": (p["d_hidden"], p["d_in"]), "out": (p["d_out"], p["d_hidden"])}
    student = {n: weights.random_weight(o, i, case.block, case.density, gen, dtype) for n, (o, i) in shapes.items()}
    teacher = {n: weights.random_weight(o, i, case.block, case.density, gen, torch.float32) for n, (o, i) in shapes.items()}

    def target(x):
        return F.gelu(x @ teacher["hidden"].dense.T, approximate="tanh") @ teacher["out"].dense.T

    xs = [torch.randn(p["batch"], p["d_in"], generator=gen, device=device) for _ in range(p["steps"])]
    return student, [(x.to(dtype), target(x).to(dtype)) for x in xs]


def step_flops(case) -> int:
    """One SGD step's products on the stored blocks: forward, input and weight gradient of each
    layer (2 * nnzb * b * b * batch each)."""
    p = case.params
    kept = case.density * (p["d_hidden"] * p["d_in"] + p["d_out"] * p["d_hidden"])
    return int(3 * 2 * kept * p["batch"])


def bsr_model(student):
    bsrmm_torch = ours.load_torch()
    import torch
    from torch import nn

    layers = []
    for name, act in (("hidden", "gelu"), ("out", None)):
        w = student[name]
        linear = nn.Linear(w.shape[1], w.shape[0], bias=False, device=w.dense.device, dtype=w.dense.dtype)
        with torch.no_grad():
            linear.weight.copy_(w.dense)
        layers.append(bsrmm_torch.BsrLinear.from_linear(linear, w.block, mask=w.mask, activation=act))
    return nn.Sequential(*layers)


class DenseMasked:
    """The reference: dense weights, masked in the forward."""

    def __init__(self, student):
        import torch

        self.weights = [torch.nn.Parameter(student[n].dense.clone()) for n in ("hidden", "out")]
        self.masks = [student[n].mask.repeat_interleave(student[n].block, 0).repeat_interleave(student[n].block, 1)
                      .to(student[n].dense.dtype) for n in ("hidden", "out")]

    def parameters(self):
        return self.weights

    def __call__(self, x):
        import torch.nn.functional as F

        h = F.gelu(F.linear(x, self.weights[0] * self.masks[0]), approximate="tanh")
        return F.linear(h, self.weights[1] * self.masks[1])


def train(model, batches, lr: float, synchronize) -> tuple[list[float], list[float]]:
    """SGD over the batches: (loss per step, milliseconds per step)."""
    import torch

    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=lr)
    losses, times = [], []
    for x, target in batches:
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x).float(), target.float())
        loss.backward()
        opt.step()
        synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
        losses.append(float(loss.detach()))  # after the step's timing: reading it synchronises
    return losses, times


def compare(ours_losses: list[float], ref_losses: list[float], rtol: float) -> dict:
    """Largest relative gap between the curves, and whether each fell to MUST_FALL_TO."""
    import math

    gaps = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ours_losses, ref_losses)]
    window = max(1, len(ref_losses) // 10)

    def fell(curve):
        return sum(curve[-window:]) / window <= MUST_FALL_TO * sum(curve[:window]) / window

    finite = all(math.isfinite(v) for v in ours_losses + ref_losses)
    worst = max(gaps) if gaps else float("inf")
    return {"max_rel_gap": worst if finite else None, "rtol": rtol, "finite": finite,
            "ours_fell": fell(ours_losses), "reference_fell": fell(ref_losses),
            "agree": finite and worst <= rtol and fell(ours_losses) and fell(ref_losses)}


def curve_sample(losses: list[float], points: int = 50) -> list[list[float]]:
    """[step, loss] pairs, about `points` of them, for the JSON."""
    stride = max(1, len(losses) // points)
    return [[i, losses[i]] for i in range(0, len(losses), stride)] + [[len(losses) - 1, losses[-1]]]


def run(case, backend) -> dict:
    """Both trainings; {"ours": (losses, times) | Unavailable, "reference": (losses, times)}."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # float32 runs compare IEEE products on both sides
    student, batches = task(case, backend.device)
    lr = case.params["lr"]
    out: dict = {}
    reference = DenseMasked(student)
    out["reference"] = train(reference, batches, lr, backend.synchronize)
    try:
        model = bsr_model(student)
        if backend.device == "cuda" and not ours.load().cuda_available():
            raise Unavailable("bsrmm reports no CUDA support (built without CUDA, or no usable device)")
        out["ours"] = train(model, batches, lr, backend.synchronize)
    except Unavailable as e:
        out["ours"] = e
    return out
