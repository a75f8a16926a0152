"""The counter-based PRNG of cases/PRNG.md, vectorised with numpy.

Every draw is a pure function of (seed, stream, counter), so any element of any operand can be
regenerated on its own, in any order, by any runner (Python, Rust, Node, C) bit for bit.
Sections of PRNG.md are cited as (PRNG.md §n).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)

# Stream roles (PRNG.md §3). Value streams of rotation set s use role + SET_STRIDE * s.
STREAM_PATTERN = 1
STREAM_ROW_ORDER = 2
STREAM_A = 3
STREAM_B = 4
STREAM_C = 5
STREAM_BIAS = 6
SET_STRIDE = 16

# Elements generated per numpy pass: bounds the temporaries (~8 arrays of 8 bytes each per
# thread). numpy releases the GIL in these ufuncs, so chunks run on several threads.
_CHUNK = 1 << 20
_THREADS = max(1, min(8, os.cpu_count() or 1))


def mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (PRNG.md §1); wraps modulo 2**64."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _MUL1
        z = (z ^ (z >> np.uint64(27))) * _MUL2
    return z ^ (z >> np.uint64(31))


def stream_key(seed: int, stream: int) -> np.uint64:
    """key(seed, stream) = mix64(mix64(seed) XOR stream) (PRNG.md §2)."""
    _check_u64("seed", seed)
    _check_u64("stream", stream)
    inner = mix64(np.array([seed], dtype=np.uint64))
    return mix64(inner ^ np.uint64(stream))[0]


def draw(seed: int, stream: int, counters: np.ndarray | int) -> np.ndarray:
    """draw(seed, stream, i) = mix64(key + GOLDEN * (i + 1)): the i-th SplitMix64 output from state
    key (PRNG.md §2). `counters` is any array of non-negative integers."""
    key = stream_key(seed, stream)
    c = np.asarray(counters, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return mix64(key + GOLDEN * (c + np.uint64(1)))


def draw_range(seed: int, stream: int, start: int, count: int) -> np.ndarray:
    """Draws for counters start, start+1, ..., start+count-1."""
    return draw(seed, stream, np.arange(start, start + count, dtype=np.uint64))


def unit_from_u64(u: np.ndarray) -> np.ndarray:
    """u -> (u >> 40) * 2**-23 - 1, a float in [-1, 1) exact in float32 (PRNG.md §4)."""
    top = (np.asarray(u, dtype=np.uint64) >> np.uint64(40)).astype(np.float64)
    return (top * (2.0**-23) - 1.0).astype(np.float32)


def bounded(u: np.ndarray, n: np.ndarray | int) -> np.ndarray:
    """An integer in [0, n) from a draw: ((u >> 32) * n) >> 32, for 1 <= n <= 2**32 (PRNG.md §5)."""
    hi = np.asarray(u, dtype=np.uint64) >> np.uint64(32)
    return (hi * np.asarray(n, dtype=np.uint64)) >> np.uint64(32)


def coin_below(u: np.ndarray, p: float) -> np.ndarray:
    """True with probability p: (u >> 11) < floor(p * 2**53) (PRNG.md §5)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"probability must lie in [0, 1], got {p}")
    threshold = np.uint64(int(np.floor(p * 2.0**53)))
    return (np.asarray(u, dtype=np.uint64) >> np.uint64(11)) < threshold


def round_to_dtype(values: np.ndarray, dtype: str) -> np.ndarray:
    """Rounds float32-exact draws to `dtype` (PRNG.md §4) and returns them as exact float32
    (float64 for dtype float64): each runner converts these to its own storage type losslessly."""
    x = np.asarray(values, dtype=np.float32)
    if dtype == "float32":
        return x
    if dtype == "float64":
        return x.astype(np.float64)
    if dtype == "float16":
        # numpy's float32 -> float16 cast rounds to nearest, ties to even, subnormals included.
        return x.astype(np.float16).astype(np.float32)
    if dtype == "bfloat16":
        return bfloat16_bits_to_float32(float32_to_bfloat16_bits(x))
    raise ValueError(f"dtype must be one of float32, float64, float16, bfloat16; got {dtype!r}")


def float32_to_bfloat16_bits(x: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even float32 -> bfloat16 bit patterns (finite inputs)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    with np.errstate(over="ignore"):
        return ((bits + rounding) >> np.uint32(16)).astype(np.uint16)


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def values_for_counters(seed: int, stream: int, counters: np.ndarray, dtype: str) -> np.ndarray:
    """Operand values at the given counters, rounded to dtype."""
    flat = np.asarray(counters, dtype=np.uint64).reshape(-1)
    out = np.empty(flat.shape, dtype=np.float64 if dtype == "float64" else np.float32)

    def fill(start: int) -> None:
        part = flat[start : start + _CHUNK]
        out[start : start + part.size] = round_to_dtype(unit_from_u64(draw(seed, stream, part)), dtype)

    _each_chunk(flat.size, fill)
    return out.reshape(np.shape(counters))


def dense_values(seed: int, stream: int, rows: int, cols: int, dtype: str) -> np.ndarray:
    """A rows x cols matrix whose element (i, j) uses counter i * cols + j (PRNG.md §3)."""
    total = rows * cols
    out = np.empty(total, dtype=np.float64 if dtype == "float64" else np.float32)

    def fill(start: int) -> None:
        count = min(_CHUNK, total - start)
        out[start : start + count] = round_to_dtype(unit_from_u64(draw_range(seed, stream, start, count)), dtype)

    _each_chunk(total, fill)
    return out.reshape(rows, cols)


def _each_chunk(total: int, fill) -> None:
    starts = range(0, total, _CHUNK)
    if _THREADS == 1 or total <= _CHUNK:
        for start in starts:
            fill(start)
        return
    with ThreadPoolExecutor(_THREADS) as pool:
        list(pool.map(fill, starts))  # list(): re-raises a worker's exception here


def _check_u64(name: str, value: int) -> None:
    if not isinstance(value, (int, np.integer)) or not 0 <= int(value) < 2**64:
        raise ValueError(f"{name} must be an integer in [0, 2**64), got {value!r}")
