"""cases/vectors.json: test vectors of the PRNG and pattern generators for other languages.
`build()` recomputes them from this implementation; the file is written once (`--write`) and
then only checked, so a change in the Python code that alters any value fails the tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import cases, operands, patterns, prng

VECTORS_PATH = cases.CASES_DIR / "vectors.json"

_DRAW_SEEDS = [0, 1, 42, 2**63 + 5]
_DRAW_STREAMS = [1, 3, 4 + 16]
_DRAW_COUNTERS = [0, 1, 2, 1000, 2**40 + 7]
_PATTERNS = [
    ({"kind": "uniform", "density": 0.3}, 6, 10),
    ({"kind": "bernoulli", "density": 0.3}, 6, 10),
    ({"kind": "power_law", "alpha": 1, "density": 0.25}, 12, 8),
    ({"kind": "power_law", "alpha": 1.5, "density": 0.5}, 9, 6),
    ({"kind": "banded", "lower": 1, "upper": 2}, 5, 7),
    ({"kind": "causal"}, 5, 5),
    ({"kind": "causal", "window": 2}, 5, 5),
    ({"kind": "block_diagonal", "groups": 3}, 6, 9),
]
_OPERAND_CASES = [
    {"m": 4, "k": 6, "n": 3, "block": [2, 3], "dtype": "float16", "pattern": {"kind": "uniform", "density": 0.5}, "seed": 7},
    {"m": 6, "k": 4, "n": 2, "block": 2, "dtype": "bfloat16", "pattern": {"kind": "topk", "density": 0.5}, "seed": 3},
    {"m": 4, "k": 8, "n": 2, "block": [2, 4], "dtype": "float32", "pattern": {"kind": "uniform", "density": 1}, "seed": 11, "transpose_a": True},
]


def build() -> dict:
    draws = []
    for seed in _DRAW_SEEDS:
        for stream in _DRAW_STREAMS:
            u = prng.draw(seed, stream, np.array(_DRAW_COUNTERS, dtype=np.uint64))
            unit = prng.unit_from_u64(u)
            draws.append({
                "seed": str(seed), "stream": stream, "key": str(int(prng.stream_key(seed, stream))),
                "counters": [str(c) for c in _DRAW_COUNTERS],
                "u64": [str(int(x)) for x in u],
                "unit": [float(x) for x in unit],
                "float16_bits": [int(x) for x in unit.astype(np.float16).view(np.uint16)],
                "bfloat16_bits": [int(x) for x in prng.float32_to_bfloat16_bits(unit)],
                "bounded_7": [int(x) for x in prng.bounded(u, 7)],
                "bounded_1000003": [int(x) for x in prng.bounded(u, 1000003)],
                "coin_0.3": [bool(x) for x in prng.coin_below(u, 0.3)],
            })
    rounding = [1.0 / 3.0, -0.7, 2.0**-20, -(2.0**-15) * 1.5, 0.99951171875, 1.0 - 2.0**-23, 0.5 + 2.0**-12]
    pats = []
    for spec, rows, cols in _PATTERNS:
        p = patterns.generate(spec, rows, cols, seed=5)
        pats.append({"pattern": spec, "block_rows": rows, "block_cols": cols, "seed": 5,
                     "indptr": p.indptr.tolist(), "indices": p.indices.tolist()})
    topk = patterns.generate({"kind": "topk", "density": 0.4}, 3, 4, seed=9, block_shape=(2, 3))
    pats.append({"pattern": {"kind": "topk", "density": 0.4}, "block_rows": 3, "block_cols": 4, "block": [2, 3],
                 "seed": 9, "indptr": topk.indptr.tolist(), "indices": topk.indices.tolist()})
    weights = patterns.power_law_weights(6, 2.5)
    ops_vectors = []
    for fields in _OPERAND_CASES:
        case = cases.make_case({**cases._DEFAULTS, **fields})
        ops = operands.build(case)
        ops_vectors.append({
            "case": {k: v for k, v in fields.items()}, "id": case.id,
            "indptr": ops.pattern.indptr.tolist(), "indices": ops.pattern.indices.tolist(),
            "a_values": [float(x) for x in ops.sets[0].data.reshape(-1)],
            "b_values": [float(x) for x in ops.sets[0].b.reshape(-1)],
            "b_set1_first": [float(x) for x in operands.build(case, sets=2).sets[1].b.reshape(-1)[:4]],
        })
    return {
        "about": "Test vectors for cases/PRNG.md. 64-bit integers are decimal strings. Regenerate only "
                 "on purpose: python -m bsrmm_bench vectors --write",
        "mix64": [{"in": str(z), "out": str(int(prng.mix64(np.array([z], dtype=np.uint64))[0]))}
                  for z in (0, 1, 0x9E3779B97F4A7C15, 2**64 - 1)],
        "draws": draws,
        "rounding": [{"value": v,
                      "float16_bits": int(np.array([v], np.float32).astype(np.float16).view(np.uint16)[0]),
                      "bfloat16_bits": int(prng.float32_to_bfloat16_bits(np.array([v], np.float32))[0])}
                     for v in rounding],
        "power_law_weights": {"block_rows": 6, "alpha": 2.5, "weights": [str(int(w)) for w in weights]},
        "apportion": [{"total": t, "weights": w, "cap": c, "counts": patterns.apportion(t, np.array(w), c).tolist()}
                      for t, w, c in ((10, [5, 3, 2], 10), (10, [100, 1, 1, 1], 4), (9, [7, 0, 0], 3), (7, [1, 1, 1], 3))],
        "patterns": pats,
        "operands": ops_vectors,
    }


def write(path: Path = VECTORS_PATH) -> Path:
    path.write_text(json.dumps(build(), indent=1) + "\n")
    return path


def check(path: Path = VECTORS_PATH) -> list[str]:
    """Differences between the file and this implementation (empty when they agree)."""
    expected = json.loads(path.read_text())
    actual = json.loads(json.dumps(build()))
    problems = []
    for key in expected:
        if expected[key] != actual.get(key):
            problems.append(f"vectors.json section {key!r} differs from this implementation")
    return problems
