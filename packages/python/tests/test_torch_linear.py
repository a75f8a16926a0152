"""bsrmm.torch.BsrLinear and sparsify_ (issue 25): from_linear by mask and by density, the
values' block order, state_dict through torch.load(weights_only=True), .to(device, dtype),
copies, and a few steps of SGD against the dense-masked reference."""

from __future__ import annotations

import copy
import io

import pytest

torch = pytest.importorskip("torch", reason="bsrmm.torch needs torch (the bootstrap installs it)")

from bsrmm.torch import BsrLinear, sparsify_  # noqa: E402
from torch_marks import needs_cuda, needs_sddmm  # noqa: E402


def _linear(in_features, out_features, seed, dtype=torch.float32):
    torch.manual_seed(seed)
    return torch.nn.Linear(in_features, out_features, dtype=dtype)


def _expand(mask, blocksize):
    return mask.repeat_interleave(blocksize[0], 0).repeat_interleave(blocksize[1], 1)


def test_from_linear_with_mask_keeps_exactly_those_blocks_in_row_major_order():
    linear = _linear(64, 48, 0)
    mask = torch.rand((3, 4), generator=torch.Generator().manual_seed(1)) < 0.5
    layer = BsrLinear.from_linear(linear, (16, 16), mask=mask)
    expected = torch.where(_expand(mask, (16, 16)), linear.weight, 0.0)
    torch.testing.assert_close(layer.to_dense(), expected, rtol=0, atol=0)
    # The values are the blocks in scipy's / to_sparse_bsr's order (row-major block order).
    bsr = expected.detach().to_sparse_bsr((16, 16))
    torch.testing.assert_close(layer.indptr, bsr.crow_indices())
    torch.testing.assert_close(layer.indices, bsr.col_indices())
    torch.testing.assert_close(layer.values.detach(), bsr.values(), rtol=0, atol=0)
    torch.testing.assert_close(layer.bias.detach(), linear.bias.detach(), rtol=0, atol=0)


@pytest.mark.parametrize("density", [0.25, 0.5, 1.0])
def test_from_linear_with_density_keeps_the_largest_blocks(density):
    linear = _linear(64, 64, 2)
    bh, bw = 16, 8
    layer = BsrLinear.from_linear(linear, (bh, bw), density=density)
    norms = linear.weight.detach().reshape(4, bh, 8, bw).square().sum((1, 3))
    keep = round(density * norms.numel())
    assert layer.nnzb == keep
    kept = _expand(torch.ones(4, 8, dtype=torch.bool), (bh, bw)) & (layer.to_dense() != 0)
    kept_blocks = kept.reshape(4, bh, 8, bw).any(3).any(1)
    assert int(kept_blocks.sum()) == keep
    if keep < norms.numel():
        assert norms[kept_blocks].min() >= norms[~kept_blocks].max()


def test_forward_matches_the_dense_masked_linear_with_activation():
    linear = _linear(96, 64, 3, torch.float64)
    layer = BsrLinear.from_linear(linear, 32, density=0.5, activation="relu")
    x = torch.randn(2, 5, 96, dtype=torch.float64)  # leading dimensions, as nn.Linear takes
    ref = torch.relu(x @ layer.to_dense().T + linear.bias)
    torch.testing.assert_close(layer(x), ref, rtol=1e-12, atol=1e-12)


def test_bad_arguments_are_refused_with_the_reason():
    linear = _linear(64, 48, 4)
    with pytest.raises(ValueError, match="exactly one of density= .* and mask="):
        BsrLinear.from_linear(linear, 16)
    with pytest.raises(ValueError, match="not a whole number of 32 x 32 blocks"):
        BsrLinear.from_linear(linear, 32, density=0.5)
    with pytest.raises(ValueError, match=r"mask must have shape \(3, 4\)"):
        BsrLinear.from_linear(linear, 16, mask=torch.ones(4, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="density must be a number in"):
        BsrLinear.from_linear(linear, 16, density=0.0)
    with pytest.raises(ValueError, match="activation must be"):
        BsrLinear.from_linear(linear, 16, density=0.5, activation="tanh")
    with pytest.raises(ValueError, match="x has 63 features; this layer takes 64"):
        BsrLinear.from_linear(linear, 16, density=0.5)(torch.zeros(2, 63))


def test_state_dict_is_plain_tensors_that_torch_load_reads_back_with_weights_only():
    layer = BsrLinear.from_linear(_linear(64, 48, 5), 16, density=0.5, activation="silu")
    buffer = io.BytesIO()
    torch.save(layer.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    assert sorted(state) == ["bias", "indices", "indptr", "values"]
    # A layer with another pattern of the same block count takes the loaded one, values and all.
    other = BsrLinear.from_linear(_linear(64, 48, 6), 16, density=0.5, activation="silu")
    assert not torch.equal(other.indices, layer.indices) or not torch.equal(other.indptr, layer.indptr)
    other.load_state_dict(state)
    x = torch.randn(7, 64)
    torch.testing.assert_close(other(x), layer(x), rtol=0, atol=0)


def test_to_dtype_moves_values_and_pattern_follows():
    layer = BsrLinear.from_linear(_linear(64, 32, 7), 16, density=0.5, activation="gelu")
    x = torch.randn(4, 64, dtype=torch.float64)
    layer64 = copy.deepcopy(layer).to(torch.float64)
    assert layer64.values.dtype == torch.float64 and layer64.indices.dtype == torch.int64
    ref = torch.nn.functional.gelu(x @ layer64.to_dense().T + layer64.bias, approximate="tanh")
    torch.testing.assert_close(layer64(x), ref, rtol=1e-12, atol=1e-12)
    half = copy.deepcopy(layer).to(dtype=torch.bfloat16)
    torch.testing.assert_close(half(x.bfloat16()).double(), ref, rtol=4e-2, atol=4e-2)


def test_copies_have_patterns_of_their_own():
    layer = BsrLinear.from_linear(_linear(32, 32, 8), 16, density=0.5)
    twin = copy.deepcopy(layer)
    assert twin._pattern_key != layer._pattern_key
    x = torch.randn(3, 32)
    expected = layer(x).detach()
    del layer  # its pattern is released; the copy's stays
    torch.testing.assert_close(twin(x), expected, rtol=0, atol=0)


def test_sparsify_swaps_the_chosen_linears():
    torch.manual_seed(9)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 10))
    dense_first = model[0].weight.detach().clone()
    sparsify_(model, 16, density=0.25, filter=lambda name, module: module.out_features % 16 == 0)
    assert isinstance(model[0], BsrLinear) and type(model[2]) is torch.nn.Linear
    assert model[0].nnzb == round(0.25 * 8 * 4)
    kept = model[0].to_dense() != 0
    torch.testing.assert_close(model[0].to_dense()[kept], dense_first[kept], rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"^2: .*not a whole number of 16 x 16 blocks.*filter="):
        sparsify_(model, 16, density=0.25)


@needs_sddmm
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "silu"])
def test_sgd_steps_track_the_dense_masked_reference(activation):
    """A few SGD steps of a two-layer MLP: the bsrmm model and a dense model whose weights are
    masked to the same blocks (gradients masked too) see the same losses and end with the same
    weights."""
    torch.manual_seed(10)
    first, second = torch.nn.Linear(64, 96), torch.nn.Linear(96, 32)
    sparse = torch.nn.Sequential(BsrLinear.from_linear(first, 16, density=0.4, activation=activation),
                                 BsrLinear.from_linear(second, 16, density=0.4))
    masks = [(layer.to_dense() != 0).detach() for layer in sparse]
    dense = torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.Linear(96, 32))
    with torch.no_grad():
        for d, s in zip(dense, sparse):
            d.weight.copy_(s.to_dense())
            d.bias.copy_(s.bias)
    act = {None: lambda z: z, "relu": torch.relu, "silu": torch.nn.functional.silu,
           "gelu": lambda z: torch.nn.functional.gelu(z, approximate="tanh")}[activation]
    opt_s = torch.optim.SGD(sparse.parameters(), lr=0.05)
    opt_d = torch.optim.SGD(dense.parameters(), lr=0.05)
    losses = []
    for step in range(5):
        x, target = torch.randn(24, 64), torch.randn(24, 32)
        loss_s = torch.nn.functional.mse_loss(sparse(x), target)
        loss_d = torch.nn.functional.mse_loss(dense[1](act(dense[0](x))), target)
        for opt, loss in ((opt_s, loss_s), (opt_d, loss_d)):
            opt.zero_grad()
            loss.backward()
        for d, mask in zip(dense, masks):
            d.weight.grad *= mask
        opt_s.step()
        opt_d.step()
        losses.append((loss_s.item(), loss_d.item()))
    for got, want in losses:
        assert abs(got - want) <= 1e-5 * want, losses
    assert losses[-1][0] < losses[0][0]
    for d, s in zip(dense, sparse):
        torch.testing.assert_close(s.to_dense(), d.weight, rtol=1e-5, atol=1e-6)


@needs_cuda
def test_cuda_layer_matches_the_cpu_layer_and_moves_back():
    layer = BsrLinear.from_linear(_linear(64, 64, 11), 16, density=0.5, activation="silu")
    x = torch.randn(9, 64)
    expected = layer(x).detach()
    on_gpu = copy.deepcopy(layer).to("cuda")
    assert on_gpu.indptr.is_cuda and on_gpu.values.is_cuda
    torch.testing.assert_close(on_gpu(x.cuda()).cpu(), expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(on_gpu.to("cpu")(x), expected, rtol=1e-5, atol=1e-5)


def _torch_example(readme):
    import re
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / readme
    if not path.is_file():
        pytest.skip(f"{path} is not here (an installed copy of the tests)")
    examples = [code for code in re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
                if "bsrmm.torch" in code]
    assert len(examples) == 1, f"{path} should show one bsrmm.torch example"
    return path, examples[0]


@needs_sddmm
@pytest.mark.parametrize("readme", ["README.md", "../../README.md"])
def test_readme_bsrlinear_example_runs_as_written(readme):
    path, code = _torch_example(readme)
    scope: dict = {}
    exec(compile(code, str(path), "exec"), scope)
    layer, x = scope["layer"], scope["x"]
    assert isinstance(layer, BsrLinear) and layer.nnzb == 256
    assert layer.values.grad is not None and x.grad is not None
    assert isinstance(scope["mlp"][0], BsrLinear) and isinstance(scope["mlp"][2], BsrLinear)
    probe = torch.randn(4, 512)
    with torch.no_grad():
        torch.testing.assert_close(scope["step"](probe), scope["mlp"](probe), rtol=1e-5, atol=1e-5)


def _step_without_copies(device, monkeypatch):
    """A forward + backward step of BsrLinear in which bsrmm may copy no operand: x^T and y^T
    (nn.Linear's layout read as column-major views), dY^T for the SDDMM (column-major, as
    BsrLinear's backward passes it) and dX's W^T values are all read where they lie."""
    from bsrmm import _arrays

    def refuse(obj, view, argument, dtype, stream):
        raise AssertionError(f"bsrmm copied {argument} ({tuple(view.shape)}, strides {view.strides})")

    layer = BsrLinear.from_linear(_linear(64, 96, 8), 16, density=0.5, activation="gelu").to(device)
    x = torch.randn(12, 64, device=device, requires_grad=True)
    monkeypatch.setattr(_arrays, "contiguous_copy", refuse)
    layer(x).square().sum().backward()
    assert x.grad is not None and layer.values.grad is not None and layer.bias.grad is not None


@needs_sddmm
def test_a_step_copies_no_operand(monkeypatch):
    _step_without_copies("cpu", monkeypatch)


@needs_cuda
@needs_sddmm
def test_a_cuda_step_copies_no_operand(monkeypatch):
    _step_without_copies("cuda", monkeypatch)


@needs_sddmm
@pytest.mark.parametrize("activation", ["gelu", "silu"])
def test_training_step_multiplies_three_times_and_inference_fuses_the_activation(activation):
    """With autograd recording, gelu / silu run as torch's ops after the multiply, so a fwd + bwd
    is three products (y, dX, the SDDMM dW), not a fourth recomputing z for the activation's
    backward; without it (inference) the activation stays in the multiply's epilogue. Both
    against float64 of the dense-masked layer."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Calls(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.namespace == "bsrmm":
                self.seen.append((func._opname, args[4] if func._opname == "bsr_mm" else None))
            return func(*args, **(kwargs or {}))

    layer = BsrLinear.from_linear(_linear(64, 48, 12, torch.float64), 16, density=0.5, activation=activation)
    act = {"gelu": lambda z: torch.nn.functional.gelu(z, approximate="tanh"),
           "silu": torch.nn.functional.silu}[activation]
    x = torch.randn(9, 64, dtype=torch.float64)
    dy = torch.randn(9, 48, dtype=torch.float64)
    x_ours, x_ref = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    dense = layer.to_dense().detach().requires_grad_(True)
    bias = layer.bias.detach().clone().requires_grad_(True)
    want = act(x_ref @ dense.T + bias)
    want.backward(dy)
    with Calls() as calls:
        got = layer(x_ours)
        got.backward(dy)
    assert sorted(calls.seen) == [("bsr_mm", "none"), ("bsr_mm", "none"), ("sampled_mm", None)]
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(x_ours.grad, x_ref.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(layer.bias.grad, bias.grad, rtol=1e-12, atol=1e-12)
    as_dense = copy.deepcopy(layer)
    with torch.no_grad():
        as_dense.values.copy_(layer.values.grad)
    stored = layer.to_dense() != 0
    torch.testing.assert_close(as_dense.to_dense(), dense.grad * stored, rtol=1e-12, atol=1e-12)
    with torch.no_grad(), Calls() as calls:
        torch.testing.assert_close(layer(x), want.detach(), rtol=1e-12, atol=1e-12)
    assert calls.seen == [("bsr_mm", activation)]


def test_eager_inference_skips_the_dispatcher_and_everything_else_goes_through_the_op(monkeypatch):
    """Without autograd recording (no_grad, inference_mode) BsrLinear calls the op's body
    directly; recording, or under the profiler, it calls the op. Every path against float64 of
    the dense-masked layer (gelu fused in the epilogue or run after)."""
    from bsrmm.torch import _ops

    calls = []
    op = _ops.bsr_mm
    monkeypatch.setattr(_ops, "bsr_mm", lambda *args: calls.append(args[4]) or op(*args))
    layer = BsrLinear.from_linear(_linear(64, 48, 3, torch.float64), 16, density=0.5, activation="gelu")
    x = torch.randn(5, 64, dtype=torch.float64)
    want = torch.nn.functional.gelu(x @ layer.to_dense().detach().T + layer.bias.detach(), approximate="tanh")
    with torch.no_grad():
        torch.testing.assert_close(layer(x), want, rtol=1e-12, atol=1e-12)
    with torch.inference_mode():
        torch.testing.assert_close(layer(x), want, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(layer(x.reshape(1, 5, 64)), want.reshape(1, 5, 48), rtol=1e-12, atol=1e-12)
    assert calls == []
    torch.testing.assert_close(layer(x).detach(), want, rtol=1e-12, atol=1e-12)
    assert calls == ["none"]  # recorded: the multiply, then torch's gelu
    with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        torch.testing.assert_close(layer(x), want, rtol=1e-12, atol=1e-12)
    assert calls == ["none", "gelu"]


def test_runs_eagerly_only_where_no_trace_mode_or_autograd_would_see_the_op():
    from torch._subclasses.fake_tensor import FakeTensorMode

    from bsrmm.torch._ops import runs_eagerly

    weights, x = torch.randn(3, requires_grad=True), torch.randn(3)
    assert runs_eagerly(x, None)
    assert not runs_eagerly(weights, x)
    with torch.no_grad():
        assert runs_eagerly(weights, x)
        assert runs_eagerly(torch.nn.Parameter(torch.randn(3)), x)

    class Wrapped(torch.Tensor):
        pass

    assert not runs_eagerly(x.as_subclass(Wrapped))
    with torch.device("cpu"):  # a torch-function mode
        assert not runs_eagerly(x)
    seen = []
    torch.func.vmap(lambda t: seen.append(runs_eagerly(t)) or t)(torch.randn(2, 3))
    assert seen == [False]
    with FakeTensorMode():
        assert not runs_eagerly(torch.empty(3))
