"""torch.compile over BsrLinear (issue 25): fullgraph=True (no graph break) matches eager on
the CPU, forward and backward; on CUDA the same, mode="reduce-overhead" runs correctly step
after step, and a CUDA graph capture of the ops is refused with the reason. CUDA tests skip
here with the reason."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch", reason="bsrmm.torch needs torch (the bootstrap installs it)")

import bsrmm  # noqa: E402
from bsrmm.torch import BsrLinear  # noqa: E402

needs_sddmm = pytest.mark.skipif(
    not hasattr(bsrmm, "sddmm"),
    reason="bsrmm.sddmm is not in this build yet (issue 25 item 1): weight gradients need it",
)
_cuda_reason = bsrmm.cuda_unavailable_reason() or (None if torch.cuda.is_available() else "torch sees no CUDA device")
needs_cuda = pytest.mark.skipif(_cuda_reason is not None, reason=f"no usable CUDA device: {_cuda_reason}")


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _mlp(seed, device="cpu", dtype=torch.float32):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        BsrLinear.from_linear(torch.nn.Linear(64, 128), 16, density=0.25, activation="gelu"),
        BsrLinear.from_linear(torch.nn.Linear(128, 128), 32, density=0.5, activation="silu"),
        BsrLinear.from_linear(torch.nn.Linear(128, 64), 16, density=0.25),
    ).to(device, dtype)


def _gradients(model):
    return [p.grad.detach().clone() for p in model.parameters()]


def _forward_backward(model, x):
    for p in model.parameters():
        p.grad = None
    x = x.detach().clone().requires_grad_()
    y = model(x)
    (y * torch.linspace(-1, 1, y.shape[-1], device=y.device)).sum().backward()
    return y.detach(), x.grad, _gradients(model)


def test_compiled_forward_has_no_graph_break_and_matches_eager():
    model = _mlp(0)
    compiled = torch.compile(model, fullgraph=True)
    for tokens in (8, 8, 13):  # a repeat reuses the graph; a new token count retraces
        x = torch.randn(tokens, 64)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-6, atol=1e-6)


@needs_sddmm
def test_compiled_forward_and_backward_match_eager():
    model = _mlp(1)
    x = torch.randn(2, 6, 64)
    eager = _forward_backward(model, x)
    compiled = _forward_backward(torch.compile(model, fullgraph=True), x)
    torch.testing.assert_close(compiled[0], eager[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(compiled[1], eager[1], rtol=1e-5, atol=1e-6)
    for got, want in zip(compiled[2], eager[2]):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


@needs_sddmm
def test_a_compiled_step_builds_no_bsrmm_matrix_of_a_pattern(monkeypatch):
    """Patterns are validated and uploaded when the layers are built (and moved); a step, eager
    or compiled, forward and backward, only hands the prepared matrices its values."""
    model = _mlp(5)
    compiled = torch.compile(model, fullgraph=True)

    def refuse(*args, **kwargs):
        raise AssertionError("a step built a bsrmm matrix from a pattern")

    monkeypatch.setattr(bsrmm.BsrMatrix, "from_arrays", refuse)
    monkeypatch.setattr(bsrmm.BsrMatrix, "from_dense", refuse)
    x = torch.randn(12, 64)
    compiled_run = _forward_backward(compiled, x)
    eager_run = _forward_backward(model, x)
    torch.testing.assert_close(compiled_run[0], eager_run[0], rtol=1e-5, atol=1e-6)


@needs_cuda
@needs_sddmm
def test_compiled_on_cuda_matches_eager():
    model = _mlp(2, "cuda")
    x = torch.randn(32, 64, device="cuda")
    eager = _forward_backward(model, x)
    compiled = _forward_backward(torch.compile(model, fullgraph=True), x)
    torch.testing.assert_close(compiled[0], eager[0], rtol=1e-4, atol=1e-5)
    for got, want in zip(compiled[2], eager[2]):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


@needs_cuda
@needs_sddmm
def test_reduce_overhead_mode_runs_correctly_step_after_step():
    """The ops are tagged cudagraph_unsafe (each call hands bsrmm its values with an allocating
    with_values), so reduce-overhead keeps them out of its CUDA graphs: every step must still
    equal eager, including after the weights change."""
    model = _mlp(3, "cuda")
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    for step in range(4):
        x = torch.randn(16, 64, device="cuda")
        got = _forward_backward(compiled, x)
        want = _forward_backward(reference, x)
        torch.testing.assert_close(got[0], want[0], rtol=1e-4, atol=1e-5)
        with torch.no_grad():
            for p, q in zip(model.parameters(), reference.parameters()):
                p.sub_(0.1 * p.grad)
                q.sub_(0.1 * q.grad)


@needs_cuda
def test_cuda_graph_capture_is_refused_with_the_reason():
    model = _mlp(4, "cuda")
    x = torch.randn(16, 64, device="cuda")
    model(x)  # warm: the refusal is about the capture itself, not a cold plan
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="cannot run while a CUDA graph is being captured"):
        with torch.cuda.graph(graph):
            model(x)
