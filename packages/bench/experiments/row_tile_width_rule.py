"""The 512-wide row tile's wave rule (row_tile_variants.cu, docs/perf-log.md entry 33): for
block 64 at d = 0.25, K = 8192 and several M x N, the untuned pick beside the 512-wide, the
ping-pong and the split 256-wide row tiles forced, each output checked against float64 first
(C poisoned with NaN), then timed as block_shape_sweep.py does.

    python3 packages/bench/experiments/row_tile_width_rule.py      (needs the Python package: gpu-check's python step)
"""
import numpy as np
import torch

import bsrmm
from block_shape_sweep import dense_of, patterns, time_ms

SHAPES = ((8192, 4096), (8192, 512), (8192, 768), (2048, 1024), (4096, 2048))
FORCED = ("rowtile_n512", "rowtile_n256_pingpong", "rowtile_n256")
PREFIX = "sm90_tma_wgmma_f16_b64_"


def main(k=8192, density=0.25):
    for m, n in SHAPES:
        pattern = patterns.generate({"kind": "uniform", "density": density}, m // 64, k // 64, seed=1)
        indptr, indices = pattern.indptr.astype(np.int32), pattern.indices.astype(np.int32)
        vals = (np.random.default_rng(0).standard_normal((len(indices), 64, 64)) * 0.5).astype(np.float16)
        a = bsrmm.BsrMatrix.from_arrays(indptr, indices, vals, (m, k), device="cuda")
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        reference = dense_of(indptr, indices, vals, m, k, 64, 64).double() @ b.double()
        cells = []
        for variant in (None,) + tuple(PREFIX + name for name in FORCED):
            ctx = bsrmm.Context("cuda", tuning="off", variant=variant)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
            bsrmm.matmul(a, b, out=c, context=ctx)
            error = ((c.double() - reference).norm() / reference.norm()).item()
            assert error < 1e-3, f"{variant}: relative error {error:.1e}"
            t = time_ms(lambda: bsrmm.matmul(a, b, out=c, context=ctx))
            label = variant or "default=" + ctx.last_variant
            cells.append(f"{label.replace(PREFIX, '')} {t:.4f}")
        print(f"M {m} N {n}: " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
