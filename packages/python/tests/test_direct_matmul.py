"""The direct path (csrc/direct_matmul.cpp): the common call's numpy arrays and torch tensors are
read in C++, by the same reader as the general path (a bias too, where that path reads it in
place; fp8 products: test_direct_matmul_fp8.py). What it takes must come out exactly as the
general path computes it (checked against float64, out poisoned first); what needs the general
path (a copy or conversion of B, a vector, another array type) must be declined untouched
(False, out still poisoned, the core never called); what the core refuses (shapes, overlap,
out's dtype) raises before anything is written, and bsrmm.matmul words it as on the general
path. torch cases skip with the reason when torch is absent."""

from __future__ import annotations

import re

import numpy as np
import pytest

import bsrmm
from bsrmm import _core
from bsr_cases import assert_matches, dense_from_bsr, random_bsr, reference

M, K, N = 24, 32, 10
BLOCK = (4, 8)


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(41)
    indptr, indices, data = random_bsr(rng, M // BLOCK[0], K // BLOCK[1], BLOCK, 0.4, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (M, K))
    return a, dense_from_bsr(indptr, indices, data, (M, K)), rng


def direct(a, b, out, ctx, transpose=False):
    return _core.matmul_direct(ctx._handle, a._handle, b, out, transpose, 1.0, 0.0,
                               _core.ACTIVATION_NONE)


def poisoned(shape, dtype=np.float32, order="C"):
    return np.full(shape, np.nan, dtype=dtype, order=order)


@pytest.mark.parametrize("b_order", ["C", "F"])
@pytest.mark.parametrize("c_order", ["C", "F"])
def test_numpy_layouts_are_taken_and_match(problem, b_order, c_order):
    a, dense, rng = problem
    b = np.asarray(rng.standard_normal((K, N)), dtype=np.float32, order=b_order)
    out = poisoned((M, N), order=c_order)
    assert direct(a, b, out, bsrmm.Context("cpu"))
    assert_matches(out, *reference(dense, b), "float32", K)


def test_padded_leading_dimensions_are_taken(problem):
    a, dense, rng = problem
    b_buffer = rng.standard_normal((K, N + 6)).astype(np.float32)
    out_buffer = poisoned((M, N + 3))
    b, out = b_buffer[:, :N], out_buffer[:, :N]
    assert direct(a, b, out, bsrmm.Context("cpu"))
    assert_matches(out, *reference(dense, b), "float32", K)
    assert np.isnan(out_buffer[:, N:]).all(), "the padding beside out was written"


def test_transposed_a_is_taken(problem):
    a, dense, rng = problem
    b = rng.standard_normal((M, N)).astype(np.float32)
    out = poisoned((K, N))
    assert direct(a, b, out, bsrmm.Context("cpu"), transpose=True)
    assert_matches(out, *reference(dense, b, transpose_a=True), "float32", M)


def declined_cases(rng):
    b = rng.standard_normal((K, N)).astype(np.float32)
    return {
        "1-D B": (b[:, 0].copy(), poisoned((M,))),
        "1-D out": (b[:, :1].copy(), poisoned((M,))),
        "3-D B": (b[None], poisoned((1, M, N))),
        "B neither row- nor column-major": (rng.standard_normal((2 * K, 2 * N)).astype(np.float32)[::2, ::2], poisoned((M, N))),
        "integer B": (b.astype(np.int32), poisoned((M, N))),
        "float64 B": (b.astype(np.float64), poisoned((M, N))),
        "a list, not an array": (b.tolist(), poisoned((M, N))),
    }


@pytest.mark.parametrize("case", list(declined_cases(np.random.default_rng(0))))
def test_what_needs_the_general_path_is_declined_untouched(problem, case):
    a, _, rng = problem
    b, out = declined_cases(rng)[case]
    before = np.array(out, copy=True)
    assert not direct(a, b, out, bsrmm.Context("cpu"))
    np.testing.assert_array_equal(out, before)  # NaN == NaN here: nothing was written


def judged_cases(rng):
    b = rng.standard_normal((K, N)).astype(np.float32)
    shared = rng.standard_normal((K + M, N)).astype(np.float32)
    read_only = poisoned((M, N))
    read_only.flags.writeable = False
    return {  # (B, out, error class, what the message says)
        "B of the wrong height": (b[:-1], poisoned((M, N)), bsrmm.InvalidArgumentError, "B.shape[0] = 31"),
        "out of the wrong shape": (b, poisoned((M, N + 1)), bsrmm.InvalidArgumentError, "out.shape[1] = 11"),
        "out overlapping B": (shared[:K], shared[K - 1 : K - 1 + M], bsrmm.InvalidArgumentError, "out overlaps B"),
        "read-only out": (b, read_only, bsrmm.InvalidArgumentError, "read-only"),
        "out of another dtype": (b, poisoned((M, N), np.float64), bsrmm.UnsupportedError, "mixed dtypes"),
        "out neither row- nor column-major": (b, poisoned((2 * M, 2 * N))[::2, ::2], bsrmm.InvalidArgumentError, "out must be row-major"),
        "non-native byte order": (b.astype(b.dtype.newbyteorder()), poisoned((M, N)), bsrmm.UnsupportedError, "non-native"),
    }


@pytest.mark.parametrize("case", list(judged_cases(np.random.default_rng(0))))
def test_what_the_reader_or_core_refuses_raises_untouched(problem, case):
    a, _, rng = problem
    b, out, error, words = judged_cases(rng)[case]
    before = np.array(out, copy=True)
    with pytest.raises(error, match=re.escape(words)):
        direct(a, b, out, bsrmm.Context("cpu"))
    np.testing.assert_array_equal(out, before)


def test_empty_products_are_taken(problem):
    a, _, rng = problem
    b = rng.standard_normal((K, N)).astype(np.float32)
    assert direct(a, b[:, :0], poisoned((M, 0)), bsrmm.Context("cpu"))


@pytest.mark.parametrize("case", ["B of the wrong height", "out of the wrong shape", "read-only out", "out of another dtype"])
def test_matmul_words_the_verdict_alike_on_both_paths(problem, case):
    """The same operands through the direct path and, with B strided so that it is copied,
    through the general path: the same error class and message."""
    a, _, rng = problem
    b, out, error, _ = judged_cases(rng)[case]
    spread = np.empty((2 * b.shape[0], 2 * b.shape[1]), b.dtype)[::2, ::2]
    spread[...] = b
    messages = []
    for operand in (b, spread):
        with pytest.raises(error) as info:
            bsrmm.matmul(a, operand, out=out)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "C." not in messages[0] and "context" not in messages[0]


def test_another_dtype_than_a_is_declined_here_and_refused_by_the_general_path(problem):
    """float64 B and out against a float32 A: the direct path declines them (not A's dtype), and
    the general path refuses out, saying how."""
    a, _, rng = problem
    b = rng.standard_normal((K, N))
    with pytest.raises(bsrmm.Error, match="dtype"):
        bsrmm.matmul(a, b, out=np.empty((M, N)))


# ---- a bias ----


def direct_with_bias(a, b, out, bias, ctx, transpose=False, activation=_core.ACTIVATION_NONE):
    return _core.matmul_direct(ctx._handle, a._handle, b, out, transpose, 1.0, 0.0, activation,
                               None, bias)


def test_a_bias_read_in_place_is_taken(problem):
    """A bias the general path would read as it lies (1-D, one value per row of C, A's dtype,
    compact): taken, with the activation after it; the result is the general path's, bit for
    bit (there: a strided bias, which that path copies)."""
    a, dense, rng = problem
    b = rng.standard_normal((K, N)).astype(np.float32)
    bias = rng.standard_normal(M).astype(np.float32)
    out = poisoned((M, N))
    assert direct_with_bias(a, b, out, bias, bsrmm.Context("cpu"), activation=_core.ACTIVATION_RELU)
    value, scale = reference(dense, b, bias=bias)
    assert_matches(out, np.maximum(value, 0.0), scale, "float32", K)
    general, strided = poisoned((M, N)), np.repeat(bias, 2)[::2]  # declined: the general path copies it
    assert not direct_with_bias(a, b, general, strided, bsrmm.Context("cpu"))
    bsrmm.matmul(a, b, out=general, bias=strided, activation="relu")
    np.testing.assert_array_equal(out, general)
    transposed = poisoned((K, N))
    b_t = rng.standard_normal((M, N)).astype(np.float32)
    bias_t = rng.standard_normal(K).astype(np.float32)
    assert direct_with_bias(a, b_t, transposed, bias_t, bsrmm.Context("cpu"), transpose=True)
    assert_matches(transposed, *reference(dense, b_t, transpose_a=True, bias=bias_t), "float32", M)


def declined_biases(rng):
    bias = rng.standard_normal(M).astype(np.float32)
    return {
        "one value short": bias[:-1].copy(),
        "float64": bias.astype(np.float64),
        "strided": np.repeat(bias, 2)[::2],
        "2-D": bias[:, None].copy(),
        "a list": bias.tolist(),
    }


@pytest.mark.parametrize("case", list(declined_biases(np.random.default_rng(0))))
def test_a_bias_the_general_path_copies_or_refuses_is_declined(problem, case):
    a, _, rng = problem
    b = rng.standard_normal((K, N)).astype(np.float32)
    out = poisoned((M, N))
    assert not direct_with_bias(a, b, out, declined_biases(rng)[case], bsrmm.Context("cpu"))
    assert np.isnan(out).all()


def test_scales_for_a_non_fp8_a_are_declined(problem):
    a, _, rng = problem
    b, out = rng.standard_normal((K, N)).astype(np.float32), poisoned((M, N))
    assert not _core.matmul_direct(bsrmm.Context("cpu")._handle, a._handle, b, out, False, 1.0, 0.0,
                                   _core.ACTIVATION_NONE, 1.0, None)
    assert np.isnan(out).all()


# ---- torch ----


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="torch is not installed: the direct torch path untested here")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_torch_tensors_are_taken_and_match(problem, torch, dtype):
    _, dense, rng = problem
    torch_dtype = getattr(torch, dtype)
    a = bsrmm.BsrMatrix.from_torch(torch.from_numpy(dense).to(torch_dtype).to_sparse_bsr(BLOCK))
    b = torch.from_numpy(rng.standard_normal((K, N))).to(torch_dtype)
    out = torch.full((M, N), float("nan"), dtype=torch_dtype)
    assert direct(a, b, out, bsrmm.Context("cpu"))
    a64 = torch.from_numpy(dense).to(torch_dtype).double().numpy()
    assert_matches(out.double().numpy(), *reference(a64, b.double().numpy()), dtype, K)


def test_torch_views_and_mixes(problem, torch):
    a, dense, rng = problem
    b = torch.from_numpy(rng.standard_normal((N, K)).astype(np.float32)).t()  # column-major view
    out = torch.full((M, N), float("nan"))
    assert direct(a, b, out, bsrmm.Context("cpu"))
    assert_matches(out.numpy(), *reference(dense, b.numpy()), "float32", K)
    # numpy B with a torch out: the general path's to judge.
    b_numpy, out_torch = b.numpy(), torch.full((M, N), float("nan"))
    assert not direct(a, b_numpy, out_torch, bsrmm.Context("cpu"))
    assert torch.isnan(out_torch).all()
    # a sparse tensor, a meta tensor: the reader refuses them, as on the general path.
    for b_other, words in [(b.contiguous().to_sparse(), "B is a torch tensor with layout"),
                           (torch.empty((K, N), device="meta"), "B is on torch device 'meta'")]:
        with pytest.raises(bsrmm.UnsupportedError, match=words):
            direct(a, b_other, out_torch, bsrmm.Context("cpu"))
        with pytest.raises(bsrmm.UnsupportedError, match=words):
            bsrmm.matmul(a, b_other, out=out_torch)
        assert torch.isnan(out_torch).all()


def test_torch_bias_is_taken_and_matches_the_general_path(problem, torch):
    """torch's per-call product with a bias went through the general path (perf-log 62)."""
    _, dense, rng = problem
    a = bsrmm.BsrMatrix.from_torch(torch.from_numpy(dense).to(torch.bfloat16).to_sparse_bsr(BLOCK))
    b = torch.from_numpy(rng.standard_normal((N, K))).to(torch.bfloat16).t()  # column-major
    bias = torch.from_numpy(rng.standard_normal(M)).to(torch.bfloat16)
    out = torch.full((M, N), float("nan"), dtype=torch.bfloat16)
    assert direct_with_bias(a, b, out, bias, bsrmm.Context("cpu"), activation=_core.ACTIVATION_GELU)
    general = torch.full((M, N), float("nan"), dtype=torch.bfloat16)
    bsrmm.matmul(a, b, out=general, bias=torch.stack([bias, bias], 1)[:, 0], activation="gelu")
    assert torch.equal(out.view(torch.int16), general.view(torch.int16))


def test_the_cores_device_verdicts_are_worded_with_a(problem):
    """check_on_context's words ("C is on cpu but the context is on cuda:0", what a GPU call with
    a host out gets from the direct path) in matmul's: the argument's name, and A for the
    context (which is on A's device). Checked here on the wording alone; test_gpu.py runs it."""
    from bsrmm import _matmul

    a, _, rng = problem
    b, out = rng.standard_normal((K, N)).astype(np.float32), poisoned((M, N))
    for core_words, expected in [
        ("C is on cpu but the context is on cuda:0", "out is on cpu but A is on cuda:0: move A"),
        ("B is on cuda:1 but the context is on cuda:0", "B is on cuda:1 but A is on cuda:0"),
    ]:
        judged = _matmul._judged(bsrmm.InvalidArgumentError(core_words), a, False, b, out)
        assert isinstance(judged, bsrmm.InvalidArgumentError) and str(judged).startswith(expected)
    other = bsrmm.InvalidArgumentError("out overlaps B in memory: the output must not alias an input")
    assert _matmul._judged(other, a, False, b, out) is other
