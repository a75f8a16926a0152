"""The vectors folder that every runner reads: one line per case in manifest.txt, one folder of
raw little-endian arrays per case. Plain text rather than JSON so that the C and Rust runners
parse it with nothing but their standard library (README.md, "Vectors").

    bsrmm-conformance 3
    case id=<id> expect=ok|BSRMM_STATUS_<...> dtype=float32 rows=64 cols=48 bh=16 bw=8 ...

Arrays of case <id> live in <id>/: row_ptr.bin and col_idx.bin (int32), values.bin (A's dtype),
b.bin (b_dtype), c.bin (c_dtype: C before the call, padding included), bias.bin
(bias_dtype, when bias=1) and, for an SDDMM (op=sddmm), y.bin (y_dtype).

fp8 (dtype / b_dtype float8_e4m3 or float8_e5m2, stored as their bytes): a_scales names A's
scale kind (per-tensor, per-block, per-block-row) and b_scales B's (per-tensor, per-column),
their float32 values in a_scales.bin / b_scales.bin; "none" for every other case.

op=sddmm: values = alpha * (X Y)[A's stored blocks] + beta * values, with X in the b fields
(rows x T), Y in the y fields (T x cols) and the values in the c fields (nnzb x bh * bw,
row-major, A's block order); A's own values are not read. Other cases carry y_rows=0 y_cols=0. A dense buffer holds max(major * ld, (major - 1) * ld + minor) elements, where
major is rows (row-major) or cols (column-major)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from bsrmm_bench import prng

FORMAT = "bsrmm-conformance 3"
MANIFEST = "manifest.txt"
DTYPES = ("float32", "float16", "bfloat16", "float64", "float8_e4m3", "float8_e5m2")
FP8 = ("float8_e4m3", "float8_e5m2")
ARRAYS = ("row_ptr", "col_idx", "values", "b", "c", "bias", "y", "a_scales", "b_scales")


@dataclass(frozen=True)
class VectorCase:
    """One line of the manifest: every argument of the construction and of the multiply."""

    id: str
    expect: str  # "ok", or the status name every binding must report
    dtype: str  # A's dtype
    rows: int  # the stored A (may be invalid in bad-input cases)
    cols: int
    bh: int
    bw: int
    sort: int  # 1: ask the constructor to sort column indices
    op: str  # "none" | "transpose" | "sddmm"
    b_rows: int
    b_cols: int
    b_layout: str  # "row" | "col"
    b_ld: int
    b_dtype: str
    c_rows: int
    c_cols: int
    c_layout: str
    c_ld: int
    c_dtype: str
    alpha: float
    beta: float
    bias: int
    bias_dtype: str
    activation: str  # "none" | "relu" | "gelu" | "silu" | "unknown" (a bad input)
    c_aliases_b: int  # 1: pass B's memory as C (a bad input)
    y_rows: int  # Y of an SDDMM (T x cols); 0 x 0 otherwise
    y_cols: int
    y_layout: str
    y_ld: int
    y_dtype: str
    a_scales: str = "none"  # fp8 A: per-tensor | per-block | per-block-row (a_scales.bin)
    b_scales: str = "none"  # fp8 B: per-tensor | per-column (b_scales.bin)

    def to_line(self) -> str:
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            parts.append(f"{f.name}={format_number(value) if isinstance(value, float) else value}")
        return "case " + " ".join(parts)

    @classmethod
    def from_line(cls, line: str) -> "VectorCase":
        tokens = line.split()
        if not tokens or tokens[0] != "case":
            raise ValueError(f"manifest line must start with 'case': {line!r}")
        raw = dict(token.split("=", 1) for token in tokens[1:])
        values = {}
        for f in fields(cls):
            if f.name not in raw:
                raise ValueError(f"manifest line lacks {f.name}: {line!r}")
            text = raw[f.name]
            values[f.name] = int(text) if f.type == "int" else float(text) if f.type == "float" else text
        return cls(**values)

    @property
    def transpose(self) -> bool:
        return self.op == "transpose"

    @property
    def sddmm(self) -> bool:
        return self.op == "sddmm"


def format_number(x: float) -> str:
    """Shortest round-trip decimal; NaN / Infinity spelled the way C strtod, Rust and JS all parse."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(float(x))


def storage_dtype(dtype: str) -> np.dtype:
    """How the bytes of `dtype` are held in numpy here: bfloat16 as its uint16 bit patterns, fp8
    as its bytes."""
    return np.dtype({"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": np.uint16,
                     "float8_e4m3": np.uint8, "float8_e5m2": np.uint8}[dtype])


def fp8_numpy(dtype: str) -> np.dtype:
    """ml_dtypes' type of an fp8 dtype (OCP E4M3 is its float8_e4m3fn)."""
    import ml_dtypes

    return np.dtype({"float8_e4m3": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}[dtype])


def to_storage(values: np.ndarray, dtype: str) -> np.ndarray:
    """Exact values of `dtype` (as float32/float64) -> storage (lossless)."""
    if dtype == "bfloat16":
        return prng.float32_to_bfloat16_bits(np.asarray(values, dtype=np.float32))
    return np.asarray(values).astype(storage_dtype(dtype))


def to_float64(stored: np.ndarray, dtype: str) -> np.ndarray:
    if dtype in FP8:
        return np.asarray(stored, dtype=np.uint8).view(fp8_numpy(dtype)).astype(np.float64)
    if dtype == "bfloat16":
        return prng.bfloat16_bits_to_float32(stored).astype(np.float64)
    return np.asarray(stored).astype(np.float64)


def nan_storage(dtype: str) -> np.ndarray:
    """One quiet NaN in storage form (bfloat16: its bit pattern)."""
    if dtype == "bfloat16":
        return np.array([0x7FC0], dtype=np.uint16)
    return np.array([np.nan], dtype=storage_dtype(dtype))


def buffer_length(rows: int, cols: int, ld: int, layout: str) -> int:
    major, minor = (rows, cols) if layout == "row" else (cols, rows)
    if major <= 0 or minor <= 0:
        return max(0, major * ld)
    return max(major * ld, (major - 1) * ld + minor)


def element_offsets(rows: int, cols: int, ld: int, layout: str) -> np.ndarray:
    """Offsets of element (i, j), as a rows x cols array."""
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    return i * ld + j if layout == "row" else j * ld + i


def write(folder: Path, cases: list[tuple[VectorCase, dict[str, np.ndarray]]]) -> None:
    """Writes the manifest and every case's arrays (already in storage form)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [FORMAT]
    for case, arrays in cases:
        case_dir = folder / case.id
        case_dir.mkdir(exist_ok=True)
        for name, array in arrays.items():
            if name not in ARRAYS:
                raise ValueError(f"unknown array {name!r} for case {case.id}")
            np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tofile(case_dir / f"{name}.bin")
        lines.append(case.to_line())
    (folder / MANIFEST).write_text("\n".join(lines) + "\n")


def read(folder: Path) -> list[VectorCase]:
    lines = (folder / MANIFEST).read_text().splitlines()
    if not lines or lines[0] != FORMAT:
        raise ValueError(f"{folder / MANIFEST}: first line must be {FORMAT!r}")
    return [VectorCase.from_line(line) for line in lines[1:] if line.strip()]


def load_array(folder: Path, case: VectorCase, name: str) -> np.ndarray:
    dtype = {"row_ptr": np.int32, "col_idx": np.int32, "values": storage_dtype(case.dtype),
             "b": storage_dtype(case.b_dtype), "c": storage_dtype(case.c_dtype),
             "bias": storage_dtype(case.bias_dtype), "y": storage_dtype(case.y_dtype),
             "a_scales": np.float32, "b_scales": np.float32}[name]
    return np.fromfile(folder / case.id / f"{name}.bin", dtype=np.dtype(dtype).newbyteorder("<"))
