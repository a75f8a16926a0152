"""GPU interop: torch CUDA tensors, cupy arrays, bare __cuda_array_interface__ and DLPack
producers, zero-copy on the caller's current stream; device mismatches; strided and other-dtype
torch inputs copied once on the call's stream, strided out refused. Every test skips, with the reason, where no CUDA device is usable (or torch / cupy is
missing); the lead runs them on the GPU machine."""

from __future__ import annotations

import numpy as np
import pytest

import bsrmm
from bsr_cases import assert_matches, dense_from_bsr, random_bsr, random_values, reference, sddmm_reference

_reason = bsrmm.cuda_unavailable_reason()
pytestmark = pytest.mark.skipif(_reason is not None, reason=f"no usable CUDA device: {_reason}")

GPU_DTYPES = ["float32", "float16", "bfloat16", "float64"]


def _case(seed, dtype, blocksize=(16, 16), block_rows=6, block_cols=5, density=0.4):
    rng = np.random.default_rng(seed)
    indptr, indices, data = random_bsr(rng, block_rows, block_cols, blocksize, density, dtype, 0.2)
    shape = (block_rows * blocksize[0], block_cols * blocksize[1])
    return rng, (indptr, indices, data), shape, dense_from_bsr(indptr, indices, data, shape)


# ---- numpy only: host <-> device matrices ----


@pytest.mark.parametrize("dtype", GPU_DTYPES)
def test_matrix_moves_between_host_and_device_losslessly(dtype):
    _, parts, shape, dense = _case(0, dtype)
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    assert a.device == "cuda:0" and a.shape == shape
    np.testing.assert_array_equal(a.to_dense().astype(np.float64), dense)
    back = a.to("cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.indptr, parts[0])
    np.testing.assert_array_equal(back.indices, parts[1])
    assert a.to("cuda:0") is a
    host = bsrmm.BsrMatrix.from_arrays(*parts, shape)
    np.testing.assert_array_equal(host.to("cuda").to_dense().astype(np.float64), dense)


def test_numpy_b_with_a_gpu_matrix_is_a_device_mismatch():
    _, parts, shape, _ = _case(1, "float32")
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda")
    with pytest.raises(bsrmm.InvalidArgumentError, match="B is on cpu but A is on cuda:0"):
        bsrmm.matmul(a, np.ones((shape[1], 4), np.float32))


def test_context_on_another_device_is_refused():
    _, parts, shape, _ = _case(2, "float32")
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape)
    with pytest.raises(bsrmm.InvalidArgumentError, match="context is on cuda:0 but A is on cpu"):
        bsrmm.matmul(a, np.ones((shape[1], 4), np.float32), context=bsrmm.Context("cuda"))


# ---- torch ----


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device (CPU-only torch build?)")
    return torch


def _torch_operands(torch, rng, dtype, k, n, layout):
    b = torch.from_numpy(rng.standard_normal((k, n))).to(getattr(torch, dtype))
    if layout == "F":
        b = b.T.contiguous().T
    return b.cuda()


@pytest.mark.parametrize("dtype", GPU_DTYPES)
@pytest.mark.parametrize("layout_b", ["C", "F"])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("blocksize", [(16, 16), (32, 32), (64, 64), (8, 16)])
def test_torch_cuda_matches_reference(torch, dtype, layout_b, transpose_a, blocksize):
    rng, parts, shape, dense = _case(3, dtype, blocksize, block_rows=4, block_cols=3)
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    k = shape[0] if transpose_a else shape[1]
    m = shape[1] if transpose_a else shape[0]
    b = _torch_operands(torch, rng, dtype, k, 33, layout_b)
    c = bsrmm.matmul(a, b, transpose_a=transpose_a)
    assert isinstance(c, torch.Tensor) and c.device == b.device and c.dtype == b.dtype
    assert c.shape == (m, 33) and c.is_contiguous()
    torch.cuda.synchronize()
    value, scale = reference(dense, b.double().cpu().numpy(), transpose_a=transpose_a)
    assert_matches(c.double().cpu().numpy(), value, scale, dtype, inner=k)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torch_out_bias_activation_beta(torch, dtype):
    rng, parts, shape, dense = _case(4, dtype)
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    b = _torch_operands(torch, rng, dtype, shape[1], 20, "C")
    c0 = _torch_operands(torch, rng, dtype, shape[0], 20, "F")
    out = c0.clone()
    bias = _torch_operands(torch, rng, dtype, shape[0], 1, "C")[:, 0].contiguous()
    assert bsrmm.matmul(a, b, alpha=0.5, beta=-1.0, out=out, bias=bias, activation="gelu") is out
    torch.cuda.synchronize()
    value, scale = reference(dense, b.double().cpu().numpy(), alpha=0.5, beta=-1.0,
                             c0=c0.double().cpu().numpy(), bias=bias.double().cpu().numpy(),
                             activation="gelu")
    assert_matches(out.double().cpu().numpy(), value, scale, dtype, inner=shape[1])


def test_torch_runs_on_the_current_stream(torch):
    rng, parts, shape, dense = _case(5, "float16", (64, 64), block_rows=8, block_cols=8)
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        b = _torch_operands(torch, rng, "float16", shape[1], 512, "C")
        c = bsrmm.matmul(a, b)  # queued on `side`, after b's copy
        c2 = c * 2  # torch work on the same stream sees the finished product
    side.synchronize()
    value, scale = reference(dense, b.double().cpu().numpy(), alpha=2.0)
    assert_matches(c2.double().cpu().numpy(), value, scale, "float16", inner=shape[1])


@pytest.mark.parametrize("transpose_a", [False, True])
def test_torch_cuda_graph_replays_a_warmed_multiply(torch, transpose_a):
    """torch.cuda.graph (what torch.compile's reduce-overhead mode uses): a cold call inside the
    capture is refused with the reason and leaves the capture usable; a warmed call is captured
    and every replay computes the product into the captured output."""
    rng, parts, shape, dense = _case(11, "float16", (32, 32), block_rows=6, block_cols=5)
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    k = shape[0] if transpose_a else shape[1]
    b = _torch_operands(torch, rng, "float16", k, 40, "C")
    out = torch.empty((shape[1] if transpose_a else shape[0], 40), device="cuda", dtype=torch.float16)
    cold = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        with pytest.raises(bsrmm.UnsupportedError, match="once before capturing"):
            with torch.cuda.graph(cold, stream=side):
                bsrmm.matmul(a, b, out=out, transpose_a=transpose_a)
        bsrmm.matmul(a, b, out=out, transpose_a=transpose_a)  # the warm-up builds the plan
    side.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        bsrmm.matmul(a, b, out=out, transpose_a=transpose_a)
    for replay in range(3):
        b.copy_(_torch_operands(torch, rng, "float16", k, 40, "C"))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        value, scale = reference(dense, b.double().cpu().numpy(), transpose_a=transpose_a)
        assert_matches(out.double().cpu().numpy(), value, scale, "float16", inner=k)


def test_with_values_borrows_a_tensor_in_place_and_refuses_what_needs_a_copy(torch):
    """borrow=True: the matrix reads the tensor where it lies (a change to the tensor is a
    change to the matrix) and holds it; anything it would have to copy is refused, naming data
    and borrow."""
    rng, parts, shape, _ = _case(12, "float32", (16, 32))
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    values = torch.from_numpy(random_values(rng, parts[2].shape, "float32")).cuda()
    borrowed = a.with_values(values, borrow=True)
    assert borrowed._borrowed is values
    b = _torch_operands(torch, rng, "float32", shape[1], 8, "C")
    for step in range(2):
        out = torch.full((shape[0], 8), float("nan"), device="cuda")
        bsrmm.matmul(borrowed, b, out=out)
        torch.cuda.synchronize()
        dense = dense_from_bsr(parts[0], parts[1], values.double().cpu().numpy(), shape)
        value, scale = reference(dense, b.double().cpu().numpy())
        assert_matches(out.double().cpu().numpy(), value, scale, "float32", inner=shape[1])
        values.mul_(-2.0)  # read in place: the next product sees it
    refusals = [
        (values.cpu(), bsrmm.InvalidArgumentError, "data is on cpu but the matrix is on cuda:0"),
        (values.double(), bsrmm.UnsupportedError, "data has dtype float64 but the matrix has float32"),
        (values.transpose(1, 2), bsrmm.InvalidArgumentError, "data must have shape"),
        (values.transpose(1, 2).contiguous().transpose(1, 2), bsrmm.InvalidArgumentError,
         "data must be C-contiguous and aligned for borrow=True"),
    ]
    for data, error, message in refusals:  # blocks 16 x 32: the transpose has another shape
        with pytest.raises(error, match=message):
            a.with_values(data, borrow=True)


def test_explicit_context_stream_wins(torch):
    rng, parts, shape, dense = _case(6, "float32")
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    stream = torch.cuda.Stream()
    ctx = bsrmm.Context("cuda:0", stream=stream)
    assert ctx.stream == stream.cuda_stream
    b = _torch_operands(torch, rng, "float32", shape[1], 8, "C")
    torch.cuda.synchronize()
    c = torch.empty(shape[0], 8, device="cuda", dtype=torch.float32)
    bsrmm.matmul(a, b, out=c, context=ctx)
    ctx.synchronize()
    assert ctx.last_variant
    value, scale = reference(dense, b.double().cpu().numpy())
    assert_matches(c.double().cpu().numpy(), value, scale, "float32", inner=shape[1])


def test_from_torch_sparse_bsr_cuda(torch):
    rng = np.random.default_rng(7)
    dense = torch.from_numpy(rng.standard_normal((64, 96)).astype(np.float32))
    dense[dense.abs() < 1.0] = 0
    t = dense.cuda().to_sparse_bsr((16, 32))
    a = bsrmm.BsrMatrix.from_torch(t)
    assert a.device == "cuda:0" and a.blocksize == (16, 32)
    np.testing.assert_array_equal(a.to_dense(), dense.numpy())
    assert bsrmm.BsrMatrix.from_torch(t, device="cpu").device == "cpu"


def test_torch_device_mismatch_and_layout_errors(torch):
    _, parts, shape, _ = _case(8, "float32")
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    with pytest.raises(bsrmm.InvalidArgumentError, match="B is on cpu but A is on cuda:0"):
        bsrmm.matmul(a, torch.ones(shape[1], 4))
    with pytest.raises(bsrmm.InvalidArgumentError, match="out is on cpu"):
        bsrmm.matmul(a, torch.ones(shape[1], 4, device="cuda"), out=torch.empty(shape[0], 4))
    strided_out = torch.empty(shape[0] * 2, 8, device="cuda")[::2, ::2]
    with pytest.raises(bsrmm.InvalidArgumentError, match="out must be row-major or column-major"):
        bsrmm.matmul(a, torch.ones(shape[1], 4, device="cuda"), out=strided_out)
    with pytest.raises(bsrmm.UnsupportedError, match="B has dtype float64 but A and out have float32"):
        bsrmm.matmul(a, torch.ones(shape[1], 4, device="cuda", dtype=torch.float64),
                     out=torch.empty(shape[0], 4, device="cuda"))
    if torch.cuda.device_count() > 1:
        with pytest.raises(bsrmm.InvalidArgumentError, match="B is on cuda:1 but A is on cuda:0"):
            bsrmm.matmul(a, torch.ones(shape[1], 4, device="cuda:1"))


@pytest.mark.parametrize("on_context_stream", [False, True], ids=["current-stream", "context-stream"])
def test_strided_and_float64_torch_inputs_are_copied_on_the_calls_stream(torch, on_context_stream):
    """The copies are made on the stream the multiply runs on (the context's own, or torch's
    current one), so the multiply reads them written, whatever stream the caller set."""
    rng, parts, shape, dense = _case(10, "float32")
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    stream = torch.cuda.Stream() if on_context_stream else None
    context = bsrmm.Context("cuda:0", stream=stream)
    wide = torch.from_numpy(rng.standard_normal((shape[1] * 2, 8))).cuda()  # float64
    b, bias = wide[::2, ::2], torch.arange(2 * shape[0], dtype=torch.float64, device="cuda")[::2]
    torch.cuda.synchronize()
    c = bsrmm.matmul(a, b, bias=bias, context=context)
    context.synchronize()
    assert c.dtype == torch.float32 and c.is_contiguous()
    b32 = b.float().double().cpu().numpy()
    value, scale = reference(dense, b32)
    expected = value + bias.float().double().cpu().numpy()[:, None]
    assert_matches(c.double().cpu().numpy(), expected, scale + np.abs(expected), "float32",
                   inner=shape[1])


class _InterfaceOnly:
    """Exposes only __cuda_array_interface__ (as Numba device arrays do); wraps a torch tensor."""

    def __init__(self, tensor):
        self._tensor = tensor
        self.__cuda_array_interface__ = tensor.__cuda_array_interface__


class _DLPackOnly:
    def __init__(self, tensor):
        self._tensor = tensor

    def __dlpack_device__(self):
        return self._tensor.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        return self._tensor.__dlpack__(**{k: v for k, v in kwargs.items() if k == "stream"})


def test_bare_protocol_objects_as_b_and_out(torch):
    rng, parts, shape, dense = _case(9, "float32")
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    b = _torch_operands(torch, rng, "float32", shape[1], 8, "F")
    value, scale = reference(dense, b.double().cpu().numpy())
    for wrap in (_InterfaceOnly, _DLPackOnly):
        out = torch.full((shape[0], 8), float("nan"), device="cuda")
        torch.cuda.synchronize()
        bsrmm.matmul(a, wrap(b), out=_InterfaceOnly(out))
        torch.cuda.synchronize()
        assert_matches(out.double().cpu().numpy(), value, scale, "float32", inner=shape[1])
    with pytest.raises(bsrmm.UnsupportedError, match="pass out="):
        bsrmm.matmul(a, _InterfaceOnly(b))


# ---- cupy ----


@pytest.fixture
def cupy():
    return pytest.importorskip("cupy", reason="cupy is not installed")


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_cupy_arrays_on_the_current_stream(cupy, dtype):
    rng, parts, shape, dense = _case(10, dtype)
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    b_host = random_values(rng, (shape[1], 24), dtype)
    with cupy.cuda.Stream(non_blocking=True) as stream:
        b = cupy.asfortranarray(cupy.asarray(b_host))
        c = bsrmm.matmul(a, b)
        stream.synchronize()
    assert isinstance(c, cupy.ndarray) and c.dtype == b.dtype
    value, scale = reference(dense, b_host)
    assert_matches(cupy.asnumpy(c), value, scale, dtype, inner=shape[1])
    a2 = bsrmm.BsrMatrix.from_arrays(cupy.asarray(parts[0]), cupy.asarray(parts[1]),
                                     cupy.asarray(parts[2]), shape)
    assert a2.device == "cpu"
    np.testing.assert_array_equal(a2.to_dense().astype(np.float64), dense)


# ---- sddmm on the GPU ----


@pytest.mark.parametrize("dtype", GPU_DTYPES)
def test_sddmm_torch_cuda_matches_float64(dtype):
    """dW = sddmm(W, dY, X.T) with torch CUDA tensors (X.T a column-major view, read in place):
    f16 / bf16 at block 16 run the mma.sync kernel, the others the SIMT one; out starts as NaN."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    rng, parts, shape, _ = _case(40, dtype)
    indptr, indices, _ = parts
    w = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    tokens = 72
    x_host = random_values(rng, (shape[1], tokens), dtype)
    dy_host = random_values(rng, (shape[0], tokens), dtype)
    torch_dtype = getattr(torch, dtype)
    x = torch.from_numpy(x_host.astype(np.float64)).to(device="cuda", dtype=torch_dtype)
    dy = torch.from_numpy(dy_host.astype(np.float64)).to(device="cuda", dtype=torch_dtype)
    out = torch.full((w.nnzb, 16, 16), float("nan"), dtype=torch_dtype, device="cuda")
    assert bsrmm.sddmm(w, dy, x.T, out=out) is out
    torch.cuda.synchronize()
    want = np.empty((w.nnzb, 16, 16))
    scale = np.empty_like(want)
    product = dy_host.astype(np.float64) @ x_host.astype(np.float64).T
    magnitude = np.abs(dy_host.astype(np.float64)) @ np.abs(x_host.astype(np.float64)).T
    for row in range(len(indptr) - 1):
        for b in range(indptr[row], indptr[row + 1]):
            c = indices[b]
            want[b] = product[row * 16 : (row + 1) * 16, c * 16 : (c + 1) * 16]
            scale[b] = magnitude[row * 16 : (row + 1) * 16, c * 16 : (c + 1) * 16]
    # float64 all the way: out.float() would round an f64 result to f32 before the f64 tolerance.
    assert_matches(out.to(torch.float64).cpu().numpy(), want, scale, dtype, tokens)
    ran = bsrmm.default_context("cuda:0").last_variant
    expected = "sm80_sddmm_" if dtype in ("float16", "bfloat16") else "cuda_sddmm_simt_"
    assert ran.startswith(expected), ran


@pytest.mark.parametrize(
    "variant",
    [
        "sm90_sddmm_bf16_wgmma_b128x128_xc_yr",
        "sm80_sddmm_bf16_mma16816_t128x128_xc_yr",
        "sm80_sddmm_bf16_mma16816_t64x64_xc_yr",
        "cuda_sddmm_simt_bf16",
    ],
)
def test_forced_sddmm_variant_runs_on_the_weight_gradient(variant):
    """dW = sddmm(W, dY^T, X) (dY^T a column-major view, X row-major) at 128 x 128 blocks, T 200,
    with Context(variant=...): the forced kernel runs (the sm80 and SIMT ones too on an H100,
    where the choice takes sm90), last_variant names it, float64 agrees; a kernel that does not
    run on this device (sm90 off Hopper) is UnsupportedError and leaves out as it was."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    assert variant in bsrmm.variants(kind="sddmm")
    rng, parts, shape, _ = _case(41, "bfloat16", blocksize=(128, 128), block_rows=3, block_cols=2, density=0.7)
    indptr, indices, _ = parts
    w = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    tokens = 200
    dy_host = random_values(rng, (tokens, shape[0]), "bfloat16")
    x_host = random_values(rng, (tokens, shape[1]), "bfloat16")
    dy = torch.from_numpy(dy_host.astype(np.float32)).to(device="cuda", dtype=torch.bfloat16)
    x = torch.from_numpy(x_host.astype(np.float32)).to(device="cuda", dtype=torch.bfloat16)
    out = torch.full((w.nnzb, 128, 128), float("nan"), dtype=torch.bfloat16, device="cuda")
    context = bsrmm.Context("cuda:0", variant=variant)
    if variant.startswith("sm90_") and torch.cuda.get_device_capability(0) != (9, 0):
        with pytest.raises(bsrmm.UnsupportedError, match=f"the SDDMM variant '{variant}' does not take"):
            bsrmm.sddmm(w, dy.T, x, out=out, context=context)
        torch.cuda.synchronize()
        assert torch.isnan(out).all()
        return
    assert bsrmm.sddmm(w, dy.T, x, out=out, context=context) is out
    torch.cuda.synchronize()
    assert context.last_variant == variant
    want, scale = sddmm_reference(indptr, indices, (128, 128), dy_host.T, x_host)
    assert_matches(out.to(torch.float64).cpu().numpy(), want, scale, "bfloat16", tokens)


def test_sddmm_out_on_another_device_is_the_cores_verdict_in_sddmms_words(torch):
    _, parts, shape, _ = _case(13, "float32")
    w = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    x = torch.randn(shape[0], 8, device="cuda")
    y = torch.randn(8, shape[1], device="cuda")
    with pytest.raises(bsrmm.InvalidArgumentError, match="out is on cpu but A is on cuda:0"):
        bsrmm.sddmm(w, x, y, out=torch.empty(w.nnzb, 16, 16))


# ---- an SM budget (bsrmm.Context.sm_budget, bsrmm.torch.sm_budget) ----


@pytest.mark.parametrize("dtype", GPU_DTYPES)
@pytest.mark.parametrize("transpose_a", [False, True])
def test_sm_budget_of_8_multiplies_right(torch, dtype, transpose_a):
    """32 x 16 blocks of 64 at N = 1536: hundreds of tiles for 8 SMs' persistent CTAs, so each
    runs many (the balanced lists cut for 8 workers); out poisoned with NaN first."""
    rng, parts, shape, dense = _case(28, dtype, (64, 64), block_rows=32, block_cols=16, density=0.3)
    a = bsrmm.BsrMatrix.from_arrays(*parts, shape, device="cuda:0")
    k, m = (shape[0], shape[1]) if transpose_a else (shape[1], shape[0])
    b = _torch_operands(torch, rng, dtype, k, 1536, "C")
    out = torch.full((m, 1536), float("nan"), dtype=b.dtype, device="cuda")
    ctx = bsrmm.Context("cuda:0", sm_budget=8)
    bsrmm.matmul(a, b, transpose_a=transpose_a, out=out, context=ctx)
    torch.cuda.synchronize()
    value, scale = reference(dense, b.double().cpu().numpy(), transpose_a=transpose_a)
    assert_matches(out.double().cpu().numpy(), value, scale, dtype, inner=k)
    assert ctx.last_variant  # what ran, for the log


def test_torch_sm_budget_runs_the_ops_through_a_budgeted_context(torch):
    """A BsrLinear step inside bsrmm.torch.sm_budget(8) goes through the budget's context and
    gives the step's own results (forward and gradients) to rounding."""
    import bsrmm.torch as bt
    from bsrmm.torch import _sm_budget

    torch.manual_seed(28)
    mask = torch.rand(24, 16) < 0.4
    layer = bt.BsrLinear(1024, 1536, 64, mask, activation="gelu", device="cuda", dtype=torch.bfloat16)
    x = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    want = layer(x)
    want.float().square().sum().backward()
    want_dx, want_dw = x.grad.clone(), layer.values.grad.clone()
    x.grad, layer.values.grad = None, None
    with bt.sm_budget(8):
        got = layer(x)
        got.float().square().sum().backward()
        ctx = _sm_budget.context_for(x.device)
        assert ctx is not None and ctx.sm_budget == 8 and ctx.last_variant
    assert _sm_budget.context_for(x.device) is None  # the budget ends with the block
    for name, g, w in (("y", got, want), ("dx", x.grad, want_dx), ("dvalues", layer.values.grad, want_dw)):
        error = float((g.double() - w.double()).norm() / w.double().norm())
        assert error < 1e-2, (name, error)
