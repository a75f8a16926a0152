"""Checks what the runners wrote: every valid case's C against the float64 reference (each
element within tolerance.bound, NaN-poisoned inputs untouched, padding bytes unchanged) and
against every other binding's C; every bad input's status against the expected one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import manifest, sddmm, tolerance
from .manifest import VectorCase


@dataclass
class Cell:
    """One case through one binding on one device."""

    status: str  # "pass" | "fail" | "skip"
    text: str  # what the matrix shows: worst error as a fraction of the bound, a status, "skip"
    detail: str = ""  # why it failed or was skipped
    output: np.ndarray | None = field(default=None, repr=False)  # C's elements, float64


@dataclass
class Result:
    """A runner's results.txt line: ok, error CODE message, or skip reason."""

    kind: str
    code: str = ""
    message: str = ""


def read_results(path: Path) -> dict[str, Result]:
    results = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        case_id, kind, *rest = line.split(" ", 2) + [""]
        text = rest[0] if rest else ""
        if kind == "error":
            code, _, message = text.partition(" ")
            results[case_id] = Result("error", code, message)
        elif kind in ("ok", "skip"):
            results[case_id] = Result(kind, message=text.strip())
        else:
            raise ValueError(f"{path}: bad line {line!r}")
    return results


def activate(x: np.ndarray, activation: str) -> np.ndarray:
    """The core's activations (src/cuda/kernel_parts/epilogue_math.hpp), in float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        if activation == "relu":
            return np.where(x < 0, 0.0, x)
        if activation == "gelu":
            return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))
        if activation == "silu":
            return x / (1 + np.exp(-x))
    return x


def dense(buffer: np.ndarray, rows: int, cols: int, ld: int, layout: str) -> np.ndarray:
    return buffer[manifest.element_offsets(rows, cols, ld, layout)]


def reference(folder: Path, case: VectorCase) -> tuple[np.ndarray, np.ndarray]:
    """(float64 C, the magnitude tolerance.bound scales with) from the arrays the runners read."""
    load = lambda name: manifest.load_array(folder, case, name)  # noqa: E731
    ptr, idx = load("row_ptr"), load("col_idx")
    if case.sddmm:
        return _sddmm_reference(folder, case, ptr, idx)
    blocks = manifest.to_float64(load("values"), case.dtype).reshape(idx.size, case.bh, case.bw)
    if case.a_scales != "none":  # fp8: each element stands for its value times its scale
        blocks = blocks * _a_scale_per_block(case, ptr, load("a_scales"))[:, None, None]
    a = np.zeros((case.rows, case.cols))
    view = a.reshape(case.rows // case.bh, case.bh, case.cols // case.bw, case.bw)
    for r in range(ptr.size - 1):
        for k in range(ptr[r], ptr[r + 1]):
            view[r, :, idx[k], :] += blocks[k]
    op_a = a.T if case.transpose else a
    b = dense(manifest.to_float64(load("b"), case.b_dtype), case.b_rows, case.b_cols, case.b_ld, case.b_layout)
    if case.b_scales != "none":
        b = b * load("b_scales").astype(np.float64)[None, :]  # one scale, or one per column
    with np.errstate(invalid="ignore", over="ignore"):
        value = case.alpha * (op_a @ b)
        magnitude = abs(case.alpha) * (np.abs(op_a) @ np.abs(b))
        if case.beta != 0:  # beta == 0: C is not read (it holds NaN poison)
            c0 = dense(manifest.to_float64(load("c"), case.c_dtype), case.c_rows, case.c_cols, case.c_ld, case.c_layout)
            value = value + case.beta * c0
            magnitude = magnitude + abs(case.beta) * np.abs(c0)
        if case.bias:
            bias = manifest.to_float64(load("bias"), case.bias_dtype)[:, None]
            value, magnitude = value + bias, magnitude + np.abs(bias)
    return activate(value, case.activation), magnitude


def _a_scale_per_block(case: VectorCase, ptr: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """An fp8 A's scale of each stored block, from its kind."""
    scales = scales.astype(np.float64)
    if case.a_scales == "per-block":
        return scales
    if case.a_scales == "per-block-row":
        return np.repeat(scales, np.diff(ptr))
    return np.full(ptr[-1], scales[0])


def output_dtype(case: VectorCase) -> str:
    """The dtype whose rounding bounds C: C's (an fp8 product is exact in f64 over the
    dequantised operands on the CPU and accumulates in f32 on CUDA, as f16 / bf16 / f32 do)."""
    return case.c_dtype if case.dtype in manifest.FP8 else case.dtype


def _sddmm_reference(folder: Path, case: VectorCase, ptr: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    load = lambda name, dtype: manifest.to_float64(manifest.load_array(folder, case, name), dtype)  # noqa: E731
    x = dense(load("b", case.b_dtype), case.b_rows, case.b_cols, case.b_ld, case.b_layout)
    y = dense(load("y", case.y_dtype), case.y_rows, case.y_cols, case.y_ld, case.y_layout)
    # beta == 0: the values are not read (they hold NaN poison)
    c0 = dense(load("c", case.c_dtype), case.c_rows, case.c_cols, case.c_ld, case.c_layout) if case.beta != 0 else None
    return sddmm.reference(case, x, y, c0, ptr, idx)


def inner_dimension(case: VectorCase) -> int:
    """The length of each dot product: op(A)'s columns, or the SDDMM's T."""
    if case.sddmm:
        return case.b_cols
    return case.rows if case.transpose else case.cols


def check_output(folder: Path, case: VectorCase, path: Path, ref: np.ndarray, allowed: np.ndarray) -> Cell:
    """A successful run's C buffer: size, padding bytes, every element within its bound."""
    before = manifest.load_array(folder, case, "c")
    if not path.is_file():
        return Cell("fail", "FAIL", f"reported ok but wrote no {path.name}")
    after = np.fromfile(path, dtype=before.dtype)
    if after.size != before.size:
        return Cell("fail", "FAIL", f"C buffer has {after.size} elements, expected {before.size}")
    offsets = manifest.element_offsets(case.c_rows, case.c_cols, case.c_ld, case.c_layout)
    padding = np.ones(before.size, dtype=bool)
    padding[offsets.reshape(-1)] = False
    changed = np.flatnonzero(padding & (before.view(np.uint8).reshape(before.size, -1) != after.view(np.uint8).reshape(after.size, -1)).any(axis=1))
    if changed.size:
        return Cell("fail", "FAIL", f"wrote {changed.size} padding element(s) outside C (buffer offset {changed[0]} first)")
    out = manifest.to_float64(after[offsets], case.c_dtype)
    ratio = tolerance.excess(out, ref, allowed)
    worst = float(ratio.max(initial=0.0))
    if worst > 1:
        i, j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        return Cell("fail", "FAIL", f"C[{i}, {j}] = {out[i, j]!r}, float64 reference {ref[i, j]!r}, allowed "
                                    f"+-{allowed[i, j]:.3g} ({int((ratio > 1).sum())} element(s) out of bound)", out)
    return Cell("pass", f"{worst:.2f}", output=out)


def compare_pairs(case: VectorCase, cells: dict[str, Cell], allowed: np.ndarray) -> list[str]:
    """Every two bindings that passed must agree within the same bound (they share one core, so
    in practice they agree far closer: this catches a binding that is wrong but within bound
    of the reference in a way another is not)."""
    problems = []
    names = [name for name, cell in cells.items() if cell.output is not None and cell.status == "pass"]
    for x in range(len(names)):
        for y in range(x + 1, len(names)):
            ratio = tolerance.excess(cells[names[x]].output, cells[names[y]].output, allowed)
            if ratio.max(initial=0.0) > 1:
                i, j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
                problems.append(f"{names[x]} and {names[y]} disagree at C[{i}, {j}]: "
                                f"{cells[names[x]].output[i, j]!r} vs {cells[names[y]].output[i, j]!r}")
    return problems


def check_case(folder: Path, case: VectorCase, results: dict[str, dict[str, Result] | str],
               outputs: dict[str, Path]) -> tuple[dict[str, Cell], list[str]]:
    """Cells of one case for every column, and the problems (each naming the column and case).
    `results[column]` is that runner's results, or a string saying why it has none."""
    cells: dict[str, Cell] = {}
    ref = allowed = None
    if case.expect == "ok":
        ref, magnitude = reference(folder, case)
        allowed = tolerance.bound(output_dtype(case), inner_dimension(case), magnitude, ref)
    for column, column_results in results.items():
        if isinstance(column_results, str):
            cells[column] = Cell("skip", "-", column_results)
            continue
        result = column_results.get(case.id)
        if result is None:
            cells[column] = Cell("fail", "FAIL", "no result (the runner stopped before this case?)")
        elif result.kind == "skip":
            # A valid case must run everywhere; a bad input may be inexpressible in an API.
            status = "skip" if case.expect != "ok" else "fail"
            cells[column] = Cell(status, "skip" if status == "skip" else "FAIL", result.message)
        elif case.expect == "ok":
            if result.kind == "error":
                cells[column] = Cell("fail", "FAIL", f"failed on a valid case: {result.code}: {result.message}")
            else:
                cells[column] = check_output(folder, case, outputs[column] / f"{case.id}.bin", ref, allowed)
        elif result.kind == "ok":
            cells[column] = Cell("fail", "FAIL", f"accepted a bad input (expected {case.expect})")
        elif result.code != case.expect:
            cells[column] = Cell("fail", "FAIL", f"reported {result.code} (expected {case.expect}): {result.message}")
        else:
            cells[column] = Cell("pass", short_code(result.code), result.message)
    problems = [f"{case.id} [{column}]: {cell.detail}" for column, cell in cells.items() if cell.status == "fail"]
    if case.expect == "ok":
        problems += [f"{case.id}: {p}" for p in compare_pairs(case, cells, allowed)]
    elif cells and all(cell.status == "skip" for cell in cells.values()):
        problems.append(f"{case.id}: no binding ran this bad input")
    return cells, problems


def short_code(code: str) -> str:
    return code.removeprefix("BSRMM_STATUS_").replace("INVALID_ARGUMENT", "INVALID")
