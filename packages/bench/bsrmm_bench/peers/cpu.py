"""Host peers: scipy.sparse BSR @ dense (the CPU claim's baseline) and dense numpy matmul."""

from __future__ import annotations

import numpy as np

from ..backends import Unavailable
from ..impl import Implementation, Prepared

_BLAS_DTYPES = ("float32", "float64")  # numpy's BLAS and scipy's sparsetools cover these


def _prepare_scipy(ops, backend, context) -> Prepared:
    case = ops.case
    if case.dtype not in _BLAS_DTYPES:
        raise Unavailable(f"scipy.sparse BSR has no {case.dtype} product")
    dtype = backend.numpy_dtype(case.dtype)
    # op(A) in scipy's own BSR: for transpose_a, scipy's transpose of the stored matrix (still
    # BSR, blocks transposed), made before timing like bsrmm's matrix construction.
    mats = [ops.scipy_a(s.index, dtype) for s in ops.sets]
    if case.transpose_a:
        mats = [a.T for a in mats]
    b = context["b"]
    outs: list = [None] * len(ops.sets)

    def run(i: int) -> None:
        outs[i] = mats[i] @ b[i]

    notes = ["output allocated by each call"] + (["A^T formed before timing"] if case.transpose_a else [])
    return Prepared(run=run, result=lambda i: outs[i], notes=notes)


def _prepare_numpy(ops, backend, context) -> Prepared:
    case = ops.case
    if case.dtype not in _BLAS_DTYPES:
        raise Unavailable(f"numpy has no BLAS matmul for {case.dtype}")
    dense = [backend.array(ops.dense_op_a(s.index, np.float64), case.dtype) for s in ops.sets]
    b = context["b"]
    outs = [backend.empty((case.m, case.n), case.dtype, case.layout_c) for _ in ops.sets]

    def run(i: int) -> None:
        np.matmul(dense[i], b[i], out=outs[i])

    return Prepared(run=run, result=lambda i: outs[i], poison=lambda i: backend.poison(outs[i]),
                    notes=["op(A) as a dense array"])


SCIPY_BSR = Implementation(name="scipy.bsr", role="sparse", label="scipy BSR", prepare=_prepare_scipy)
NUMPY_DENSE = Implementation(name="numpy.dense", role="dense", label="numpy dense", prepare=_prepare_numpy)
