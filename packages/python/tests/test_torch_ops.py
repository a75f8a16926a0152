"""bsrmm.torch's custom ops (issue 25): every gradient against float64 autograd of the dense
equivalent (gradcheck on small shapes, float32 comparisons at blocks 16 and 32), opcheck, the
activations' gradients, and the errors. CUDA variants skip here with the reason."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="bsrmm.torch needs torch (the bootstrap installs it)")

import bsrmm  # noqa: E402
import bsrmm.torch as bt  # noqa: E402
from torch_marks import needs_cuda, needs_sddmm  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=needs_cuda)]
ACTIVATIONS = ["none", "relu", "gelu", "silu"]


def _dense_activation(z, activation):
    return {
        "none": lambda: z,
        "relu": lambda: torch.relu(z),
        "gelu": lambda: torch.nn.functional.gelu(z, approximate="tanh"),
        "silu": lambda: torch.nn.functional.silu(z),
    }[activation]()


def _pattern(seed, block_grid, blocksize, density=0.5, device="cpu"):
    """A random block mask (every block row and column keeps at least one block, so every
    gradient entry is exercised), its registered key and the dense 0/1 expansion of the mask."""
    gen = torch.Generator().manual_seed(seed)
    mask = torch.rand(block_grid, generator=gen) < density
    diagonal = torch.arange(max(block_grid))
    mask[diagonal % block_grid[0], diagonal % block_grid[1]] = True
    indptr = torch.cat([torch.zeros(1, dtype=torch.int64), mask.sum(1).cumsum(0)])
    indices = mask.nonzero()[:, 1]
    shape = (block_grid[0] * blocksize[0], block_grid[1] * blocksize[1])
    key = bt.register_pattern(indptr, indices, shape, blocksize)
    expand = mask.repeat_interleave(blocksize[0], 0).repeat_interleave(blocksize[1], 1)
    return key, mask, expand.to(device)


def _dense_weight(values, mask, blocksize):
    """The dense W holding ``values`` at ``mask``'s blocks (row-major block order), built with
    differentiable torch ops only: the reference's gradient flows back to ``values``."""
    rows, cols = mask.shape
    grid = values.new_zeros((rows, cols, *blocksize))
    grid = grid.index_put(tuple(mask.nonzero().T.to(values.device)), values)
    return grid.permute(0, 2, 1, 3).reshape(rows * blocksize[0], cols * blocksize[1])


def _random(gen, shape, dtype=torch.float64, device="cpu"):
    return torch.randn(shape, generator=gen, dtype=torch.float64).to(device, dtype).requires_grad_()


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(1234)


# ---- gradcheck in float64 (finite differences of the op itself) ----


@needs_sddmm
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("transpose", [False, True])
def test_bsr_mm_gradcheck(gen, activation, transpose):
    key, mask, _ = _pattern(0, (3, 4), (4, 2))
    rows, cols = (8, 12) if transpose else (12, 8)
    values = _random(gen, (int(mask.sum()), 4, 2))
    x = _random(gen, (5, cols))
    bias = _random(gen, (rows,))
    check = lambda v, x, b: bt.bsr_mm(v, key, x, b, activation, transpose)  # noqa: E731
    assert torch.autograd.gradcheck(check, (values, x, bias))
    bt.release_pattern(key)


@needs_sddmm
def test_sampled_mm_gradcheck(gen):
    key, mask, _ = _pattern(1, (3, 2), (4, 8))
    a, b = _random(gen, (12, 5)), _random(gen, (5, 16))
    assert torch.autograd.gradcheck(lambda a, b: bt.sampled_mm(a, b, key), (a, b))
    bt.release_pattern(key)


@needs_sddmm
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_bsr_mm_second_order_gradcheck(gen, activation):
    key, mask, _ = _pattern(2, (2, 3), (4, 4))
    values, x = _random(gen, (int(mask.sum()), 4, 4)), _random(gen, (3, 12))
    assert torch.autograd.gradgradcheck(
        lambda v, x: bt.bsr_mm(v, key, x, None, activation, False), (values, x)
    )
    bt.release_pattern(key)


# ---- against float64 autograd of the dense equivalent ----


def _compare_with_dense(gen, device, dtype, blocksize, activation, tokens, *, tol):
    key, mask, _ = _pattern(3, (4, 3), blocksize, device=device)
    values = _random(gen, (int(mask.sum()), *blocksize), dtype, device)
    x = _random(gen, (tokens, 3 * blocksize[1]), dtype, device)
    bias = _random(gen, (4 * blocksize[0],), dtype, device)
    grad = torch.randn((tokens, 4 * blocksize[0]), generator=gen, dtype=torch.float64).to(device)

    y = bt.bsr_mm(values, key, x, bias, activation, False)
    y.backward(grad.to(dtype))
    ref_in = [t.detach().double().requires_grad_() for t in (values, x, bias)]
    w = _dense_weight(ref_in[0], mask, blocksize)
    ref = _dense_activation(ref_in[1] @ w.T + ref_in[2], activation)
    ref.backward(grad)
    for name, got, want in [("y", y, ref), ("d_values", values.grad, ref_in[0].grad),
                            ("d_x", x.grad, ref_in[1].grad), ("d_bias", bias.grad, ref_in[2].grad)]:
        scale = want.abs().max().item() + 1e-30
        error = (got.double() - want).abs().max().item() / scale
        assert error < tol, f"{name}: max error {error:.3g} of the largest |value| {scale:.3g}"
    bt.release_pattern(key)


@needs_sddmm
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("blocksize", [(16, 16), (32, 32)])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_float32_gradients_match_dense_float64(gen, device, blocksize, activation):
    _compare_with_dense(gen, device, torch.float32, blocksize, activation, 37, tol=2e-5)


@needs_sddmm
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_gradients_match_dense_float64(gen, device, dtype):
    tol = 1e-2 if dtype == torch.float16 else 6e-2
    _compare_with_dense(gen, device, dtype, (16, 16), "gelu", 16, tol=tol)


def test_forward_without_weight_gradient_needs_no_sddmm(gen):
    """The input and bias gradients alone never call the SDDMM (frozen sparse weights)."""
    key, mask, _ = _pattern(4, (2, 2), (16, 16))
    values = torch.randn((int(mask.sum()), 16, 16), generator=gen, dtype=torch.float64)
    x, bias = _random(gen, (6, 32)), _random(gen, (32,))
    y = bt.bsr_mm(values, key, x, bias, "silu", False)
    grad = torch.randn(y.shape, generator=gen, dtype=torch.float64)
    y.backward(grad)
    w = _dense_weight(values, mask, (16, 16))
    ref_x, ref_b = x.detach().clone().requires_grad_(), bias.detach().clone().requires_grad_()
    torch.nn.functional.silu(ref_x @ w.T + ref_b).backward(grad)
    torch.testing.assert_close(x.grad, ref_x.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(bias.grad, ref_b.grad, rtol=1e-12, atol=1e-12)
    bt.release_pattern(key)


# ---- opcheck: schema, fake kernel, autograd registration, AOT dispatch ----


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("transpose", [False, True])
def test_opcheck_bsr_mm(gen, device, transpose):
    key, mask, _ = _pattern(5, (3, 2), (16, 16))
    bt.prepare_pattern(key, device, torch.float32)
    values = _random(gen, (int(mask.sum()), 16, 16), torch.float32, device)
    x = _random(gen, (7, 48 if transpose else 32), torch.float32, device)
    bias = _random(gen, (32 if transpose else 48,), torch.float32, device)
    utils = ("test_schema", "test_faketensor")  # the autograd ones run the weight gradient
    if hasattr(bsrmm, "sddmm"):
        utils = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
    torch.library.opcheck(torch.ops.bsrmm.bsr_mm.default, (values, key, x, bias, "gelu", transpose),
                          test_utils=utils)
    bt.release_pattern(key)


@needs_sddmm
@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_sampled_mm(gen, device):
    key, _, _ = _pattern(6, (2, 3), (16, 16))
    bt.prepare_pattern(key, device, torch.float32)
    a, b = _random(gen, (32, 9), torch.float32, device), _random(gen, (9, 48), torch.float32, device)
    torch.library.opcheck(torch.ops.bsrmm.sampled_mm.default, (a, b, key))
    bt.release_pattern(key)


# ---- errors name the argument ----


def test_errors_name_the_argument(gen):
    key, mask, _ = _pattern(7, (2, 2), (16, 16))
    values = torch.randn((int(mask.sum()), 16, 16), generator=gen)
    x = torch.randn((3, 32), generator=gen)
    with pytest.raises(ValueError, match="x must be 2-D with 32 columns"):
        bt.bsr_mm(values, key, x[:, :31], None, "none", False)
    with pytest.raises(ValueError, match="values must have shape"):
        bt.bsr_mm(values[1:], key, x, None, "none", False)
    with pytest.raises(ValueError, match="bias must have shape"):
        bt.bsr_mm(values, key, x, torch.zeros(31), "none", False)
    with pytest.raises(ValueError, match="activation must be one of"):
        bt.bsr_mm(values, key, x, None, "tanh", False)
    with pytest.raises(TypeError, match="x has dtype torch.float64 but values has torch.float32"):
        bt.bsr_mm(values, key, x.double(), None, "none", False)
    with pytest.raises(TypeError, match="b has dtype torch.float64 but a has torch.float32"):
        bt.sampled_mm(torch.zeros(32, 4), torch.zeros(4, 32, dtype=torch.float64), key)
    with pytest.raises(ValueError, match="bias is on meta but values is on cpu"):
        bt.bsr_mm(values, key, x, torch.zeros(32, device="meta"), "none", False)
    with pytest.raises(ValueError, match="b must be"):
        bt.sampled_mm(torch.zeros(32, 4), torch.zeros(5, 32), key)
    bt.release_pattern(key)
    with pytest.raises(KeyError, match=f"pattern={key} names no live bsrmm pattern"):
        bt.bsr_mm(values, key, x, None, "none", False)


def test_sm_budget_is_validated_nests_and_leaves_cpu_ops_alone():
    from bsrmm.torch import _sm_budget

    key, _, expand = _pattern(28, (3, 4), (4, 8))
    torch.manual_seed(28)
    values = torch.randn(int(expand.sum()) // 32, 4, 8, dtype=torch.float64)
    x = torch.randn(5, 32, dtype=torch.float64)
    whole = bt.bsr_mm(values, key, x, None, "none", False)
    with bt.sm_budget(8):
        assert _sm_budget.context_for(torch.device("cpu")) is None  # CPU ops ignore it
        with bt.sm_budget(0):
            assert getattr(_sm_budget._state, "count") == 0
        assert getattr(_sm_budget._state, "count") == 8  # the outer budget is back
        assert torch.equal(bt.bsr_mm(values, key, x, None, "none", False), whole)
    assert getattr(_sm_budget._state, "count") == 0
    for bad in (-1, 2**31, True, 2.0):
        with pytest.raises(ValueError, match="sm_budget must be an int in 0..2147483647"):
            with bt.sm_budget(bad):
                pass
    bt.release_pattern(key)


# ---- the one-call step product and its fallback ----


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("transpose", [False, True])
def test_a_step_takes_one_core_call_and_the_general_path_agrees(gen, device, transpose, monkeypatch):
    """bsr_mm hands its values, x, y and the bias to _core.matmul_step (no BsrMatrix made in
    Python); where that declines, with_values + bsrmm.matmul give the same y."""
    key, mask, _ = _pattern(7, (3, 4), (8, 16), device=device)
    values = _random(gen, (int(mask.sum()), 8, 16), torch.float32, device).detach()
    rows = 4 * 16 if transpose else 3 * 8
    x = _random(gen, (5, 3 * 8 if transpose else 4 * 16), torch.float32, device).detach()
    bias = _random(gen, (rows,), torch.float32, device).detach()
    with_values = bsrmm.BsrMatrix.with_values

    def refused(*args, **kwargs):
        raise AssertionError("the step went through BsrMatrix.with_values")

    monkeypatch.setattr(bsrmm.BsrMatrix, "with_values", refused)
    fast = torch.ops.bsrmm.bsr_mm(values, key, x, bias, "gelu", transpose)
    monkeypatch.setattr(bsrmm.BsrMatrix, "with_values", with_values)
    monkeypatch.setattr(bt._ops._core, "matmul_step", lambda *args: False)
    general = torch.ops.bsrmm.bsr_mm(values, key, x, bias, "gelu", transpose)
    torch.testing.assert_close(fast, general, rtol=1e-6, atol=1e-6)
    weight = _dense_weight(values.double(), mask, (8, 16))
    want = _dense_activation(x.double() @ (weight if transpose else weight.T) + bias.double(), "gelu")
    torch.testing.assert_close(fast.double(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_the_transposed_step_takes_w_transposed_from_the_core(gen, device, dtype):
    """dX = dY W reads W^T's blocks, which the core writes per step (W^T's BSR order, each block
    transposed) into poisoned memory: exactly W's dense form transposed and re-blocked. Blocks of
    3 x 5, so a transpose that forgot to swap the block sides shows."""
    key, mask, _ = _pattern(11, (4, 6), (3, 5), device=device)
    values = _random(gen, (int(mask.sum()), 3, 5), dtype, device).detach()
    prepared = bt._patterns.lookup(key).prepare(values.device, values.dtype)
    out = torch.full((values.shape[0], 5, 3), float("nan"), dtype=dtype, device=device)
    context = bt._ops._context_for(prepared.matrix, None)
    with context._session(context._stream_for(values, out)) as handle:
        assert bt._ops._core.transpose_step_values(handle, prepared.matrix._handle, values, out)
        # Anything but compact (nnzb, bw, bh) tensors of W's dtype is declined, not misread.
        assert not bt._ops._core.transpose_step_values(handle, prepared.matrix._handle, values, out.transpose(1, 2))
        assert not bt._ops._core.transpose_step_values(handle, prepared.matrix._handle, values.float(), out)
    weight_t = _dense_weight(values.double(), mask, (3, 5)).T.contiguous()
    want = weight_t.to_sparse_bsr((5, 3)).values()
    assert torch.equal(out.double(), want)

    calls = []
    core = bt._ops._core.transpose_step_values

    def counted(*args):
        calls.append(args)
        return core(*args)

    bt._ops._core.transpose_step_values = counted
    try:
        x = _random(gen, (7, 4 * 3), dtype, device).detach()
        y = bt.bsr_mm(values, key, x, None, "none", True)
    finally:
        bt._ops._core.transpose_step_values = core
    assert len(calls) == 1
    torch.testing.assert_close(y.double(), x.double() @ weight_t.T, rtol=2e-2, atol=2e-2)
    bt.release_pattern(key)
