"""Two bsrmm builds side by side on the CPU's tiny-block cells (docs/perf-log.md entry 88): the
coverage suite's f32 / f64 1x1 - 4x4 stencils, bands and sparse rows at N 2-256, forced
cpu_rowwise_simd and the untuned pick, with MKL's CSR multiply (sparse_dot_mkl) beside them.

    python3 cpu_tiny_block_ab.py cases OUT.json          # time every cell once, in this interpreter
    python3 cpu_tiny_block_ab.py ab PY_A PY_B [ROUNDS]   # alternate two interpreters ROUNDS times

`ab` runs `cases` in each interpreter in turn (A, B, A, B, ...) so a noisy machine's drift hits
both builds alike, then prints each cell's best median per build and their ratio. Every output is
checked against float64 (C poisoned) before it is timed. Needs numpy, scipy; MKL is optional
(`pip install mkl sparse_dot_mkl`).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# (name, rows, block, N, dtype, pattern): pattern is ("stencil", dims, points), ("banded", l, u)
# or ("uniform", blocks a row).
CELLS = [
    ("f32 1x1 stencil 2-D 9pt N16", 65536, 1, 16, "float32", ("stencil", 2, 9)),
    ("f32 1x1 stencil 3-D 7pt N16", 32768, 1, 16, "float32", ("stencil", 3, 7)),
    ("f32 1x1 uniform 4/row N128", 8192, 1, 128, "float32", ("uniform", 4)),
    ("f32 1x1 banded N2", 16384, 1, 2, "float32", ("banded", 1, 1)),
    ("f32 2x2 banded N128", 16384, 2, 128, "float32", ("banded", 1, 1)),
    ("f32 2x2 banded N16", 16384, 2, 16, "float32", ("banded", 1, 1)),
    ("f32 4x4 stencil 2-D 9pt N64", 16384, 4, 64, "float32", ("stencil", 2, 9)),
    ("f64 1x1 stencil 2-D 9pt N16", 65536, 1, 16, "float64", ("stencil", 2, 9)),
    ("f64 2x2 stencil 3-D 7pt N128", 8192, 2, 128, "float64", ("stencil", 3, 7)),
    ("f64 3x3 stencil 2-D 9pt N16", 12288, 3, 16, "float64", ("stencil", 2, 9)),
    ("f32 2x2 banded N20 (masked tail)", 16384, 2, 20, "float32", ("banded", 1, 1)),
]


def pattern_of(kind, block_rows):
    from bsrmm_bench import patterns

    if kind[0] == "stencil":
        return patterns.stencil(block_rows, block_rows, kind[1], kind[2])
    if kind[0] == "banded":
        return patterns.banded(block_rows, block_rows, kind[1], kind[2])
    rng = np.random.default_rng(7)
    indices = np.sort(np.stack([rng.choice(block_rows, kind[1], replace=False) for _ in range(block_rows)]), axis=1)
    indptr = np.arange(0, block_rows * kind[1] + 1, kind[1])
    return patterns.Pattern(block_rows, block_rows, indptr, indices.reshape(-1))


def median_ms(run, budget_s=0.4):
    run()
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < budget_s and len(times) < 200):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e3


def time_cases(out_path):
    import bsrmm
    import scipy.sparse as sp

    try:
        from bsrmm_bench.peers.cpu import mkl_library

        mkl_library()
        import sparse_dot_mkl
    except Exception:  # MKL is a reference only
        sparse_dot_mkl = None
    results = {}
    for name, rows, block, n, dtype, kind in CELLS:
        pattern = pattern_of(kind, rows // block)
        rng = np.random.default_rng(1)
        data = rng.uniform(-1, 1, (pattern.nnzb, block, block)).astype(dtype)
        a = sp.bsr_matrix((data, pattern.indices, pattern.indptr), shape=(rows, rows))
        b = rng.uniform(-1, 1, (rows, n)).astype(dtype)
        want = a.astype(np.float64) @ b.astype(np.float64)
        matrix = bsrmm.BsrMatrix.from_scipy(a)
        cell = {}
        for label, variant in (("rowwise", "cpu_rowwise_simd"), ("untuned", None)):
            context = bsrmm.Context("cpu", variant=variant, tuning="off")
            out = np.full((rows, n), np.nan, dtype)
            bsrmm.matmul(matrix, b, out=out, context=context)
            error = np.abs(out - want).max() / max(1.0, np.abs(want).max())
            assert error < (1e-12 if dtype == "float64" else 1e-5), f"{name} {label}: error {error}"
            cell[label] = median_ms(lambda: bsrmm.matmul(matrix, b, out=out, context=context))
        if sparse_dot_mkl is not None:
            csr = a.tocsr()
            cell["mkl_csr"] = median_ms(lambda: sparse_dot_mkl.dot_product_mkl(csr, b))
        results[name] = cell
    Path(out_path).write_text(json.dumps(results))


def alternate(python_a, python_b, rounds):
    best = {"A": {}, "B": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for r in range(rounds):
            for side, python in (("A", python_a), ("B", python_b)):
                out = Path(scratch) / f"{side}{r}.json"
                subprocess.run([python, __file__, "cases", str(out)], check=True)
                for name, cell in json.loads(out.read_text()).items():
                    for label, ms in cell.items():
                        key = (name, label)
                        best[side][key] = min(ms, best[side].get(key, float("inf")))
    print(f"{'cell':34s} {'label':8s} {'A ms':>8s} {'B ms':>8s} {'B/A':>6s}")
    for key in best["A"]:
        a, b = best["A"][key], best["B"].get(key, float("nan"))
        print(f"{key[0]:34s} {key[1]:8s} {a:8.3f} {b:8.3f} {b / a:6.2f}")


if __name__ == "__main__":
    if sys.argv[1] == "cases":
        time_cases(sys.argv[2])
    else:
        alternate(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 3)
