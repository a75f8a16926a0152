"""Smoke test of an installed bsrmm wheel, run by wheel.ts with `python -I` in a fresh venv
(outside the workspace) holding only the wheel and numpy.

    python -I wheel_smoke.py --version X.Y.Z (--cuda | --no-cuda)

Fresh random operands each run (the seed is printed), the output poisoned with NaN first, every
element checked against a float64 product within a bound derived from the storage precision.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

import bsrmm


def random_bsr(rng: np.random.Generator, shape: tuple[int, int], blocks: tuple[int, int], dtype) -> np.ndarray:
    """A dense array whose nonzeros form a random block pattern (about 40 % of the blocks)."""
    grid = (shape[0] // blocks[0], shape[1] // blocks[1])
    mask = rng.random(grid) < 0.4
    mask[0, 0] = True
    dense = rng.standard_normal(shape) * np.kron(mask, np.ones(blocks))
    return dense.astype(dtype)


def bound(a: np.ndarray, b: np.ndarray, ref: np.ndarray, accumulate) -> np.ndarray:
    """Rounding bound per element: the accumulation's (K terms) plus the final rounding to the output type."""
    k = a.shape[1]
    magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    return 2 * k * np.finfo(accumulate).eps * magnitude + np.finfo(a.dtype).eps * np.abs(ref) + 1e-30


def expect_close(what: str, got: np.ndarray, ref: np.ndarray, limit: np.ndarray) -> None:
    error = np.abs(got.astype(np.float64) - ref)
    bad = ~(error <= limit)  # NaN (a poisoned element never written) counts as bad
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise SystemExit(f"wheel_smoke: {what}: {int(bad.sum())} of {bad.size} elements wrong, first at {i}: "
                         f"got {got[i]!r}, want {ref[i]!r} (bound {limit[i]:.3g})")
    print(f"wheel_smoke: {what}: {got.size} elements, max |error| {error.max():.3g}")


def check_installation(version: str, cuda: bool) -> None:
    location = Path(bsrmm.__file__).resolve()
    if not location.is_relative_to(Path(sys.prefix).resolve()):
        raise SystemExit(f"wheel_smoke: imported bsrmm from {location}, not from the venv {sys.prefix}")
    if bsrmm.__version__ != version or bsrmm.core_version() != version:
        raise SystemExit(f"wheel_smoke: version {bsrmm.__version__} (core {bsrmm.core_version()}), expected {version}")
    variants = bsrmm.variants()
    reason = bsrmm.cuda_unavailable_reason()
    if cuda:
        families = {prefix for prefix in ("sm90_", "sm80_") if any(v.startswith(prefix) for v in variants)}
        if families != {"sm90_", "sm80_"}:
            raise SystemExit(f"wheel_smoke: a CUDA wheel without its sm90/sm80 kernel variants: {variants}")
    elif reason is None or "no CUDA kernels" not in reason:
        raise SystemExit(f"wheel_smoke: a CPU-only wheel must say so at run time; cuda_unavailable_reason() = {reason!r}")
    print(f"wheel_smoke: bsrmm {version} from {location.parent}; {len(variants)} variants; "
          f"CUDA: {'available' if reason is None else reason}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True)
    parser.add_argument("--cuda", action=argparse.BooleanOptionalAction, required=True)
    args = parser.parse_args()
    check_installation(args.version, args.cuda)

    seed = int.from_bytes(os.urandom(4), "little")
    print(f"wheel_smoke: seed {seed}")
    rng = np.random.default_rng(seed)

    # C = A @ B into a NaN-poisoned output (beta = 0 must not read it), rectangular blocks.
    a = random_bsr(rng, (96, 80), (16, 8), np.float32)
    b = rng.standard_normal((80, 24)).astype(np.float32)
    out = np.full((96, 24), np.nan, np.float32)
    bsrmm.matmul(bsrmm.BsrMatrix.from_dense(a, (16, 8)), b, out=out)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    expect_close("f32 A @ B, blocks 16x8", out, ref, bound(a, b, ref, np.float32))

    # C = alpha * A^T @ B + beta * C, column-major B, float64.
    a = random_bsr(rng, (64, 48), (4, 4), np.float64)
    b = np.asfortranarray(rng.standard_normal((64, 20)))
    c0 = rng.standard_normal((48, 20))
    c = c0.copy()
    ref = 0.5 * a.T @ b + 2.0 * c0
    bsrmm.matmul(bsrmm.BsrMatrix.from_dense(a, (4, 4)), b, out=c, transpose_a=True, alpha=0.5, beta=2.0)
    scaling = 4 * np.finfo(np.float64).eps * (np.abs(ref) + 2 * np.abs(c0))  # alpha, beta and the sum
    expect_close("f64 0.5 A^T @ B + 2 C, blocks 4x4", c, ref, bound(a.T, b, ref, np.float64) + scaling)

    # float16 storage, float32 accumulation.
    a = random_bsr(rng, (64, 64), (32, 32), np.float16)
    b = rng.standard_normal((64, 16)).astype(np.float16)
    out = np.full((64, 16), np.nan, np.float16)
    bsrmm.matmul(bsrmm.BsrMatrix.from_dense(a, (32, 32)), b, out=out)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    expect_close("f16 A @ B, blocks 32x32", out, ref, bound(a, b, ref, np.float32))

    # Bad input is a clear error naming the rule, not a crash.
    try:
        bsrmm.matmul(bsrmm.BsrMatrix.from_dense(a, (32, 32)), np.ones((65, 16), np.float16))
    except bsrmm.InvalidArgumentError as error:
        print(f"wheel_smoke: wrong B shape -> InvalidArgumentError: {error}")
    else:
        raise SystemExit("wheel_smoke: a 65-row B for a 64-column A was accepted")
    print("wheel_smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
