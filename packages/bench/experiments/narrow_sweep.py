"""The memory-bound cases of the no-cliffs issue: decode-size N on a pruned weight and tiny fp64 /
fp32 blocks, every eligible bsrmm variant forced beside the untuned default and the peers torch
reaches (dense cuBLAS where A fits densely, cuSPARSE BSR and CSR through torch's sparse
matmuls; CSR holds the same matrix expanded).

    python3 packages/bench/experiments/narrow_sweep.py [CASE ...]     CASE: decode, stencil27, stencil9, b8, blocks, large

Every output is checked against a float64 product first (C poisoned with NaN). Times are the
benchmark suite's (bsrmm_bench.timing.time_cuda: warm-ups, then each call between its own CUDA
events; the median), rotating over enough copies of A that A never sits in L2 (the H100's L2
is 50 MB). GB/s counts the bytes that must move: A's values and indices, B, C.
"""
import pathlib
import sys

import numpy as np
import scipy.sparse as sp
import torch

import bsrmm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # packages/bench
from bsrmm_bench import patterns  # noqa: E402
from bsrmm_bench.timing import time_cuda  # noqa: E402

HBM_GBS = 3000.0  # H100 SXM device-to-device copy, measured (PERF.md)
TORCH = {"f16": torch.float16, "f32": torch.float32, "f64": torch.float64}
NUMPY = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def time_ms(calls):
    """Median ms per call, cycling through `calls` (one per copy of A)."""
    return time_cuda(lambda i: calls[i](), len(calls))["median"]


def stencil(nodes_per_side, dims):
    """Block pattern of a 3**dims-point stencil on a nodes_per_side**dims grid (sorted CSR)."""
    n = nodes_per_side
    grid = np.indices((n,) * dims).reshape(dims, -1).T
    rows, cols = [], []
    for offset in np.indices((3,) * dims).reshape(dims, -1).T - 1:
        neighbour = grid + offset
        ok = np.all((neighbour >= 0) & (neighbour < n), axis=1)
        index = np.ravel_multi_index(neighbour[ok].T, (n,) * dims)
        rows.append(np.nonzero(ok)[0])
        cols.append(index)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    pattern = sp.csr_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(n**dims, n**dims))
    pattern.sort_indices()
    return pattern.indptr.astype(np.int32), pattern.indices.astype(np.int32)


def run_case(label, indptr, indices, bh, bw, dtype, widths, dense_peer, copies):
    block_rows, block_cols = len(indptr) - 1, int(indices.max()) + 1 if len(indices) else 1
    m, k = block_rows * bh, block_cols * bw
    nnzb = len(indices)
    rng = np.random.default_rng(0)
    vals = (rng.standard_normal((nnzb, bh, bw)) * 0.5).astype(NUMPY[dtype])
    tdt = TORCH[dtype]
    mats = [bsrmm.BsrMatrix.from_arrays(indptr, indices, vals, (m, k), device="cuda") for _ in range(copies)]
    crow = torch.from_numpy(indptr.astype(np.int64)).cuda()
    col = torch.from_numpy(indices.astype(np.int64)).cuda()
    tvals = torch.from_numpy(vals.astype(np.float64)).cuda()
    # torch's CUDA BSR multiply takes square blocks only: the float64 reference is the CSR form's.
    peers = {}
    if bh == bw:
        peers["cusparse_bsr"] = [torch.sparse_bsr_tensor(crow, col, tvals.to(tdt), (m, k)) for _ in range(copies)]
    csr = sp.bsr_matrix((vals.astype(np.float64), indices, indptr), shape=(m, k)).tocsr()
    csr_parts = (torch.from_numpy(csr.indptr.astype(np.int64)).cuda(), torch.from_numpy(csr.indices.astype(np.int64)).cuda())
    s64 = torch.sparse_csr_tensor(*csr_parts, torch.from_numpy(csr.data).cuda(), (m, k))
    peers["cusparse_csr"] = [torch.sparse_csr_tensor(*csr_parts, torch.from_numpy(csr.data).cuda().to(tdt), (m, k))]
    del csr
    if dense_peer:
        peers["dense_cublas"] = [s64.to_dense().to(tdt) for _ in range(min(copies, 2))]
    a_bytes = nnzb * bh * bw * vals.itemsize + nnzb * 4 + (block_rows + 1) * 4
    elem = torch.empty((), dtype=tdt).element_size()
    for n in widths:
        b = torch.randn(k, n, device="cuda", dtype=torch.float64)
        reference = (s64 @ b).to(torch.float64)
        b = b.to(tdt)
        moved = a_bytes + (k * n + m * n) * elem
        flops = 2.0 * nnzb * bh * bw * n
        tol = {"f16": 2e-2, "bf16": 8e-2, "f32": 1e-4, "f64": 1e-10}[dtype]
        rows = []

        def check(out):
            err = (out.double() - reference).norm() / max(reference.norm().item(), 1e-30)
            return err.item() <= tol, err.item()

        names = [None] + [v for v in bsrmm.variants(kind="matmul") if f"_{dtype}_" in v]
        for variant in names:
            ctx = bsrmm.Context("cuda", tuning="off", variant=variant)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
            try:
                bsrmm.matmul(mats[0], b, out=c, context=ctx)
            except bsrmm.Error:
                continue
            ran = ctx.last_variant
            ok, err = check(c)
            t = time_ms([lambda a=a: bsrmm.matmul(a, b, out=c, context=ctx) for a in mats])
            rows.append(("default: " + ran if variant is None else ran, t, ok, err))
        for peer, objs in peers.items():
            try:
                out = objs[0] @ b
            except RuntimeError as error:
                rows.append((peer + f" (refused: {str(error).splitlines()[0][:60]})", float("nan"), True, 0.0))
                continue
            ok, err = check(out)
            t = time_ms([lambda o=o: o @ b for o in objs])
            rows.append((peer, t, ok, err))
        print(f"\n{label} {dtype} N={n}: M={m} K={k} nnzb={nnzb} blocks {bh}x{bw}, "
              f"bytes to move {moved / 1e6:.1f} MB", flush=True)
        for name, t, ok, err in rows:
            gbs = moved / (t * 1e-3) / 1e9 if t == t else float("nan")
            print(f"  {name:48s} {t:9.4f} ms  {gbs:7.0f} GB/s ({100 * gbs / HBM_GBS:4.0f}% HBM)  "
                  f"{flops / (t * 1e-3) / 1e12 if t == t else float('nan'):7.2f} TFLOPS  "
                  f"{'ok' if ok else 'WRONG'} err {err:.1e}", flush=True)


def main(cases):
    torch.manual_seed(0)
    if "decode" in cases:
        p = patterns.generate({"kind": "uniform", "density": 0.125}, 128, 128, seed=1)
        run_case("8192^2 b64 d0.125", p.indptr.astype(np.int32), p.indices.astype(np.int32), 64, 64,
                 "f16", [1, 2, 4, 8, 16, 32, 64], dense_peer=True, copies=4)
    if "blocks" in cases:
        for b in (16, 32, 128):
            p = patterns.generate({"kind": "uniform", "density": 0.125}, 8192 // b, 8192 // b, seed=1)
            run_case(f"8192^2 b{b} d0.125", p.indptr.astype(np.int32), p.indices.astype(np.int32), b, b,
                     "f16", [1, 16], dense_peer=True, copies=4)
    if "stencil27" in cases:
        indptr, indices = stencil(64, 3)
        for dtype in ("f64", "f32"):
            run_case("27-point 64^3 4x4", indptr, indices, 4, 4, dtype, [1, 16, 64], dense_peer=False, copies=1)
    if "b8" in cases:
        rng = np.random.default_rng(3)
        rows = 65536
        indices = np.sort(np.stack([rng.choice(rows, 27, replace=False) for _ in range(rows)]), axis=1)
        indptr = np.arange(0, 27 * rows + 1, 27, dtype=np.int32)
        run_case("8x8 65536 rows x 27", indptr, indices.ravel().astype(np.int32), 8, 8, "f64", [1, 16],
                 dense_peer=False, copies=1)
    if "large" in cases:  # tiny blocks at large N: lanes along N
        indptr, indices = stencil(32, 3)
        run_case("27-point 32^3 4x4", indptr, indices, 4, 4, "f64", [64, 256], dense_peer=False, copies=1)
        indptr, indices = stencil(1024, 2)
        run_case("9-point 1024^2 1x1 (CSR)", indptr, indices, 1, 1, "f32", [64, 256, 1024], dense_peer=False, copies=1)
        indptr, indices = stencil(256, 2)
        run_case("9-point 256^2 3x3", indptr, indices, 3, 3, "f64", [32, 128], dense_peer=False, copies=1)
        p = patterns.generate({"kind": "uniform", "density": 0.02}, 1024, 1024, seed=1)
        run_case("8192^2 8x8 d0.02", p.indptr.astype(np.int32), p.indices.astype(np.int32), 8, 8, "f32",
                 [128], dense_peer=True, copies=2)
    if "stencil9" in cases:
        indptr, indices = stencil(512, 2)
        run_case("9-point 512^2 3x3", indptr, indices, 3, 3, "f64", [1, 16], dense_peer=False, copies=2)


if __name__ == "__main__":
    main(sys.argv[1:] or ["decode", "blocks", "stencil27", "b8", "stencil9", "large"])
