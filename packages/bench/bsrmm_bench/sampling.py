"""A suite entry with a `sample` object (cases/README.md, "Sampled entries"): a deterministic,
seeded draw of `count` cases from the cartesian product of its axes, each shrunk to fit the
entry's memory, value and work limits, so a suite can cover a product far too large to run
whole (the coverage suite) and still finish in a bounded time."""

from __future__ import annotations

import math

from . import patterns, prng

STREAM_SAMPLE = 7  # PRNG stream of the sampler's choices (cases/PRNG.md §1)
AXES = ("n", "block", "precision", "rows_log2", "pattern")
_ITEM = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}
# power_law's fullest rows hold every column (PRNG.md §6.3): their shuffles are generated densely,
# one swap step per column, so its draws stay at or below this many block columns.
POWER_LAW_MAX_BLOCK_COLS = 16384


def sample_entry(entry: dict, defaults: dict, where: str) -> list:
    """The entry's sampled cases, in draw order (see the module docstring)."""
    from .cases import _merge, make_case

    spec = entry["sample"]
    base = {k: v for k, v in entry.items() if k != "sample"}
    picked = {}
    for fields in draw(spec, where):
        case = make_case(_merge(_merge(defaults, base), fields), where)
        picked.setdefault(case.id, case)
    return list(picked.values())


def draw(spec: dict, where: str = "sample") -> list[dict]:
    """Case fields for up to spec["count"] distinct draws. Draw i chooses axis j's value with
    bounded(draw(seed, SAMPLE, 8 i + j), len(axis)); the rows (m = k = 2^rows_log2, rounded down
    to a multiple of the block) are then halved until the case fits every limit (and, for
    power_law, POWER_LAW_MAX_BLOCK_COLS), and a draw that cannot fit at the smallest rows is
    dropped. At most 50 * count draws are made."""
    for name in AXES + ("count", "seed"):
        if name not in spec:
            raise ValueError(f"{where}: sample needs {name!r} (axes {AXES}, count, seed, and optional limits)")
    lo, hi = spec["rows_log2"]
    limits = {name: float(spec.get(name, math.inf)) for name in ("max_bytes", "max_values", "max_flops")}
    out, seen = [], set()
    for i in range(50 * spec["count"]):
        if len(out) == spec["count"]:
            break
        choice = [_pick(spec["seed"], i, j, spec[axis]) for j, axis in enumerate(AXES)]
        n, block, precision, _, pattern = choice
        rows_log2 = lo + _index(spec["seed"], i, 3, hi - lo + 1)
        fields = _fit(n, block, precision, pattern, rows_log2, lo, limits)
        if fields is None:
            continue
        key = repr(sorted(fields.items()))
        if key in seen:
            continue
        seen.add(key)
        fields["note"] = f"coverage sample, draw {i}"
        out.append(fields)
    return out


def _index(seed: int, i: int, j: int, size: int) -> int:
    return int(prng.bounded(prng.draw(seed, STREAM_SAMPLE, 8 * i + j), size))


def _pick(seed: int, i: int, j: int, values):
    if not isinstance(values, list) or not values:
        return values  # rows_log2: a [lo, hi] range, drawn separately
    return values[_index(seed, i, j, len(values))]


def _fit(n: int, block, precision: str, pattern: dict, rows_log2: int, lo: int, limits: dict) -> dict | None:
    bh, bw = (block, block) if isinstance(block, int) else block
    dtype, _, mode = precision.partition("-")
    unit = bh * bw // math.gcd(bh, bw)
    for log2 in range(rows_log2, lo - 1, -1):
        rows = (2**log2 // unit) * unit
        if rows == 0:
            return None
        block_rows, block_cols = rows // bh, rows // bw
        spec = dict(pattern)
        per_row = spec.pop("row_blocks", None)
        if per_row is not None:
            spec["density"] = min(1.0, per_row / block_cols)
        if spec["kind"] == "power_law" and block_cols > POWER_LAW_MAX_BLOCK_COLS:
            continue
        nnzb = block_rows * _blocks_per_row(spec, block_rows, block_cols)
        values = nnzb * bh * bw + rows * n
        size = _ITEM[dtype] * (values + rows * n)
        if values <= limits["max_values"] and size <= limits["max_bytes"] and 2 * nnzb * bh * bw * n <= limits["max_flops"]:
            fields = {"m": rows, "k": rows, "n": n, "block": [bh, bw], "dtype": dtype, "pattern": spec}
            if mode:
                fields["f32_mode"] = mode
            return fields
    return None


def _blocks_per_row(spec: dict, block_rows: int, block_cols: int) -> int:
    """Blocks per block row (the most any row has, for the kinds without a fixed count)."""
    kind = spec["kind"]
    if kind in ("uniform", "power_law"):
        return patterns.fixed_count(spec["density"], block_cols)
    if kind == "stencil":
        return spec["points"]
    if kind == "banded":
        return min(block_cols, spec["lower"] + spec["upper"] + 1)
    raise ValueError(f"sample: pattern kind {kind!r} is not sampled (uniform, power_law, stencil, banded)")
