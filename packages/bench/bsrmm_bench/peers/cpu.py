"""Host peers: scipy.sparse (BSR, the foundation issue's baseline, and CSR), Intel MKL's sparse
multiply (sparse_dot_mkl over the `mkl` wheel's libmkl_rt; BSR and CSR), torch's CPU sparse
matmul (CSR and BSR, where torch is installed) and dense BLAS through numpy. Each reports why it
cannot run (package missing, dtype, size) instead of being dropped."""

from __future__ import annotations

import os
import warnings

import numpy as np

from ..backends import Unavailable
from ..impl import Implementation, Prepared

_BLAS_DTYPES = ("float32", "float64")  # numpy's BLAS, scipy's sparsetools and MKL cover these

# The dense peer materialises op(A): above these it is reported unavailable rather than thrashing
# the machine (24 GB, 2 cores) or taking minutes per run.
DENSE_BYTES_LIMIT = 512 << 20
DENSE_FLOP_LIMIT = 2.0**35


def _blas_dtype(case, who: str):
    if case.dtype not in _BLAS_DTYPES:
        raise Unavailable(f"{who} has no {case.dtype} product")


def _op_scipy(ops, dtype):
    """op(A) as scipy BSR (A^T through scipy's transpose, still BSR), made before timing."""
    mats = [ops.scipy_a(s.index, dtype) for s in ops.sets]
    return [a.T for a in mats] if ops.case.transpose_a else mats


def _prepare_scipy(fmt: str):
    def prepare(ops, backend, context) -> Prepared:
        case = ops.case
        _blas_dtype(case, f"scipy.sparse {fmt.upper()}")
        mats = _op_scipy(ops, backend.numpy_dtype(case.dtype))
        if fmt == "csr":
            mats = [a.tocsr() for a in mats]
        b = context["b"]
        outs: list = [None] * len(ops.sets)

        def run(i: int) -> None:
            outs[i] = mats[i] @ b[i]

        notes = ["output allocated by each call"] + (["A^T formed before timing"] if case.transpose_a else [])
        return Prepared(run=run, result=lambda i: outs[i], notes=notes)

    return prepare


def mkl_library() -> str:
    """Points sparse_dot_mkl at the `mkl` wheel's libmkl_rt (MKL_RT) unless the caller set one."""
    if os.environ.get("MKL_RT"):
        return os.environ["MKL_RT"]
    from importlib import metadata

    try:
        files = [f for f in metadata.files("mkl") or [] if "libmkl_rt.so" in str(f)]
    except metadata.PackageNotFoundError as e:
        raise Unavailable("the `mkl` package is not installed (pip install mkl sparse_dot_mkl)") from e
    if not files:
        raise Unavailable("the `mkl` package has no libmkl_rt")
    os.environ["MKL_RT"] = str(files[0].locate().resolve())
    return os.environ["MKL_RT"]


def _prepare_mkl(fmt: str):
    def prepare(ops, backend, context) -> Prepared:
        case = ops.case
        _blas_dtype(case, "MKL sparse")
        op_block = (case.block[1], case.block[0]) if case.transpose_a else case.block
        if fmt == "bsr" and op_block[0] != op_block[1]:
            raise Unavailable(f"MKL BSR needs square blocks, this case has {op_block[0]} x {op_block[1]}")
        lib = mkl_library()
        try:
            import sparse_dot_mkl
        except Exception as e:
            raise Unavailable(f"sparse_dot_mkl is not importable ({type(e).__name__}: {e}; MKL_RT={lib})") from e
        mats = _op_scipy(ops, backend.numpy_dtype(case.dtype))
        mats = [a.tocsr() if fmt == "csr" else a.tobsr(blocksize=op_block) for a in mats]
        b = context["b"]
        outs: list = [None] * len(ops.sets)

        def run(i: int) -> None:
            # sparse_dot_mkl leaves a given `out` unwritten when its order differs from B's: let
            # it allocate, as scipy does.
            outs[i] = sparse_dot_mkl.dot_product_mkl(mats[i], b[i])

        notes = [f"MKL threads {sparse_dot_mkl.mkl_get_max_threads()}", "MKL handle built inside each call (sparse_dot_mkl)",
                 "output allocated by each call"]
        return Prepared(run=run, result=lambda i: outs[i],
                        notes=notes + (["A^T formed before timing"] if case.transpose_a else []))

    return prepare


def _prepare_torch(fmt: str):
    def prepare(ops, backend, context) -> Prepared:
        case = ops.case
        _blas_dtype(case, "torch CPU sparse")
        try:
            import torch
        except Exception as e:
            raise Unavailable(f"torch is not importable ({type(e).__name__}: {e})") from e
        op_block = (case.block[1], case.block[0]) if case.transpose_a else case.block
        if fmt == "bsr" and op_block[0] != op_block[1]:
            raise Unavailable(f"torch's CPU BSR product (MKL) needs square blocks, this case has {op_block[0]} x {op_block[1]}")
        dtype = backend.numpy_dtype(case.dtype)
        mats = []
        for a in _op_scipy(ops, dtype):
            a = a.tocsr() if fmt == "csr" else a.tobsr(blocksize=op_block)
            a.sort_indices()
            make = torch.sparse_csr_tensor if fmt == "csr" else torch.sparse_bsr_tensor
            with warnings.catch_warnings():  # "sparse support is in beta": said once per tensor otherwise
                warnings.simplefilter("ignore", UserWarning)
                mats.append(make(torch.from_numpy(a.indptr.astype(np.int64)), torch.from_numpy(a.indices.astype(np.int64)),
                                 torch.from_numpy(np.ascontiguousarray(a.data)), size=a.shape, check_invariants=False))
        b = [torch.from_numpy(x) for x in context["b"]]
        outs: list = [None] * len(ops.sets)

        def run(i: int) -> None:
            outs[i] = (mats[i] @ b[i]).numpy()

        return Prepared(run=run, result=lambda i: outs[i],
                        notes=[f"torch threads {torch.get_num_threads()}", "output allocated by each call"])

    return prepare


def _prepare_numpy(ops, backend, context) -> Prepared:
    case = ops.case
    _blas_dtype(case, "numpy BLAS")
    itemsize = np.dtype(backend.numpy_dtype(case.dtype)).itemsize
    if case.m * case.k * itemsize > DENSE_BYTES_LIMIT or ops.dense_flops > DENSE_FLOP_LIMIT:
        raise Unavailable(f"dense op(A) would take {case.m * case.k * itemsize / 2**30:.1f} GiB and "
                          f"{ops.dense_flops / 1e9:.0f} GFLOP per run (limits {DENSE_BYTES_LIMIT / 2**30:.1f} GiB, "
                          f"{DENSE_FLOP_LIMIT / 1e9:.0f} GFLOP)")
    dense = [backend.array(ops.dense_op_a(s.index, backend.numpy_dtype(case.dtype)), case.dtype) for s in ops.sets]
    b = context["b"]
    outs = [backend.empty((case.m, case.n), case.dtype, case.layout_c) for _ in ops.sets]

    def run(i: int) -> None:
        np.matmul(dense[i], b[i], out=outs[i])

    return Prepared(run=run, result=lambda i: outs[i], poison=lambda i: backend.poison(outs[i]),
                    notes=["op(A) as a dense array", f"BLAS threads: {blas_threads()}"])


def blas_threads() -> str:
    """numpy's BLAS pools and their thread counts, as threadpoolctl reads them."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl not installed)"
    pools = [f"{p.get('internal_api')} {p.get('num_threads')}" for p in threadpool_info() if p.get("user_api") == "blas"]
    return ", ".join(pools) or "none found"


SCIPY_BSR = Implementation(name="scipy.bsr", role="sparse", label="scipy BSR", prepare=_prepare_scipy("bsr"))
SCIPY_CSR = Implementation(name="scipy.csr", role="sparse", label="scipy CSR", prepare=_prepare_scipy("csr"))
MKL_BSR = Implementation(name="mkl.bsr", role="sparse", label="MKL BSR", prepare=_prepare_mkl("bsr"))
MKL_CSR = Implementation(name="mkl.csr", role="sparse", label="MKL CSR", prepare=_prepare_mkl("csr"))
TORCH_CSR = Implementation(name="torch.cpu_csr", role="sparse", label="torch CPU CSR", prepare=_prepare_torch("csr"))
TORCH_BSR = Implementation(name="torch.cpu_bsr", role="sparse", label="torch CPU BSR", prepare=_prepare_torch("bsr"))
NUMPY_DENSE = Implementation(name="numpy.dense", role="dense", label="numpy dense", prepare=_prepare_numpy)
