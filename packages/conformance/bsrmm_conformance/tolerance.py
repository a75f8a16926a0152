"""How far an output element may lie from the float64 reference: one definition for every
binding, device and dtype (the pairwise comparison between bindings uses it too)."""

from __future__ import annotations

import numpy as np

# Unit roundoff of each storage type, and the type each accumulates in (bsrmm.h: f16 / bf16 /
# f32 accumulate in f32, f64 in f64).
UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "bfloat16": 2.0**-8, "float16": 2.0**-11}
ACCUMULATOR = {"float64": "float64", "float32": "float32", "float16": "float32", "bfloat16": "float32"}
# Headroom over the classic bound: exact f32 on tensor cores is 3xTF32 (products good to about
# 2^-22, not 2^-24), tensor cores may truncate while accumulating, and GELU / SiLU stretch an
# error by up to 1.13x and add their own rounding. A layout or ld mistake is off by O(1).
SAFETY = 8.0


def bound(dtype: str, k: int, magnitude: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Largest |out - ref| allowed per element of C = act(alpha op(A) B + beta C + bias):

        SAFETY * ((k + 2) * u_acc * magnitude + u_out * |reference|)

    where magnitude = |alpha| (|op(A)| |B|) + |beta| |C| + |bias| (float64): the error bound of a
    k-term dot product in the accumulator, two more roundings for the scaling and the additions,
    and one rounding of the result to the output dtype. An element whose magnitude is 0 (an
    empty row, no C, no bias) must be exact."""
    if dtype not in UNIT_ROUNDOFF:
        raise ValueError(f"dtype must be one of {sorted(UNIT_ROUNDOFF)}, got {dtype!r}")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    u_acc = UNIT_ROUNDOFF[ACCUMULATOR[dtype]]
    magnitude = np.asarray(magnitude, dtype=np.float64)
    return SAFETY * ((k + 2) * u_acc * magnitude + UNIT_ROUNDOFF[dtype] * np.abs(np.asarray(reference, dtype=np.float64)))


def excess(out: np.ndarray, ref: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """|out - ref| / allowed per element (<= 1 passes): 0 where both are equal, inf where
    they differ with nothing allowed, or where one is NaN and the other is not; NaN on both
    sides agrees (a NaN reference comes from NaN inputs, which must propagate)."""
    out, ref, allowed = (np.asarray(x, dtype=np.float64) for x in (out, ref, allowed))
    both_nan = np.isnan(out) & np.isnan(ref)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.abs(out - ref)
        ratio = np.where(out == ref, 0.0, diff / allowed)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    return np.where(both_nan, 0.0, ratio)
