"""f64 on the DMMA tensor cores (sm80_f64_*_dmma884, docs/perf-log.md entry 48): every f64 variant
forced beside the untuned default, generic_f64_simt and the peers torch reaches (cuSPARSE BSR and
CSR, dense cuBLAS DGEMM), on the coverage suite's worst f64 cell and the entry's other predictions.

    python3 packages/bench/experiments/f64_dmma_probe.py [CASE ...]    CASE: stencil7, b16, b64, rect

Cuts narrow_sweep.py's measurement (run_case: outputs checked against float64 with C poisoned
with NaN first, then timed as the suite times, rotating copies of A); cuSPARSE Blocked-ELL, the
coverage run's peer for the stencil cell, is in the suite:
`python -m bsrmm_bench run --suite coverage --filter 'float64_16384x16384x1024_b32x32'`.
"""
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # narrow_sweep, beside this file
from narrow_sweep import patterns, run_case  # noqa: E402


def uniform(side, block, density, seed=1):
    p = patterns.generate({"kind": "uniform", "density": density}, side // block, side // block, seed=seed)
    return p.indptr.astype(np.int32), p.indices.astype(np.int32)


def main(cases):
    if "stencil7" in cases:
        # The coverage run's worst cell: 16384^2, 32 x 32 blocks, 3-D 7-point stencil on 8^3 nodes.
        p = patterns.generate({"kind": "stencil", "dims": 3, "points": 7}, 512, 512, seed=1)
        run_case("16384^2 b32 7-point", p.indptr.astype(np.int32), p.indices.astype(np.int32), 32, 32, "f64",
                 [16, 256, 1024], dense_peer=True, copies=2)
    if "b16" in cases:
        indptr, indices = uniform(8192, 16, 0.125)
        run_case("8192^2 b16 d0.125", indptr, indices, 16, 16, "f64", [256, 4096], dense_peer=True, copies=2)
    if "b64" in cases:
        indptr, indices = uniform(8192, 64, 0.125)
        run_case("8192^2 b64 d0.125", indptr, indices, 64, 64, "f64", [256, 4096], dense_peer=True, copies=2)
    if "rect" in cases:
        p = patterns.generate({"kind": "uniform", "density": 0.125}, 8192 // 64, 8192 // 32, seed=1)
        run_case("8192^2 b64x32 d0.125", p.indptr.astype(np.int32), p.indices.astype(np.int32), 64, 32, "f64",
                 [1024], dense_peer=True, copies=2)


if __name__ == "__main__":
    main(sys.argv[1:] or ["stencil7", "b16", "b64", "rect"])
