"""STK (stanford-stk, MegaBlocks' block-sparse Triton kernels; square 128 x 128 blocks, fp16 /
bf16, CUDA) as a peer. It is not a dependency: `experiments/stage-stk.sh` unpacks its PyPI sdist
into `.carry/stk/` at the repo root (or BSRMM_BENCH_STK_PATH names a folder holding `stk/`), and
`load()` puts that folder on sys.path. Nothing from STK is copied here: this file converts our
BSR arrays into the metadata stk.Matrix takes and calls stk.ops.dsd / dds / sdd.

STK's Matrix: `data` (nnzb, b, b), `row_indices` and `column_indices` (int16, one per block, in
row-major block order: our BSR order), `offsets` (int32, = indptr), and for the transposed view
`column_indices_t` (the block rows, ordered by block column), `offsets_t` (int32, the column
pointer) and `block_offsets_t` (int32, position in `data` of each block in column order)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from ..backends import Unavailable
from ..impl import Implementation, Prepared

# STK's kernels are compiled for one block size (TritonConfig.BLOCK_SIZE) and tile M and N by 128.
STK_BLOCK = 128
STK_TILE = 128
STK_DTYPES = ("float16", "bfloat16")
_REPO_ROOT = Path(__file__).resolve().parents[4]
CARRY_PATH = _REPO_ROOT / ".carry" / "stk"
ENV_PATH = "BSRMM_BENCH_STK_PATH"


def search_path() -> Path | None:
    """The folder holding the `stk/` package: $BSRMM_BENCH_STK_PATH, else .carry/stk when staged."""
    named = os.environ.get(ENV_PATH)
    if named:
        return Path(named)
    return CARRY_PATH if (CARRY_PATH / "stk" / "__init__.py").is_file() else None


def load():
    """`import stk` (from the staged folder first, else wherever Python finds it), or Unavailable
    with the reason and how to stage it."""
    folder = search_path()
    if folder is not None and str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    try:
        import stk
        import stk.ops  # noqa: F401  (dsd / dds / sdd)
    except Exception as e:  # ImportError, or triton missing / broken underneath
        where = f"{folder}" if folder else f"{CARRY_PATH} (not staged) nor ${ENV_PATH}"
        raise Unavailable(f"STK is not importable from {where}: {type(e).__name__}: {e}; stage it with "
                          f"packages/bench/experiments/stage-stk.sh (needs PyPI) and carry .carry") from e
    return stk


def why_not(block: tuple[int, int], dtype: str, device: str, dims: tuple[int, ...] = ()) -> str | None:
    """None where STK's kernels apply, else why not (checked before importing it)."""
    if device != "cuda":
        return "STK runs only on CUDA (Triton kernels)"
    if tuple(block) != (STK_BLOCK, STK_BLOCK):
        return f"STK's kernels take {STK_BLOCK} x {STK_BLOCK} blocks only; this case: {block[0]} x {block[1]}"
    if dtype not in STK_DTYPES:
        return f"STK computes in float16 / bfloat16; this case: {dtype}"
    odd = [d for d in dims if d % STK_TILE]
    if odd:
        return f"STK's kernels tile every dimension by {STK_TILE}; this case has {odd[0]}"
    return None


def metadata(indptr: np.ndarray, indices: np.ndarray, block_columns: int) -> dict[str, np.ndarray]:
    """STK's index arrays for the BSR pattern (indptr, indices) of a matrix `block_columns` blocks
    wide, blocks in BSR order. The column order of the transposed view is a stable sort of the
    block columns (row order kept within a column)."""
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    cols = int(block_columns)
    if max(indptr.size - 1, cols) > np.iinfo(np.int16).max:
        raise Unavailable(f"STK stores block indices in int16: {max(indptr.size - 1, cols)} block rows or columns is too many")
    by_column = np.argsort(indices, kind="stable")
    return {
        "row_indices": rows.astype(np.int16),
        "column_indices": indices.astype(np.int16),
        "offsets": indptr.astype(np.int32),
        "column_indices_t": rows[by_column].astype(np.int16),
        "offsets_t": np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=cols))]).astype(np.int32),
        "block_offsets_t": by_column.astype(np.int32),
    }


def matrix(stk, shape: tuple[int, int], indptr: np.ndarray, indices: np.ndarray, data):
    """An stk.Matrix of `shape` holding `data` (a torch tensor (nnzb, b, b) on its device) with
    the BSR pattern (indptr, indices)."""
    import torch

    meta = metadata(indptr, indices, shape[1] // data.shape[-1])
    t = {k: torch.from_numpy(v).to(data.device) for k, v in meta.items()}
    return stk.Matrix(torch.Size(shape), data, t["row_indices"], t["column_indices"], t["offsets"],
                      t["column_indices_t"], t["offsets_t"], t["block_offsets_t"])


def _prepare_dsd(ops, backend, context) -> Prepared:
    """The grid / shapes peer: C = op(A) B through stk.ops.dsd, op(A) = A or STK's transposed view
    of A (no A^T formed)."""
    case = ops.case
    reason = why_not(case.block, case.dtype, backend.device, (case.m, case.k, case.n))
    if reason:
        raise Unavailable(reason)
    stk = load()
    rows, cols = case.stored_shape
    mats = [matrix(stk, (rows, cols), ops.pattern.indptr, ops.pattern.indices,
                   backend.array(np.ascontiguousarray(s.data, dtype=np.float32), case.dtype)) for s in ops.sets]
    ops_a = [m.t() if case.transpose_a else m for m in mats]
    b = context["b"]
    outs: list = [None] * len(ops.sets)

    def run(i: int) -> None:
        outs[i] = stk.ops.dsd(ops_a[i], b[i])

    notes = ["stk.ops.dsd, output row-major, allocated by each call"] + (
        ["A^T as STK's transposed view"] if case.transpose_a else [])
    return Prepared(run=run, result=lambda i: outs[i], notes=notes)


STK_DSD = Implementation(name="stk.dsd", role="sparse", label="STK dsd", prepare=_prepare_dsd)
