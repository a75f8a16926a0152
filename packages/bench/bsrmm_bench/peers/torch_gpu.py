"""GPU peers through PyTorch (imported only when a case runs on CUDA): dense cuBLAS
(torch.matmul), torch's sparse BSR tensor `A_bsr @ B`, and torch's Triton kernel
torch.sparse._triton_ops.bsr_dense_mm."""

from __future__ import annotations

import warnings

import numpy as np

from ..backends import Unavailable
from ..impl import Implementation, Prepared


def set_f32_mode(torch, precision: str) -> None:
    """Peers run float32 cases in the same mode as ours: IEEE for exact, tf32 when asked."""
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"


def _op_bsr_arrays(ops, set_index: int):
    """op(A) as BSR arrays (indptr, indices, data), built once per case for every peer."""
    return ops.op_bsr(set_index, np.float64 if ops.case.dtype == "float64" else np.float32)


def torch_bsr(ops, backend, set_index: int):
    torch = backend.torch
    indptr, indices, data = _op_bsr_arrays(ops, set_index)
    with warnings.catch_warnings():  # "sparse support is in beta": said once per tensor otherwise
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_bsr_tensor(
            torch.from_numpy(indptr.astype(np.int64)).to(backend.dev),
            torch.from_numpy(indices.astype(np.int64)).to(backend.dev),
            backend.array(np.ascontiguousarray(data), ops.case.dtype),
            size=(ops.case.m, ops.case.k),
            check_invariants=False,
        )


def dense_on_device(ops, backend, set_index: int):
    """op(A) as a dense device tensor, its blocks scattered in place on the GPU."""
    torch = backend.torch
    case = ops.case
    indptr, indices, data = _op_bsr_arrays(ops, set_index)
    bh, bw = data.shape[1:]
    dense = torch.zeros((case.m, case.k), dtype=backend.torch_dtype(case.dtype), device=backend.dev)
    rows = torch.from_numpy(np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))).to(backend.dev)
    cols = torch.from_numpy(indices.astype(np.int64)).to(backend.dev)
    tiles = dense.view(case.m // bh, bh, case.k // bw, bw)  # a view: writes land in `dense`
    tiles[rows, :, cols, :] = backend.array(np.ascontiguousarray(data), case.dtype)
    return dense


# The dense peer materialises op(A) on the GPU: beyond this it is reported unavailable (a 2^20-row
# A would need terabytes).
DENSE_BYTES_LIMIT = 16 << 30


def _prepare_dense(ops, backend, context) -> Prepared:
    torch = backend.torch
    case = ops.case
    item = torch.empty((), dtype=backend.torch_dtype(case.dtype)).element_size()
    if case.m * case.k * item * len(ops.sets) > DENSE_BYTES_LIMIT:
        raise Unavailable(f"dense op(A) would take {case.m * case.k * item * len(ops.sets) / 2**30:.0f} GiB "
                          f"(limit {DENSE_BYTES_LIMIT >> 30} GiB)")
    set_f32_mode(torch, case.precision)
    # Densified on the GPU: rotation sets of small cases would otherwise need one float64 host
    # copy of op(A) per set.
    dense = [dense_on_device(ops, backend, s.index) for s in ops.sets]
    b = context["b"]
    outs = [backend.empty((case.m, case.n), case.dtype, case.layout_c) for _ in ops.sets]

    def run(i: int) -> None:
        if case.layout_c == "col":
            # C col-major is C^T row-major: C^T = B^T A^T, one cuBLAS call either way.
            torch.matmul(b[i].t(), dense[i].t(), out=outs[i].t())
        else:
            torch.matmul(dense[i], b[i], out=outs[i])

    return Prepared(run=run, result=lambda i: outs[i], poison=lambda i: backend.poison(outs[i]),
                    notes=["op(A) as a dense tensor (cuBLAS)"])


def _prepare_bsr(ops, backend, context) -> Prepared:
    torch = backend.torch
    set_f32_mode(torch, ops.case.precision)
    mats = [torch_bsr(ops, backend, s.index) for s in ops.sets]
    b = context["b"]
    outs: list = [None] * len(ops.sets)

    def run(i: int) -> None:
        outs[i] = mats[i] @ b[i]

    notes = ["output allocated by each call"] + (["A^T formed before timing"] if ops.case.transpose_a else [])
    return Prepared(run=run, result=lambda i: outs[i], notes=notes)


def _prepare_triton(ops, backend, context) -> Prepared:
    torch = backend.torch
    case = ops.case
    op_block = (case.block[1], case.block[0]) if case.transpose_a else case.block
    if any(b < 16 or b & (b - 1) for b in op_block) or case.dtype == "float64":
        # Where it applies: torch checks the same (and would fail in the checked run otherwise).
        raise Unavailable(f"torch's Triton BSR kernel takes blocks of 16 or more, powers of 2, in f16 / bf16 / f32; "
                          f"this case: {op_block[0]} x {op_block[1]} {case.dtype}")
    try:
        from torch.sparse._triton_ops import bsr_dense_mm
    except Exception as e:
        raise Unavailable(f"torch.sparse._triton_ops.bsr_dense_mm not importable: {e}") from e
    set_f32_mode(torch, case.precision)
    mats = [torch_bsr(ops, backend, s.index) for s in ops.sets]
    b = context["b"]
    outs = [backend.empty((case.m, case.n), case.dtype, "row") for _ in ops.sets]

    def run(i: int) -> None:
        bsr_dense_mm(mats[i], b[i], out=outs[i])

    notes = ["output row-major"] + (["A^T formed before timing"] if case.transpose_a else [])
    return Prepared(run=run, result=lambda i: outs[i], poison=lambda i: backend.poison(outs[i]), notes=notes)


TORCH_DENSE = Implementation(name="torch.dense", role="dense", label="cuBLAS dense", prepare=_prepare_dense)
TORCH_BSR = Implementation(name="torch.bsr", role="sparse", label="torch BSR @", prepare=_prepare_bsr)
TORCH_BSR_TRITON = Implementation(name="torch.bsr_dense_mm", role="sparse", label="torch bsr_dense_mm", prepare=_prepare_triton)
