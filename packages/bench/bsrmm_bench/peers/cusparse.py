"""cuSPARSE peers through the C++ harness in packages/bench/peers/cusparse (ctypes): SpMM with
BSR (CUSPARSE_SPMM_BSR_ALG1), Blocked-ELL (CUSPARSE_SPMM_BLOCKED_ELL_ALG1) and the same matrix
expanded to CSR, and the legacy bsrmm / bsrmv (a library of its own). The harness is built with
CMake against the GPU machine's CUDA toolkit on first use."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..backends import Unavailable
from ..impl import Implementation, Prepared

SOURCE_DIR = Path(__file__).resolve().parents[2] / "peers" / "cusparse"
LIB_NAME = "libbsrmm_bench_cusparse.so"
_DTYPE_CODE = {"float32": 0, "float16": 1, "bfloat16": 2, "float64": 3}
_FORMAT_BSR, _FORMAT_BLOCKED_ELL, _FORMAT_CSR, _FORMAT_LEGACY_BSR = 0, 1, 2, 3
# CMake target -> (library file, C prefix of its functions)
_TARGETS = {"bsrmm_bench_cusparse": (LIB_NAME, "bench_cusparse"),
            "bsrmm_bench_cusparse_legacy": ("libbsrmm_bench_cusparse_legacy.so", "bench_cusparse_legacy")}


class _Args(ctypes.Structure):
    """Mirrors bench_cusparse_args in cusparse_peer.h field for field."""

    _fields_ = [
        ("format", ctypes.c_int32), ("dtype", ctypes.c_int32),
        ("rows", ctypes.c_int64), ("cols", ctypes.c_int64), ("n", ctypes.c_int64),
        ("block_height", ctypes.c_int64), ("block_width", ctypes.c_int64),
        ("nnzb", ctypes.c_int64), ("ell_cols", ctypes.c_int64),
        ("row_offsets", ctypes.c_void_p), ("col_indices", ctypes.c_void_p), ("values", ctypes.c_void_p),
        ("b", ctypes.c_void_p), ("ldb", ctypes.c_int64), ("b_col_major", ctypes.c_int32),
        ("c", ctypes.c_void_p), ("ldc", ctypes.c_int64), ("c_col_major", ctypes.c_int32),
        ("stream", ctypes.c_void_p),
    ]


_libs: dict = {}
# Blocked-ELL pads every block row to the longest: beyond this the peer is reported unavailable.
ELL_BYTES_LIMIT = 4 << 30


def build_dir() -> Path:
    """BSRMM_BENCH_BUILD_DIR, else packages/bench/out/build/cusparse (git-ignored)."""
    root = os.environ.get("BSRMM_BENCH_BUILD_DIR")
    return Path(root) / "cusparse" if root else SOURCE_DIR.parents[1] / "out" / "build" / "cusparse"


def library(target: str = "bsrmm_bench_cusparse"):
    """(library, function prefix) of one harness target, configuring and building it first when
    missing or older than its sources."""
    if target in _libs:
        if isinstance(_libs[target], Unavailable):
            raise _libs[target]
        return _libs[target]
    name, prefix = _TARGETS[target]
    out = build_dir()
    lib_path = out / name
    sources = list(SOURCE_DIR.glob("*.cpp")) + list(SOURCE_DIR.glob("*.h")) + [SOURCE_DIR / "CMakeLists.txt"]
    try:
        if not lib_path.exists() or lib_path.stat().st_mtime < max(p.stat().st_mtime for p in sources):
            _build(out, target)
        try:
            lib = ctypes.CDLL(str(lib_path))
        except OSError as e:
            raise Unavailable(f"cuSPARSE harness built but does not load: {e}") from e
    except Unavailable as e:
        _libs[target] = e  # one build attempt per run, not one per case
        raise
    create, run, destroy = (getattr(lib, f"{prefix}_{f}") for f in ("create", "run", "destroy"))
    create.argtypes = [ctypes.POINTER(_Args), ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_size_t]
    create.restype = ctypes.c_int
    run.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    run.restype = ctypes.c_int
    destroy.argtypes = [ctypes.c_void_p]
    destroy.restype = None
    _libs[target] = (create, run, destroy)
    return _libs[target]


def _build(out: Path, target: str) -> None:
    if shutil.which("cmake") is None:
        raise Unavailable("cuSPARSE harness needs cmake to build, and none is on PATH")
    configure = ["cmake", "-S", str(SOURCE_DIR), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja") and not (out / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja"]
    for step in (configure, ["cmake", "--build", str(out), "--target", target]):
        proc = subprocess.run(step, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-6:])
            raise Unavailable(f"cuSPARSE harness target {target} did not build ({' '.join(step[:2])}): {tail}")


class _Handle:
    def __init__(self, lib, args: _Args):
        self.create, self.run_fn, self.destroy = lib
        self.ptr = ctypes.c_void_p()
        err = ctypes.create_string_buffer(1024)
        if self.create(ctypes.byref(args), ctypes.byref(self.ptr), err, len(err)) != 0:
            raise Unavailable(err.value.decode(errors="replace"))
        self.err = err

    def run(self) -> None:
        if self.run_fn(self.ptr, self.err, len(self.err)) != 0:
            raise RuntimeError(self.err.value.decode(errors="replace"))

    def close(self) -> None:
        if self.ptr:
            self.destroy(self.ptr)
            self.ptr = ctypes.c_void_p()


def _dense_args(args: _Args, b, c, case) -> None:
    """B as the case lays it out; C as the output tensor is laid out (its strides say which)."""
    args.b, args.c = b.data_ptr(), c.data_ptr()
    args.b_col_major = int(case.layout_b == "col")
    args.c_col_major = int(case.layout_c == "col") if case.n == 1 else int(c.stride(0) == 1)
    args.ldb = case.k if case.layout_b == "col" else case.n
    args.ldc = case.m if args.c_col_major else case.n


def _op_bsr_host(ops, set_index: int):
    """op(A) as host BSR arrays (transposed through scipy when the case says so)."""
    from .torch_gpu import _op_bsr_arrays

    return _op_bsr_arrays(ops, set_index)


def _prepare(fmt: int):
    def prepare(ops, backend, context) -> Prepared:
        torch = backend.torch
        case = ops.case
        op_block = (case.block[1], case.block[0]) if case.transpose_a else case.block
        if fmt in (_FORMAT_BLOCKED_ELL, _FORMAT_LEGACY_BSR) and op_block[0] != op_block[1]:
            raise Unavailable(f"{'Blocked-ELL' if fmt == _FORMAT_BLOCKED_ELL else 'legacy bsrmm'} needs square blocks, "
                              f"this case has {op_block[0]} x {op_block[1]}")
        if fmt == _FORMAT_LEGACY_BSR and case.dtype not in ("float32", "float64"):
            raise Unavailable(f"legacy bsrmm / bsrmv take float32 and float64, not {case.dtype}")
        if fmt == _FORMAT_CSR and ops.nnzb * op_block[0] * op_block[1] >= 2**31:
            raise Unavailable("the expanded CSR matrix has 2^31 or more elements (32-bit indices)")
        lib = library("bsrmm_bench_cusparse_legacy" if fmt == _FORMAT_LEGACY_BSR else "bsrmm_bench_cusparse")
        stream = torch.cuda.current_stream().cuda_stream
        keep: list = []  # device arrays the handles point into
        handles: list[_Handle] = []
        # bsrmm writes C column-major only (N = 1: a vector, either layout).
        layout_c = "col" if fmt == _FORMAT_LEGACY_BSR and case.n > 1 else case.layout_c
        outs = [backend.empty((case.m, case.n), case.dtype, layout_c) for _ in ops.sets]
        for s, out in zip(ops.sets, outs):
            indptr, indices, data = _op_bsr_host(ops, s.index)
            args = _Args(format=fmt, dtype=_DTYPE_CODE[case.dtype], rows=case.m, cols=case.k, n=case.n,
                         block_height=op_block[0], block_width=op_block[1], nnzb=len(indices),
                         stream=stream)
            if fmt in (_FORMAT_BSR, _FORMAT_LEGACY_BSR, _FORMAT_CSR):
                if fmt == _FORMAT_CSR:
                    csr = sp.bsr_matrix((data, indices, indptr), shape=(case.m, case.k)).tocsr()
                    csr.sort_indices()
                    indptr, indices, data, args.nnzb = csr.indptr, csr.indices, csr.data, csr.nnz
                arrays = [torch.from_numpy(indptr.astype(np.int32)).to(backend.dev),
                          torch.from_numpy(indices.astype(np.int32)).to(backend.dev),
                          backend.array(np.ascontiguousarray(data), case.dtype)]
                args.row_offsets, args.col_indices, args.values = (a.data_ptr() for a in arrays)
            else:
                slots = int(np.diff(indptr).max(initial=1))
                padded = case.m * slots * op_block[1] * np.dtype(data.dtype).itemsize
                if padded > ELL_BYTES_LIMIT:  # skewed rows pad every row to the longest one
                    raise Unavailable(f"Blocked-ELL padding to the longest row ({slots} blocks) would take "
                                      f"{padded / 2**30:.1f} GiB (limit {ELL_BYTES_LIMIT >> 30} GiB)")
                col_ind, values, ell_cols = blocked_ell(indptr, indices, data, case.m)
                arrays = [torch.from_numpy(col_ind).to(backend.dev), backend.array(values, case.dtype)]
                args.col_indices, args.values, args.ell_cols = arrays[0].data_ptr(), arrays[1].data_ptr(), ell_cols
            _dense_args(args, context["b"][s.index], out, case)
            keep.append(arrays)
            try:
                handles.append(_Handle(lib, args))
            except Unavailable:
                for h in handles:
                    h.close()
                raise

        def close() -> None:
            for h in handles:
                h.close()
            keep.clear()

        notes = ["A^T formed before timing"] if case.transpose_a else []
        if fmt == _FORMAT_BLOCKED_ELL:
            notes.append("block rows padded to the longest row")
        if fmt == _FORMAT_CSR:
            notes.append("BSR expanded to CSR before timing")
        if fmt == _FORMAT_LEGACY_BSR:
            notes.append("bsrmv (N = 1)" if case.n == 1 else "bsrmm, C column-major")
        return Prepared(run=lambda i: handles[i].run(), result=lambda i: outs[i],
                        poison=lambda i: backend.poison(outs[i]), notes=notes, close=close)

    return prepare


def blocked_ell(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, rows: int):
    """BSR (square blocks) -> Blocked-ELL: every block row gets `slots` = the longest row's block
    count; column indices int32[block_rows, slots] with -1 for padding, values a row-major
    rows x (slots * b) array with zeros in padding (the layout cuSPARSE reads)."""
    b = data.shape[1]
    block_rows = len(indptr) - 1
    counts = np.diff(indptr)
    slots = max(int(counts.max(initial=0)), 1)
    col_ind = np.full((block_rows, slots), -1, dtype=np.int32)
    values = np.zeros((block_rows, b, slots, b), dtype=data.dtype)
    row_of = np.repeat(np.arange(block_rows), counts)
    slot_of = np.arange(len(indices)) - indptr[row_of]
    col_ind[row_of, slot_of] = indices
    values[row_of, :, slot_of, :] = data
    return col_ind, values.reshape(rows, slots * b), slots * b


BSR = Implementation(name="cusparse.bsr", role="sparse", label="cuSPARSE BSR", prepare=_prepare(_FORMAT_BSR))
BLOCKED_ELL = Implementation(name="cusparse.blocked_ell", role="sparse", label="cuSPARSE Blocked-ELL",
                             prepare=_prepare(_FORMAT_BLOCKED_ELL))
CSR = Implementation(name="cusparse.csr", role="sparse", label="cuSPARSE CSR", prepare=_prepare(_FORMAT_CSR))
LEGACY_BSRMM = Implementation(name="cusparse.bsrmm", role="sparse", label="cuSPARSE bsrmm/bsrmv",
                              prepare=_prepare(_FORMAT_LEGACY_BSR))
