"""Loads the suites of cases/*.json, expands their `vary` lists and validates every case
(the format is documented in cases/README.md; other runners implement the same rules)."""

from __future__ import annotations

import copy
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path

from .patterns import PATTERN_KINDS

CASES_DIR = Path(__file__).resolve().parent.parent / "cases"
DTYPES = ("float32", "float16", "bfloat16", "float64")
DEVICES = ("cpu", "cuda")
ACTIVATIONS = ("none", "relu", "gelu", "silu")

# Relative Frobenius error allowed against the float64 reference (PERF.md, "How to measure").
TOLERANCE = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-5, "tf32": 1e-3, "float64": 1e-12}

_DEFAULTS = {
    "f32_mode": "exact",
    "layout_b": "row",
    "layout_c": "row",
    "transpose_a": False,
    "seed": 1,
    "devices": ["cpu", "cuda"],
    # The rest of C = activation(alpha * op(A) B + beta * C + bias) and the leading dimensions
    # (minimum + pad): the conformance suite varies them; benchmark cases keep these defaults.
    "alpha": 1,
    "beta": 0,
    "bias": False,
    "activation": "none",
    "pad_b": 0,
    "pad_c": 0,
}
_FIELDS = {"m", "k", "n", "block", "dtype", "pattern", "note"} | set(_DEFAULTS)


@dataclass(frozen=True)
class Case:
    id: str
    m: int
    k: int
    n: int
    block: tuple[int, int]
    dtype: str
    f32_mode: str
    layout_b: str
    layout_c: str
    transpose_a: bool
    pattern: dict
    seed: int
    devices: tuple[str, ...]
    note: str = ""
    alpha: float = 1
    beta: float = 0
    bias: bool = False
    activation: str = "none"
    pad_b: int = 0
    pad_c: int = 0

    @property
    def stored_shape(self) -> tuple[int, int]:
        """Shape of A as stored: op(A) is m x k, so A itself is k x m when transposed."""
        return (self.k, self.m) if self.transpose_a else (self.m, self.k)

    @property
    def block_grid(self) -> tuple[int, int]:
        rows, cols = self.stored_shape
        return rows // self.block[0], cols // self.block[1]

    @property
    def precision(self) -> str:
        """dtype, or "tf32" for float32 run in the tensor cores' tf32 mode."""
        return "tf32" if self.dtype == "float32" and self.f32_mode == "tf32" else self.dtype

    @property
    def tolerance(self) -> float:
        return TOLERANCE[self.precision]

    @property
    def ld_b(self) -> int:
        """B's leading dimension: its minimum for the layout, plus pad_b."""
        return (self.n if self.layout_b == "row" else self.k) + self.pad_b

    @property
    def ld_c(self) -> int:
        return (self.n if self.layout_c == "row" else self.m) + self.pad_c

    @property
    def is_plain_product(self) -> bool:
        """C = op(A) B with packed operands: what the benchmark times (every peer computes it)."""
        return (self.alpha, self.beta, self.bias, self.activation, self.pad_b, self.pad_c) == (1, 0, False, "none", 0, 0)

    def to_json(self) -> dict:
        return {
            "id": self.id, "m": self.m, "k": self.k, "n": self.n, "block": list(self.block),
            "dtype": self.dtype, "f32_mode": self.f32_mode, "layout_b": self.layout_b,
            "layout_c": self.layout_c, "transpose_a": self.transpose_a, "pattern": self.pattern,
            "seed": self.seed, "devices": list(self.devices), "note": self.note,
            "alpha": self.alpha, "beta": self.beta, "bias": self.bias, "activation": self.activation,
            "pad_b": self.pad_b, "pad_c": self.pad_c,
        }


# Files of cases/ that are not product suites: the PRNG's test vectors, and the training and fp8
# suites (cases of their own kinds: ops, MLP steps, a training run, fp8 products; loaded and run
# by training/).
NOT_PRODUCT_SUITES = ("vectors", "training", "fp8")


def available_suites(cases_dir: Path = CASES_DIR) -> list[str]:
    """The product suites (C = op(A) B cases) in cases_dir."""
    return sorted(p.stem for p in cases_dir.glob("*.json") if p.stem not in NOT_PRODUCT_SUITES)


def load_suite(name: str, cases_dir: Path = CASES_DIR) -> list[Case]:
    """The suite's cases in file order (included suites first), duplicates (same id) dropped."""
    seen: dict[str, Case] = {}
    for case in _load(name, cases_dir, stack=()):
        seen.setdefault(case.id, case)
    return list(seen.values())


def _load(name: str, cases_dir: Path, stack: tuple[str, ...]) -> list[Case]:
    if name in stack:
        raise ValueError(f"suite {name!r} includes itself through {' -> '.join(stack)}")
    path = cases_dir / f"{name}.json"
    if not path.is_file():
        known = ", ".join(available_suites(cases_dir))
        raise ValueError(f"no suite {name!r} (no {path}); known suites: {known}")
    doc = json.loads(path.read_text())
    cases: list[Case] = []
    for included in doc.get("include", []):
        cases += _load(included, cases_dir, stack + (name,))
    defaults = {**_DEFAULTS, **doc.get("defaults", {})}
    for position, entry in enumerate(doc.get("cases", [])):
        where = f"{path.name}: cases[{position}]"
        if "sample" in entry:
            from . import sampling

            cases += sampling.sample_entry(entry, defaults, where)
            continue
        for fields in expand_entry(entry, where):
            cases.append(make_case(_merge(defaults, fields), where))
    return cases


def expand_entry(entry: dict, where: str = "entry") -> list[dict]:
    """The cartesian product of entry["vary"] ([[path, [values...]], ...], first path outermost)
    applied to the entry's own fields; a path like "pattern.density" sets a nested field."""
    base = {key: value for key, value in entry.items() if key != "vary"}
    vary = entry.get("vary", [])
    if not isinstance(vary, list) or not all(
        isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], list) for v in vary
    ):
        raise ValueError(f"{where}: vary must be a list of [field path, [values...]] pairs")
    paths = [v[0] for v in vary]
    out = []
    for values in itertools.product(*[v[1] for v in vary]):
        fields = copy.deepcopy(base)
        for path, value in zip(paths, values):
            _set_path(fields, path, copy.deepcopy(value))
        out.append(fields)
    return out


def make_case(fields: dict, where: str = "case") -> Case:
    """Validates one fully merged case and derives its id (cases/README.md, "Case ids")."""
    unknown = set(fields) - _FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}; known: {sorted(_FIELDS)}")
    for name in ("m", "k", "n"):
        _require(isinstance(fields.get(name), int) and fields[name] >= 1, where, f"{name} must be a positive integer")
    block = fields.get("block")
    if isinstance(block, int):
        block = [block, block]
    _require(
        isinstance(block, list) and len(block) == 2 and all(isinstance(b, int) and b >= 1 for b in block),
        where, "block must be a positive integer or [height, width]",
    )
    dtype = fields.get("dtype")
    _require(dtype in DTYPES, where, f"dtype must be one of {DTYPES}, got {dtype!r}")
    _require(fields["f32_mode"] in ("exact", "tf32"), where, "f32_mode must be 'exact' or 'tf32'")
    _require(fields["f32_mode"] == "exact" or dtype == "float32", where, "f32_mode 'tf32' applies to float32 only")
    for name in ("layout_b", "layout_c"):
        _require(fields[name] in ("row", "col"), where, f"{name} must be 'row' or 'col'")
    _require(isinstance(fields["transpose_a"], bool), where, "transpose_a must be true or false")
    _require(isinstance(fields["seed"], int) and 0 <= fields["seed"] < 2**63, where, "seed must be an integer in [0, 2**63)")
    devices = fields["devices"]
    _require(isinstance(devices, list) and devices and all(d in DEVICES for d in devices), where,
             f"devices must be a non-empty list of {DEVICES}")
    pattern = fields.get("pattern")
    _require(isinstance(pattern, dict) and pattern.get("kind") in PATTERN_KINDS, where,
             f"pattern.kind must be one of {PATTERN_KINDS}")
    pattern = {key: _canonical_number(value) for key, value in pattern.items()}
    for name in ("alpha", "beta"):
        value = fields[name]
        _require(isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value), where,
                 f"{name} must be a finite number")
    _require(isinstance(fields["bias"], bool), where, "bias must be true or false")
    _require(fields["activation"] in ACTIVATIONS, where, f"activation must be one of {ACTIVATIONS}")
    for name in ("pad_b", "pad_c"):
        _require(isinstance(fields[name], int) and not isinstance(fields[name], bool) and fields[name] >= 0, where,
                 f"{name} must be a non-negative integer")
    m, k = fields["m"], fields["k"]
    rows, cols = (k, m) if fields["transpose_a"] else (m, k)
    _require(rows % block[0] == 0 and cols % block[1] == 0, where,
             f"stored A ({rows} x {cols}) must be divisible by the block {block[0]} x {block[1]}")
    case = Case(
        id="", m=m, k=k, n=fields["n"], block=(block[0], block[1]), dtype=dtype,
        f32_mode=fields["f32_mode"], layout_b=fields["layout_b"], layout_c=fields["layout_c"],
        transpose_a=fields["transpose_a"], pattern=pattern, seed=fields["seed"],
        devices=tuple(devices), note=str(fields.get("note", "")),
        alpha=_canonical_number(fields["alpha"]), beta=_canonical_number(fields["beta"]), bias=fields["bias"],
        activation=fields["activation"], pad_b=fields["pad_b"], pad_c=fields["pad_c"],
    )
    return Case(**{**case.__dict__, "id": case_id(case)})


# Pattern parameters in the order they appear in a case id (cases/README.md).
_ID_PARAMS = {
    "uniform": ("density",), "bernoulli": ("density",), "power_law": ("alpha", "density"),
    "banded": ("lower", "upper"), "causal": ("window",), "block_diagonal": ("groups",), "topk": ("density",),
    "stencil": ("dims", "points"),
}
_ID_LETTER = {"density": "d", "alpha": "a", "lower": "l", "upper": "u", "window": "w", "groups": "g", "dims": "D", "points": "p"}


def case_id(case: Case) -> str:
    """e.g. "float16_8192x8192x4096_b64x64_uniform-d0.125_rr_s1" (cases/README.md)."""
    precision = case.dtype + ("-tf32" if case.precision == "tf32" else "")
    parts = [case.pattern["kind"]]
    for name in _ID_PARAMS[case.pattern["kind"]]:
        if name in case.pattern:
            parts.append(_ID_LETTER[name] + _number(case.pattern[name]))
    layouts = case.layout_b[0] + case.layout_c[0]
    pieces = [precision, f"{case.m}x{case.k}x{case.n}", f"b{case.block[0]}x{case.block[1]}", "-".join(parts), layouts]
    if case.transpose_a:
        pieces.append("tA")
    pieces.append(f"s{case.seed}")
    # Conformance fields, only where they differ from a plain product (benchmark ids stay as they were).
    if case.alpha != 1:
        pieces.append(f"alpha{_number(case.alpha)}")
    if case.beta != 0:
        pieces.append(f"beta{_number(case.beta)}")
    if case.bias:
        pieces.append("bias")
    if case.activation != "none":
        pieces.append(case.activation)
    if case.pad_b:
        pieces.append(f"pb{case.pad_b}")
    if case.pad_c:
        pieces.append(f"pc{case.pad_c}")
    return "_".join(pieces)


def _number(value) -> str:
    """Shortest round-trip decimal, integers without a fraction (JS String(), Rust {} agree)."""
    value = _canonical_number(value)
    return str(value) if isinstance(value, int) else repr(value)


def _canonical_number(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _merge(defaults: dict, fields: dict) -> dict:
    merged = copy.deepcopy(defaults)
    for key, value in fields.items():
        if key == "pattern" and isinstance(value, dict) and isinstance(merged.get("pattern"), dict):
            merged["pattern"] = {**merged["pattern"], **value}
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _set_path(fields: dict, path: str, value) -> None:
    *parents, leaf = path.split(".")
    node = fields
    for name in parents:
        node = node.setdefault(name, {})
    node[leaf] = value


def _require(ok: bool, where: str, rule: str) -> None:
    if not ok:
        raise ValueError(f"{where}: {rule}")
