"""torch.compile over BsrLinear (issue 25): fullgraph=True (no graph break) matches eager on
the CPU, forward and backward; on CUDA the same, mode="reduce-overhead" captures the ops into
its CUDA graphs and replays them, torch.cuda.graph captures and replays a forward + backward
step, and what a capture cannot hold (a pattern never prepared there, a cold plan) is refused
with the reason. CUDA tests skip here with the reason."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch", reason="bsrmm.torch needs torch (the bootstrap installs it)")

import bsrmm  # noqa: E402
from bsrmm.torch import BsrLinear  # noqa: E402
from torch_marks import needs_cuda, needs_sddmm  # noqa: E402


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


class _BsrmmCalls:
    """Counts the calls the ops make into bsrmm (matmul and sddmm): a replayed CUDA graph makes
    none, a step that runs the ops (eager, warm-up or capture) makes some."""

    def __init__(self, monkeypatch):
        self.count = 0
        for name in ("matmul", "sddmm"):
            monkeypatch.setattr(bsrmm, name, self._counting(getattr(bsrmm, name)))

    def _counting(self, function):
        def counted(*args, **kwargs):
            self.count += 1
            return function(*args, **kwargs)

        return counted


@needs_cuda
@needs_sddmm
def test_reduce_overhead_mode_replays_the_step_and_matches_eager(monkeypatch):
    """The ops borrow the step's values (no allocation, copy or wait), so reduce-overhead
    captures them into its CUDA graphs: after the warm-up and recording steps, a step is a
    replay (no call reaches bsrmm) and equals eager, also after the weights change in place."""
    from torch._dynamo.utils import counters

    counters.clear()
    model = _mlp(3, "cuda")
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    calls = _BsrmmCalls(monkeypatch)
    calls_per_step = []
    for step in range(6):
        torch.compiler.cudagraph_mark_step_begin()
        x = torch.randn(16, 64, device="cuda")
        before = calls.count
        got = _forward_backward(compiled, x)
        calls_per_step.append(calls.count - before)
        want = _forward_backward(reference, x)
        torch.testing.assert_close(got[0], want[0], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(got[1], want[1], rtol=1e-4, atol=1e-5)
        for g, w in zip(got[2], want[2]):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
        # An SGD step in place (the replays must read the new weights), and the reference takes
        # the same weights: each side updating from its own gradients let last-bit differences
        # between the graph's kernels and eager's tuned ones grow (lr 0.1 diverged by step 4).
        with torch.no_grad():
            for p, q in zip(model.parameters(), reference.parameters()):
                p.sub_(0.01 * p.grad)
                q.copy_(p)
    assert counters["inductor"]["cudagraph_skips"] == 0, dict(counters["inductor"])
    assert calls_per_step[0] > 0, calls_per_step  # the warm-up ran the ops
    assert calls_per_step[-2:] == [0, 0], f"bsrmm calls per compiled step: {calls_per_step}"


@needs_cuda
@needs_sddmm
def test_cuda_graph_captures_a_bsr_linear_step_and_replays_it():
    """torch.cuda.graph over BsrLinear's forward and backward (the whole step, as PyTorch's
    whole-network capture does): every replay equals an eager step on the same inputs and the
    weights of that moment (they change in place between replays: the graph reads them where
    they lie)."""
    torch.manual_seed(7)
    layer = BsrLinear.from_linear(
        torch.nn.Linear(96, 128), 32, density=0.25, activation="gelu"
    ).to("cuda")
    reference = copy.deepcopy(layer)
    static_x = torch.randn(24, 96, device="cuda", requires_grad=True)
    static_dy = torch.randn(24, 128, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: plans built and variants chosen, outside the capture
        for _ in range(3):
            layer.zero_grad(set_to_none=True)
            static_x.grad = None
            layer(static_x).backward(static_dy)
    torch.cuda.current_stream().wait_stream(side)
    layer.zero_grad(set_to_none=True)  # the captured backward allocates the gradients
    static_x.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = layer(static_x)
        static_y.backward(static_dy)
    for replay in range(3):
        with torch.no_grad():
            static_x.copy_(torch.randn_like(static_x))
            static_dy.copy_(torch.randn_like(static_dy))
            layer.values.mul_(0.5 + replay)
            reference.values.copy_(layer.values)
            static_y.fill_(float("nan"))
            layer.values.grad.fill_(float("nan"))
        graph.replay()
        x = static_x.detach().clone().requires_grad_()
        reference.zero_grad(set_to_none=True)
        y = reference(x)
        y.backward(static_dy)
        what = f"replay {replay}"
        torch.testing.assert_close(static_y, y, rtol=1e-4, atol=1e-5, msg=lambda m: f"{what}: y {m}")
        torch.testing.assert_close(static_x.grad, x.grad, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(layer.values.grad, reference.values.grad, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(layer.bias.grad, reference.bias.grad, rtol=1e-4, atol=1e-5)


@needs_cuda
def test_what_a_capture_cannot_hold_is_refused_with_the_reason():
    """A pattern never prepared for the step's device and dtype (preparing uploads and waits),
    and a multiply whose plan is still cold (never run before the capture), are refused before
    anything is enqueued: the capture stays usable and says what to run first."""
    from bsrmm.torch import register_pattern, release_pattern

    indptr, indices = torch.tensor([0, 1, 2]), torch.tensor([1, 0])
    key = register_pattern(indptr, indices, (32, 32), (16, 16))  # prepared on the CPU only
    try:
        values = torch.randn(2, 16, 16, device="cuda")
        x = torch.randn(8, 32, device="cuda")
        with pytest.raises(RuntimeError, match="never prepared for cuda:0 in torch.float32"):
            with torch.cuda.graph(torch.cuda.CUDAGraph()):
                torch.ops.bsrmm.bsr_mm(values, key, x, None, "none", False)
    finally:
        release_pattern(key)

    model = _mlp(4, "cuda")  # prepared on the GPU, but no step has run: its plans are cold
    x = torch.randn(16, 64, device="cuda")
    with pytest.raises(bsrmm.UnsupportedError, match=r"once before capturing \(and bsrmm\.tune,"):
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            model(x)
    model(x)  # outside the capture the same step builds its plans and runs
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(x)
    graph.replay()
    torch.testing.assert_close(static_y, model(x), rtol=1e-5, atol=1e-6)
