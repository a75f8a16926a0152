"""The two custom ops, ``torch.ops.bsrmm.bsr_mm`` and ``torch.ops.bsrmm.sampled_mm``, with their
fake (meta) kernels and autograd formulas, so that torch.compile traces them without a graph
break and AOTAutograd traces their backward too (it is written in these same ops).

bsr_mm(values, pattern, x, bias, activation, transpose):
    y = act(x @ op(W)^T + bias), W the pattern's matrix holding ``values``, op(W) = W or W^T;
    x: (N, op(W).cols), y: (N, op(W).rows) — nn.Linear's layout (tokens are rows).
sampled_mm(a, b, pattern):
    values = (a @ b) at the pattern's stored blocks, (nnzb, bh, bw); a: (M, T), b: (T, K).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, cast

import torch

import bsrmm
from bsrmm import _core
from bsrmm._matmul import _ACTIVATIONS, _context_for

from . import _patterns, _sm_budget

ACTIVATIONS = ("none", "relu", "gelu", "silu")


def _step_matrices(entry: _patterns.Pattern, tensor: torch.Tensor, op: str) -> _patterns.Prepared:
    """The pattern's prepared matrices for a step on ``tensor``'s device and dtype. A step
    allocates, copies from the host or waits on nothing but what torch itself does: its values
    are borrowed (``with_values(borrow=True)``), and the multiplies and the SDDMM only enqueue
    kernels, so a CUDA graph capture (torch.cuda.graph, torch.compile's "reduce-overhead") can
    hold it. What a capture cannot hold is refused before anything is enqueued: preparing a
    pattern (validation, uploads and a wait), here; a multiply whose plan is still cold, by the
    core (bsrmm.UnsupportedError saying what to run first)."""
    if tensor.is_cuda and torch.cuda.is_current_stream_capturing():
        prepared = entry.prepared(tensor.device, tensor.dtype)
        if prepared is None:
            raise RuntimeError(
                f"bsrmm::{op} is being captured into a CUDA graph, but its pattern was never "
                f"prepared for {tensor.device} in {tensor.dtype}: preparing validates and uploads "
                "it (device memory and a wait), which a capture cannot hold. Build or move the "
                "layer there first (BsrLinear.to(device, dtype), or prepare_pattern(key, device, "
                "dtype)) and run one step before capturing"
            )
        return prepared
    return entry.matrices(tensor.device, tensor.dtype)


def _check_alike(reference_name: str, reference: torch.Tensor, **tensors: Optional[torch.Tensor]) -> None:
    """Every tensor on ``reference``'s device and in its dtype: bsrmm computes in one dtype, on
    one device, and converts nothing behind the caller's back."""
    for name, tensor in tensors.items():
        if tensor is None:
            continue
        if tensor.device != reference.device:
            raise ValueError(
                f"{name} is on {tensor.device} but {reference_name} is on {reference.device}"
            )
        if tensor.dtype != reference.dtype:
            raise TypeError(
                f"{name} has dtype {tensor.dtype} but {reference_name} has {reference.dtype}: "
                "bsrmm computes in one dtype, convert one of them"
            )


def _op_shape(pattern: _patterns.Pattern, transpose: bool) -> Tuple[int, int]:
    rows, cols = pattern.shape
    return (cols, rows) if transpose else (rows, cols)


def _check_bsr_mm(
    values: torch.Tensor, pattern: _patterns.Pattern, x: torch.Tensor,
    bias: Optional[torch.Tensor], activation: str, transpose: bool,
) -> Tuple[int, int]:
    expected = (pattern.nnzb, *pattern.blocksize)
    if tuple(values.shape) != expected:
        raise ValueError(f"values must have shape {expected} (nnzb, bh, bw); got {tuple(values.shape)}")
    rows, cols = _op_shape(pattern, transpose)
    if x.dim() != 2 or x.shape[1] != cols:
        raise ValueError(f"x must be 2-D with {cols} columns (tokens x features); got {tuple(x.shape)}")
    if bias is not None and tuple(bias.shape) != (rows,):
        raise ValueError(f"bias must have shape ({rows},); got {tuple(bias.shape)}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}; got {activation!r}")
    _check_alike("values", values, x=x, bias=bias)
    return rows, cols


def bsr_mm_body(
    values: torch.Tensor, pattern: int, x: torch.Tensor, bias: Optional[torch.Tensor],
    activation: str, transpose: bool,
) -> torch.Tensor:
    """What the op runs on real tensors: checks, a fresh y, the multiply. Callers outside the
    op (BsrLinear's eager path) call it only where :func:`runs_eagerly` says the dispatcher
    would do nothing else."""
    rows, _ = _check_bsr_mm(values, _patterns.lookup(pattern), x, bias, activation, transpose)
    y = torch.empty((x.shape[0], rows), dtype=values.dtype, device=values.device)
    _multiply(values, pattern, x, y, bias, activation, transpose)
    return y


@torch.library.custom_op("bsrmm::bsr_mm", mutates_args=())
def bsr_mm(
    values: torch.Tensor, pattern: int, x: torch.Tensor, bias: Optional[torch.Tensor],
    activation: str, transpose: bool,
) -> torch.Tensor:
    """``act(x @ op(W)^T + bias)`` with W the pattern ``pattern`` holding ``values``."""
    return bsr_mm_body(values, pattern, x, bias, activation, transpose)


_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)
# Private torch state, read defensively: absent in a torch that moved it, the eager path is
# simply not taken (the op is always correct, only slower).
_functorch_active = getattr(torch._C, "_are_functorch_transforms_active", None)
_function_mode_enabled = getattr(torch._C, "_is_torch_function_mode_enabled", None)
try:
    from torch.utils._python_dispatch import _get_current_dispatch_mode
except ImportError:  # pragma: no cover - a torch without it
    _get_current_dispatch_mode = None  # type: ignore[assignment]


def runs_eagerly(*tensors: Optional[torch.Tensor]) -> bool:
    """Whether torch's dispatcher would only run :func:`bsr_mm_body` on these tensors, so a
    caller may call it directly: autograd records nothing (no grad mode, or no input that
    requires grad), nothing traces or transforms (torch.compile, export, FakeTensor, vmap /
    functorch, tensor subclasses), no dispatch or torch-function mode is active and the
    profiler is off (so traces still show the op). The dispatch costs a third of a decode-size
    call's host time (15.0 against 9.1 us on a fast host, ~75 us in all on the H100 machines'
    hosts where the kernel takes 15-35; docs/perf-log.md entries 93-94)."""
    # First: under torch.compile Dynamo folds this to True and traces nothing below.
    if torch.compiler.is_compiling():
        return False
    if _functorch_active is None or _function_mode_enabled is None or _get_current_dispatch_mode is None:
        return False
    if (_functorch_active() or _function_mode_enabled() or _get_current_dispatch_mode() is not None or
            torch.autograd.profiler._is_profiler_enabled):
        return False
    grad = torch.is_grad_enabled()
    for tensor in tensors:
        if tensor is not None and (type(tensor) not in _PLAIN_TENSORS or (grad and tensor.requires_grad)):
            return False
    return True


def multiply_into(values: torch.Tensor, pattern: int, x: torch.Tensor, out: torch.Tensor,
                  bias: Optional[torch.Tensor] = None) -> None:
    """``out = x @ W^T (+ bias)`` written into ``out`` (row-contiguous, e.g. a slice of tokens
    of a larger output), off autograd's tape: for callers with a backward of their own (the
    overlapped row-parallel reduction, parallel/_overlap.py), which save a cat of the pieces
    this way."""
    rows, _ = _check_bsr_mm(values, _patterns.lookup(pattern), x, bias, "none", False)
    if tuple(out.shape) != (x.shape[0], rows) or out.stride(1) != 1:
        raise ValueError(f"out must be ({x.shape[0]}, {rows}) with contiguous rows; got "
                         f"{tuple(out.shape)} with strides {out.stride()}")
    _check_alike("values", values, out=out)
    _multiply(values, pattern, x, out, bias, "none", False)


def _multiply(
    values: torch.Tensor, pattern: int, x: torch.Tensor, y: torch.Tensor,
    bias: Optional[torch.Tensor], activation: str, transpose: bool,
) -> None:
    """``y = act(x @ op(W)^T + bias)``, the operands checked."""
    prepared = _step_matrices(_patterns.lookup(pattern), values, "bsr_mm")
    values = values.contiguous()
    context = _context_for(prepared.matrix, _sm_budget.context_for(values.device))
    code = _ACTIVATIONS[None if activation == "none" else activation]
    with context._session(context._stream_for(x, y)) as handle:
        if transpose:
            # W^T as a matrix of its own (prepared once), so the multiply runs W^T's own
            # schedule: its values are W's blocks, reordered and each transposed, written by the
            # core's tiled copy on the step's stream (a torch gather from the transposed view
            # took 82 us for 896 blocks of 128 x 128 on an H100; perf-log 57, 85).
            like = prepared.transposed
            blocks = values.new_empty((values.shape[0], values.shape[2], values.shape[1]))
            if not _core.transpose_step_values(handle, prepared.matrix._handle, values, blocks):
                raise RuntimeError(
                    f"bsrmm::bsr_mm could not transpose values of shape {tuple(values.shape)}, "
                    f"{values.dtype} on {values.device} for the pattern's (nnzb, bh, bw) = "
                    f"{(prepared.matrix.nnzb, *prepared.matrix.blocksize)}"
                )
        else:
            like, blocks = prepared.matrix, values
        # bsrmm's C = op(A) @ B with B = x^T and C = y^T: both are column-major views, no
        # copies. One C++ call takes the step's values (borrowed in place on CUDA, so nothing
        # but the kernel is queued and a CUDA graph can hold it) and multiplies; what it does
        # not take goes through with_values and bsrmm.matmul, which word every refusal.
        if _core.matmul_step(handle, like._handle, blocks, x.T, y.T, bias, code):
            return
    matrix = like.with_values(blocks, borrow=values.is_cuda)
    bsrmm.matmul(matrix, x.T, out=y.T, bias=bias,
                 activation=None if activation == "none" else activation, context=context)


@bsr_mm.register_fake
def _bsr_mm_fake(
    values: torch.Tensor, pattern: int, x: torch.Tensor, bias: Optional[torch.Tensor],
    activation: str, transpose: bool,
) -> torch.Tensor:
    rows, _ = _check_bsr_mm(values, _patterns.lookup(pattern), x, bias, activation, transpose)
    return x.new_empty((x.shape[0], rows))


def _check_sampled_mm(a: torch.Tensor, b: torch.Tensor, pattern: _patterns.Pattern) -> None:
    rows, cols = pattern.shape
    if a.dim() != 2 or a.shape[0] != rows:
        raise ValueError(f"a must be 2-D with {rows} rows (the pattern's); got {tuple(a.shape)}")
    if b.dim() != 2 or b.shape[1] != cols or b.shape[0] != a.shape[1]:
        raise ValueError(
            f"b must be ({a.shape[1]}, {cols}) (a's columns x the pattern's); got {tuple(b.shape)}"
        )
    _check_alike("a", a, b=b)


@torch.library.custom_op("bsrmm::sampled_mm", mutates_args=())
def sampled_mm(a: torch.Tensor, b: torch.Tensor, pattern: int) -> torch.Tensor:
    """``(a @ b)`` at the stored blocks of pattern ``pattern``: (nnzb, bh, bw), in its order."""
    entry = _patterns.lookup(pattern)
    _check_sampled_mm(a, b, entry)
    prepared = _step_matrices(entry, a, "sampled_mm")
    out = torch.empty((entry.nnzb, *entry.blocksize), dtype=a.dtype, device=a.device)
    bsrmm.sddmm(prepared.matrix, a, b, out=out, context=_sm_budget.context_for(a.device))
    return out


@sampled_mm.register_fake
def _sampled_mm_fake(a: torch.Tensor, b: torch.Tensor, pattern: int) -> torch.Tensor:
    entry = _patterns.lookup(pattern)
    _check_sampled_mm(a, b, entry)
    return a.new_empty((entry.nnzb, *entry.blocksize))


def _activation_grad(
    grad: torch.Tensor, y: torch.Tensor, pre_activation: Any, activation: str
) -> torch.Tensor:
    """dL/dz from dL/dy for y = act(z). relu reads y (z > 0 exactly where y > 0); gelu and
    silu need z, recomputed by ``pre_activation()`` (the forward kept only y)."""
    if activation == "none":
        return grad
    if activation == "relu":
        return cast(torch.Tensor, torch.ops.aten.threshold_backward(grad, y, 0))
    z: torch.Tensor = pre_activation()
    if activation == "gelu":
        return cast(torch.Tensor, torch.ops.aten.gelu_backward(grad, z, approximate="tanh"))
    # silu'(z) = s (1 + z (1 - s)), s = sigmoid(z); written out because aten.silu_backward has no
    # derivative of its own, and a second-order gradient must go through this.
    s = torch.sigmoid(z)
    return grad * s * (1 + z * (1 - s))


def _bsr_mm_setup(ctx: Any, inputs: Tuple[Any, ...], output: torch.Tensor) -> None:
    values, pattern, x, bias, activation, transpose = inputs
    ctx.pattern, ctx.activation, ctx.transpose = pattern, activation, transpose
    # Only relu's derivative reads y. Kept otherwise, y would stay alive until the backward, and
    # a caller could not reuse it in place (the row-parallel all-reduce reduces it in place).
    ctx.save_for_backward(values, x, bias, output if activation == "relu" else None)


def _bsr_mm_backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
    values, x, bias, y = ctx.saved_tensors
    pattern, transpose = ctx.pattern, ctx.transpose
    dz = _activation_grad(
        grad, y, lambda: bsr_mm(values, pattern, x, bias, "none", transpose), ctx.activation
    )
    d_values = d_x = d_bias = None
    if ctx.needs_input_grad[0]:
        # W's gradient at its stored blocks: (dz^T x) for y = x W^T, (x^T dz) for y = x W.
        d_values = sampled_mm(x.T, dz, pattern) if transpose else sampled_mm(dz.T, x, pattern)
    if ctx.needs_input_grad[2]:
        d_x = bsr_mm(values, pattern, dz, None, "none", not transpose)
    if bias is not None and ctx.needs_input_grad[3]:
        d_bias = dz.sum(0)
    return d_values, None, d_x, d_bias, None, None


bsr_mm.register_autograd(_bsr_mm_backward, setup_context=_bsr_mm_setup)


def _sampled_mm_setup(ctx: Any, inputs: Tuple[Any, ...], output: torch.Tensor) -> None:
    a, b, pattern = inputs
    ctx.pattern = pattern
    ctx.save_for_backward(a, b)


def _sampled_mm_backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
    a, b = ctx.saved_tensors
    # values = P o (a b): da = S b^T, db = a^T S, with S the pattern holding grad.
    d_a = bsr_mm(grad, ctx.pattern, b, None, "none", False).T if ctx.needs_input_grad[0] else None
    d_b = bsr_mm(grad, ctx.pattern, a.T, None, "none", True) if ctx.needs_input_grad[1] else None
    return d_a, d_b, None


sampled_mm.register_autograd(_sampled_mm_backward, setup_context=_sampled_mm_setup)
