"""The training suite's cases (cases/training.json): entries of kind "op", "mlp" or "e2e", each
with a `vary` object whose lists multiply out (in key order) into cases with stable ids. The fp8
suite (cases/fp8.json, kind "fp8": one product, training/fp8.py) is read and run the same way."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..cases import CASES_DIR, TOLERANCE

TRAINING_KINDS = ("op", "mlp", "e2e")
KINDS = TRAINING_KINDS + ("fp8",)
OPS = ("forward", "input_grad", "weight_grad")
MLPS = ("plain", "gated")
SHORT_DTYPE = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64"}


@dataclass(frozen=True)
class TrainingCase:
    id: str
    kind: str  # "op" | "mlp" | "e2e"
    device: str  # "cpu" | "cuda"
    dtype: str
    block: int
    density: float
    seed: int
    params: dict = field(default_factory=dict)  # the kind's own sizes (m, k, n, op | d_model, ...)
    note: str = ""

    @property
    def tolerance(self) -> float:
        return TOLERANCE[self.dtype]

    def to_json(self) -> dict:
        """The fields the table and report read (as a product case's: m, k, n, block, pattern)
        plus the kind's own."""
        p = self.params
        m, k, n = {"op": lambda: (p["m"], p["k"], p["n"]),
                   "fp8": lambda: (p["m"], p["k"], p["n"]),
                   "mlp": lambda: (p["d_ff"], p["d_model"], p["tokens"]),
                   "e2e": lambda: (p["d_hidden"], p["d_in"], p["batch"])}[self.kind]()
        return {"id": self.id, "kind": self.kind, "op": p.get("op") or p.get("mlp") or self.kind,
                "m": m, "k": k, "n": n, "block": [self.block, self.block], "dtype": self.dtype,
                "f32_mode": "exact", "layout_b": "row", "layout_c": "row", "transpose_a": False,
                "pattern": {"kind": "uniform", "density": self.density}, "seed": self.seed,
                "devices": [self.device], "note": self.note, "params": dict(p)}


def case_id(kind: str, device: str, dtype: str, block: int, density: float, params: dict) -> str:
    head = {"op": lambda: f"{params['op']}_{params['m']}x{params['k']}x{params['n']}",
            "fp8": lambda: f"e4m3_{params['m']}x{params['k']}x{params['n']}",
            "mlp": lambda: f"mlp-{params['mlp']}_{params['d_model']}x{params['d_ff']}_t{params['tokens']}",
            "e2e": lambda: f"e2e_{params['d_in']}x{params['d_hidden']}x{params['d_out']}_steps{params['steps']}"}[kind]()
    return f"{device}_{SHORT_DTYPE[dtype]}_{head}_b{block}_d{density:g}"


def expand(entry: dict) -> list[TrainingCase]:
    """One suite entry into its cases: every combination of the `vary` lists."""
    kind = entry["kind"]
    if kind not in KINDS:
        raise ValueError(f"training suite entry kind must be one of {KINDS}; got {kind!r}")
    vary = entry.get("vary", {})
    fixed = {k: v for k, v in entry.items() if k not in ("vary", "note")}
    out = []
    for values in itertools.product(*vary.values()):
        fields = {**fixed, **dict(zip(vary.keys(), values))}
        common = {name: fields.pop(name) for name in ("kind", "device", "dtype", "block", "density", "seed")}
        if kind == "op" and fields["op"] not in OPS:
            raise ValueError(f"op must be one of {OPS}; got {fields['op']!r}")
        if kind == "mlp" and fields["mlp"] not in MLPS:
            raise ValueError(f"mlp must be one of {MLPS}; got {fields['mlp']!r}")
        cid = case_id(kind, common["device"], common["dtype"], common["block"], common["density"], fields)
        out.append(TrainingCase(id=cid, params=fields, note=entry.get("note", ""), **common))
    return out


def load(cases_dir: Path = CASES_DIR, name: str = "training") -> tuple[dict, list[TrainingCase]]:
    """The suite document and its cases (ids unique)."""
    doc = json.loads((Path(cases_dir) / f"{name}.json").read_text())
    cases = [c for entry in doc["cases"] for c in expand(entry)]
    ids = [c.id for c in cases]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"{name} suite has duplicate case ids: {dupes[:3]}")
    return doc, cases
