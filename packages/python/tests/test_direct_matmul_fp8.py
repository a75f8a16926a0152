"""fp8 products on the direct path (csrc/direct_matmul.cpp, fp8_direct): an fp8 A with an fp8 B
(an ml_dtypes numpy array or a torch float8 tensor, row- or column-major) and ``b_scales`` as a
Python float or one float32 per column, read in C++ where the general path (_fp8.multiply)
would read them as they lie. What it takes (``_core.matmul_direct`` returns True) must come out
bit for bit as the general path computes it, and within float64 of the dequantised operands;
what it declines (False, out untouched) goes to the general path, whose result or error
bsrmm.matmul then gives unchanged. torch cases skip when torch is missing; the GPU case where
no CUDA device is usable."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import bsrmm
from bsrmm import _core, _fp8

ml_dtypes = pytest.importorskip("ml_dtypes", reason="fp8 arrays in numpy need ml_dtypes")

M, K, N = 64, 96, 12
BLOCK = (16, 32)
OUT_ULP = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
NONE = _core.ACTIVATION_NONE


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="torch is not installed: torch float8 B untested here")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(61)
    x = rng.standard_normal((M, K))
    keep = rng.random((M // BLOCK[0], K // BLOCK[1])) < 0.5
    keep[0, 0] = True
    A = bsrmm.BsrMatrix.from_dense(x * np.kron(keep, np.ones(BLOCK)), BLOCK, dtype="float8_e4m3", scale="block")
    q, s = bsrmm.quantize_fp8(rng.standard_normal((K, N)) * 3.0, per_column=True)
    return A, q, s


_CONTEXTS: dict = {}


def context(device):
    """One untuned context per device: both paths run the heuristic's one pick, so their results
    may be compared bit for bit."""
    if device not in _CONTEXTS:
        _CONTEXTS[device] = bsrmm.Context(device, tuning="off")
    return _CONTEXTS[device]


def direct(A, B, out, b_scales, *, bias=None, transpose=False, alpha=1.0, beta=0.0, activation=NONE):
    ctx = context(A.device)
    with ctx._session(ctx._stream_for(B, out, bias)) as handle:
        return _core.matmul_direct(handle, A._handle, B, out, transpose, alpha, beta, activation, b_scales, bias)


def general(A, B, out, b_scales, *, bias=None, transpose=False, alpha=1.0, beta=0.0, activation=NONE):
    ctx = context(A.device)
    return _fp8.multiply(ctx, A, transpose, B, b_scales, alpha, beta, out, bias, activation, tune=False)


def _numpy_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _bits(array):
    """The array's bytes as unsigned integers (NaN compares equal to itself)."""
    if type(array).__module__.startswith("torch"):
        array = array.cpu().contiguous().view(sys.modules["torch"].uint8).numpy()
    return np.ascontiguousarray(array).view(np.uint8)


def _float64(array):
    if type(array).__module__.startswith("torch"):
        return array.cpu().double().numpy()
    return np.asarray(array).astype(np.float64)


def _b_form(form, q, torch):
    """B (K x N) as `form` from the quantised numpy array q (e4m3)."""
    if form == "numpy row-major":
        return q
    if form == "numpy column-major":
        return np.asfortranarray(q)
    if form == "numpy e5m2, padded rows":
        wide = np.zeros((K, N + 5), dtype=ml_dtypes.float8_e5m2)
        wide[:, :N] = q.astype(np.float32).astype(ml_dtypes.float8_e5m2)
        return wide[:, :N]
    as_torch = torch.from_numpy(q.view(np.uint8)).view(torch.float8_e4m3fn)
    if form == "torch row-major":
        return as_torch
    if form == "torch column-major (x.t())":
        return as_torch.t().contiguous().t()
    if form == "torch e5m2 column-major":
        return as_torch.float().to(torch.float8_e5m2).t().contiguous().t()
    raise AssertionError(form)


B_FORMS = ["numpy row-major", "numpy column-major", "numpy e5m2, padded rows", "torch row-major",
           "torch column-major (x.t())", "torch e5m2 column-major"]
SCALE_FORMS = ["a float", "numpy, one per column", "torch, one per column"]


def _scales(form, s, torch):
    if form == "a float":
        return float(s.max())
    if form == "numpy, one per column":
        return s
    return torch.from_numpy(s)


def _poisoned(B, dtype, torch, order="C"):
    if isinstance(B, np.ndarray):
        return np.full((M, N), np.nan, dtype=_numpy_dtype(dtype), order=order)
    out = torch.full((M, N), float("nan"), dtype=getattr(torch, dtype))
    return out if order == "C" else out.t().contiguous().t()


@pytest.mark.parametrize("b_form", B_FORMS)
@pytest.mark.parametrize("scale_form", SCALE_FORMS)
@pytest.mark.parametrize("out_dtype", list(OUT_ULP))
def test_accepted_forms_are_taken_and_match_the_general_path_bit_for_bit(problem, b_form, scale_form, out_dtype):
    A, q, s = problem
    torch = pytest.importorskip("torch") if "torch" in b_form + scale_form else None
    B, b_scales = _b_form(b_form, q, torch), _scales(scale_form, s, torch)
    order = "F" if "column-major" in b_form else "C"  # out in B's layout
    out, twin = _poisoned(B, out_dtype, torch, order), _poisoned(B, out_dtype, torch)
    assert direct(A, B, out, b_scales)
    general(A, B, twin, b_scales)
    np.testing.assert_array_equal(_bits(out), _bits(twin))
    a64 = A.to_dense().astype(np.float64)
    b64 = _float64(B) * np.asarray(np.float32(b_scales) if isinstance(b_scales, float) else _float64(b_scales))
    ref = a64 @ b64
    bound = (K + 2) * 2.0**-24 * (np.abs(a64) @ np.abs(b64)) + OUT_ULP[out_dtype] * np.abs(ref) * 1.01 + 1e-30
    assert np.all(np.abs(_float64(out) - ref) <= bound)


def test_the_epilogue_and_a_transposed_a_are_taken(problem, torch):
    """alpha, beta, a bias in out's dtype (one that requires grad: the general path detaches
    it), the activation, op(A) = A^T, a column-major out."""
    A, q, s = problem
    rng = np.random.default_rng(3)
    for transpose in (False, True):
        rows, inner = (K, M) if transpose else (M, K)
        q_t, s_t = bsrmm.quantize_fp8(rng.standard_normal((inner, N)), per_column=True)
        B = torch.from_numpy(q_t.view(np.uint8)).view(torch.float8_e4m3fn).t().contiguous().t()
        start = torch.from_numpy(rng.standard_normal((rows, N))).float()
        out, twin = start.t().contiguous().t(), start.clone()
        bias = torch.from_numpy(rng.standard_normal(rows)).float().requires_grad_()
        kwargs = dict(bias=bias, transpose=transpose, alpha=-0.5, beta=2.0, activation=_core.ACTIVATION_GELU)
        assert direct(A, B, out, torch.from_numpy(s_t), **kwargs)
        general(A, B, twin, torch.from_numpy(s_t), **kwargs)
        assert torch.equal(out.view(torch.int32), twin.view(torch.int32))


def test_bsrmm_matmul_takes_the_direct_path(problem, torch, monkeypatch):
    """With the general path removed, matmul still answers every accepted form."""
    A, q, s = problem

    def no_general_path(*args, **kwargs):
        raise AssertionError("the general path ran")

    expected = []
    for b_form in ("torch row-major", "torch column-major (x.t())"):
        for b_scales in (float(s.max()), torch.from_numpy(s)):
            B, out = _b_form(b_form, q, torch), torch.empty((M, N))
            general(A, B, out, b_scales)
            expected.append((B, b_scales, out))
    monkeypatch.setattr(_fp8, "multiply", no_general_path)
    for B, b_scales, want in expected:
        out = torch.full((M, N), float("nan"))
        assert bsrmm.matmul(A, B, out=out, context=context("cpu"), b_scales=b_scales) is out
        assert torch.equal(out, want)
    with pytest.raises(AssertionError, match="the general path ran"):  # what it declines
        bsrmm.matmul(A, expected[0][0], out=torch.empty((M, N)), context=context("cpu"), b_scales=s[:-1])


def declined_cases(q, s, torch):
    """(B, b_scales, out, bias) the direct path leaves to the general path: what that path copies
    or converts (it then succeeds) and what it refuses in its own words."""
    b = torch.from_numpy(q.view(np.uint8)).view(torch.float8_e4m3fn)
    st = torch.from_numpy(s)

    def out(dtype="float32", shape=(M, N)):
        return torch.full(shape, float("nan"), dtype=getattr(torch, dtype))

    read_only = np.full((M, N), np.nan, dtype=np.float32)
    read_only.flags.writeable = False
    shared = np.zeros(K * N + 4 * M * N, dtype=np.uint8)
    spread = np.repeat(np.repeat(q, 2, axis=0), 2, axis=1)[::2, ::2]
    return {
        # b_scales: the wrong count, non-finite, of another form the general path converts
        "no b_scales": (b, None, out(), None),
        "one scale too few": (b, st[:-1], out(), None),
        "one scale in a 1-element array for N columns": (b, st[:1], out(), None),
        "an infinite float": (b, float("inf"), out(), None),
        "a float past float32's range": (b, 1e300, out(), None),
        "a NaN among the columns'": (b, torch.tensor([float("nan")] + [1.0] * (N - 1)), out(), None),
        "float64 scales": (b, st.double(), out(), None),
        "int32 scales": (b, np.ones(N, np.int32), out(), None),
        "strided scales": (b, torch.ones(2 * N)[::2], out(), None),
        "scales that require grad": (b, torch.ones(N, requires_grad=True), out(), None),
        "a 0-d scale array": (b, np.ones((), np.float32), out(), None),
        "a numpy float32 scalar": (b, np.float32(0.5), out(), None),
        "an int": (b, 2, out(), None),
        "meta-device scales": (b, torch.ones(N, device="meta"), out(), None),
        # B and out
        "a float32 B with b_scales": (b.float(), 1.0, out(), None),
        "a 1-D B": (b[:, 0], 1.0, out(shape=(M,)), None),
        "B one row short": (b[:-1], 1.0, out(), None),
        "a strided torch B (copied)": (torch.from_numpy(spread.view(np.uint8)).view(torch.float8_e4m3fn), 1.0, out(), None),
        "a strided numpy B": (spread, 1.0, np.full((M, N), np.nan, np.float32), None),
        "numpy B, torch out": (q, 1.0, out(), None),
        "out in float64": (b, 1.0, out("float64"), None),
        "out one column wide": (b, 1.0, out(shape=(M, N + 1)), None),
        "a read-only out": (q, 1.0, read_only, None),
        "out overlapping B": (shared[: K * N].view(ml_dtypes.float8_e4m3fn).reshape(K, N), 1.0,
                              shared[K * N - 4 * N : K * N - 4 * N + 4 * M * N].view(np.float32).reshape(M, N), None),
        # the bias
        "a bias one short": (b, 1.0, out(), torch.ones(M - 1)),
        "a float64 bias (converted)": (b, 1.0, out(), torch.ones(M, dtype=torch.float64)),
        "a bfloat16 torch bias on the host": (b, 1.0, out("bfloat16"), torch.ones(M, dtype=torch.bfloat16)),
    }


def _outcome(call, out):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the outcome is compared, whatever it is
        return ("raised", type(error), str(error))
    return ("returned", _bits(out).tobytes())


DECLINED = [
    "no b_scales", "one scale too few", "one scale in a 1-element array for N columns", "an infinite float",
    "a float past float32's range", "a NaN among the columns'", "float64 scales", "int32 scales",
    "strided scales", "scales that require grad", "a 0-d scale array", "a numpy float32 scalar", "an int",
    "meta-device scales", "a float32 B with b_scales", "a 1-D B", "B one row short",
    "a strided torch B (copied)", "a strided numpy B", "numpy B, torch out", "out in float64",
    "out one column wide", "a read-only out", "out overlapping B", "a bias one short",
    "a float64 bias (converted)", "a bfloat16 torch bias on the host",
]


@pytest.mark.parametrize("case", DECLINED)
def test_declined_forms_get_the_general_paths_result_or_error(problem, torch, case):
    A, q, s = problem
    cases = declined_cases(q, s, torch)
    assert sorted(cases) == sorted(DECLINED)
    B, b_scales, out, bias = cases[case]
    before = _bits(out).copy()
    assert not direct(A, B, out, b_scales, bias=bias)
    np.testing.assert_array_equal(_bits(out), before)  # nothing was written
    ours = _outcome(lambda: bsrmm.matmul(A, B, out=out, b_scales=b_scales, bias=bias, context=context("cpu")), out)
    B, b_scales, twin, bias = declined_cases(q, s, torch)[case]  # fresh operands, alike
    theirs = _outcome(lambda: general(A, B, twin, b_scales, bias=bias), twin)
    assert ours == theirs
    if case in ("one scale too few", "a NaN among the columns'", "a float past float32's range", "out in float64",
                "a bias one short"):
        assert ours[0] == "raised" and issubclass(ours[1], bsrmm.Error)  # the general path's own words
    if case in ("scales that require grad", "a bfloat16 torch bias on the host"):
        assert ours[0] == "returned"  # values read detached; a bias torch converts


def test_gpu_forms_are_taken_and_host_scales_declined(problem):
    """On a GPU: B a torch float8 tensor there in either layout, b_scales a float or one float32
    per column in the device's memory, taken and equal to the general path's; one scale per
    column in host memory is declined, and matmul words the general path's refusal."""
    reason = bsrmm.cuda_unavailable_reason()
    if reason is not None:
        pytest.skip(f"no usable CUDA device ({reason}): GPU forms and host scales for a GPU B untested here")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    host, q, s = problem
    A = host.to("cuda")
    b = torch.from_numpy(q.view(np.uint8)).view(torch.float8_e4m3fn).cuda()
    for B in (b, b.t().contiguous().t()):
        for b_scales in (float(s.max()), torch.from_numpy(s).cuda()):
            for dtype in (torch.bfloat16, torch.float32):
                out = torch.full((M, N), float("nan"), dtype=dtype, device="cuda")
                twin = out.clone()
                assert direct(A, B, out, b_scales)
                general(A, B, twin, b_scales)
                torch.cuda.synchronize()
                assert torch.equal(out.view(torch.uint8), twin.view(torch.uint8))
    out = torch.full((M, N), float("nan"), device="cuda")
    for b_scales in (s, torch.from_numpy(s), torch.ones((), device="cuda"), torch.ones(N, 2, device="cuda")[:, 0],
                     torch.ones(N, dtype=torch.float64, device="cuda")):
        assert not direct(A, b, out, b_scales)
    with pytest.raises(bsrmm.UnsupportedError, match="b_scales holds one scale per column in host memory"):
        bsrmm.matmul(A, b, out=out, b_scales=s, context=context(A.device))
    with pytest.raises(bsrmm.InvalidArgumentError, match="b_scales on cuda:0 must be 1-D contiguous float32"):
        bsrmm.matmul(A, b, out=out, b_scales=torch.ones(N, dtype=torch.float64, device="cuda"), context=context(A.device))
    torch.cuda.synchronize()
    assert torch.isnan(out).all()
