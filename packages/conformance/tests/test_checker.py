"""The checker fails when a binding is wrong, naming the binding and the case: outputs made up
here (no binding needed), and a deliberately broken Python binding run through the real matrix."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from bsrmm_bench import cases
from bsrmm_conformance import check, manifest, run, tolerance, vectors
from bsrmm_conformance.bindings import BINDINGS, Binding

HERE = Path(__file__).resolve().parent
PADDED_COL_C = next(c for c in cases.load_suite("conformance") if c.pad_c and c.layout_c == "col" and c.dtype == "float32")


def write_column(tmp: Path, folder: Path, case: manifest.VectorCase, values: np.ndarray | None, result: str) -> Path:
    """A runner's output directory holding one case: `result` and, for ok, C with `values`."""
    out = tmp / f"column{len(list(tmp.iterdir()))}"
    out.mkdir()
    (out / "results.txt").write_text(f"{case.id} {result}\n")
    if values is not None:
        buffer = manifest.load_array(folder, case, "c").copy()
        buffer[manifest.element_offsets(case.c_rows, case.c_cols, case.c_ld, case.c_layout)] = manifest.to_storage(values, case.c_dtype)
        buffer.tofile(out / f"{case.id}.bin")
    return out


@pytest.fixture()
def padded(tmp_path):
    folder = tmp_path / "vectors"
    manifest.write(folder, [(vectors.vector_case(PADDED_COL_C), vectors.case_arrays(PADDED_COL_C))])
    [case] = manifest.read(folder)
    ref, _ = check.reference(folder, case)
    columns = tmp_path / "columns"
    columns.mkdir()
    return folder, case, ref.astype(np.float32), columns


def verdict(folder, case, columns: dict[str, Path]):
    results = {name: check.read_results(path / "results.txt") for name, path in columns.items()}
    return check.check_case(folder, case, results, columns)


def test_correct_outputs_pass(padded):
    folder, case, ref, columns = padded
    cells, problems = verdict(folder, case, {"x": write_column(columns, folder, case, ref, "ok"),
                                              "y": write_column(columns, folder, case, ref, "ok")})
    assert problems == [] and cells["x"].status == cells["y"].status == "pass"


def test_transposed_output_fails_naming_column_and_case(padded):
    folder, case, ref, columns = padded
    wrong = ref.reshape(-1)[::-1].reshape(ref.shape)
    _, problems = verdict(folder, case, {"good": write_column(columns, folder, case, ref, "ok"),
                                         "bad": write_column(columns, folder, case, wrong, "ok")})
    assert len(problems) == 1 and problems[0].startswith(f"{case.id} [bad]: C[")


def test_small_drift_between_bindings_within_bound_passes_beyond_fails(padded):
    folder, case, ref, columns = padded
    exact, magnitude = check.reference(folder, case)
    allowed = tolerance.bound(case.dtype, case.cols, magnitude, exact)
    inside, outside = ref + 0.4 * allowed, ref - 3 * allowed
    _, problems = verdict(folder, case, {"a": write_column(columns, folder, case, inside.astype(np.float32), "ok"),
                                         "b": write_column(columns, folder, case, ref, "ok")})
    assert problems == []
    _, problems = verdict(folder, case, {"a": write_column(columns, folder, case, outside.astype(np.float32), "ok")})
    assert problems and "[a]" in problems[0]


def test_error_or_skip_on_a_valid_case_fails(padded):
    folder, case, _, columns = padded
    _, problems = verdict(folder, case, {"e": write_column(columns, folder, case, None, "error BSRMM_STATUS_INTERNAL boom"),
                                         "s": write_column(columns, folder, case, None, "skip cannot")})
    assert sorted(p.split("]")[0] for p in problems) == [f"{case.id} [e", f"{case.id} [s"]


def test_bad_inputs_need_one_status(tmp_path):
    from bsrmm_conformance import bad_inputs

    folder = tmp_path / "vectors"
    built = [v for v in bad_inputs.vectors() if v[0].id == "bad-b_dtype_differs_from_a"]
    manifest.write(folder, built)
    [case] = manifest.read(folder)
    columns = tmp_path / "columns"
    columns.mkdir()
    same = write_column(columns, folder, case, None, "error BSRMM_STATUS_UNSUPPORTED mixed")
    _, problems = verdict(folder, case, {"a": same, "b": write_column(columns, folder, case, None, "skip no way")})
    assert problems == []
    _, problems = verdict(folder, case, {"a": same, "b": write_column(columns, folder, case, None, "error BSRMM_STATUS_INVALID_ARGUMENT x"),
                                         "c": write_column(columns, folder, case, None, "ok")})
    assert [p.split(":")[0] for p in problems] == [f"{case.id} [b]", f"{case.id} [c]"]
    _, problems = verdict(folder, case, {"a": write_column(columns, folder, case, None, "skip no way")})
    assert problems == [f"{case.id}: no binding ran this bad input"]


needs_bsrmm = pytest.mark.skipif(importlib.util.find_spec("bsrmm") is None,
                                 reason="the Python binding is not installed here (pnpm --filter @bsrmm/python build)")


@needs_bsrmm
def test_a_broken_binding_fails_the_matrix(tmp_path):
    """The real matrix, with the real Python binding next to three broken copies of it."""
    broken = [Binding(f"python-{fault}", lambda fault=fault: [sys.executable, str(HERE / "broken_runner.py"), fault],
                      BINDINGS["python"].unavailable)
              for fault in ("ignore-ld-col-c", "wrong-status", "writes-padding")]
    ok = run.run(suite="conformance", case_filter=r"_pc\d|bad-b_dtype|bad-row_ptr_not", devices=["cpu"],
                 bindings=[BINDINGS["python"], *broken], required=set(), out=tmp_path)
    assert not ok
    doc = json.loads((tmp_path / "conformance.json").read_text())
    rows = {row["id"]: row["cells"] for row in doc["cases"]}
    padded_c = [case_id for case_id in rows if "_pc" in case_id]
    col_c = [case_id for case_id in padded_c if any(f"_{b}c_" in case_id for b in "rc")]
    assert len(padded_c) > len(col_c) > 0
    for case_id, cells in rows.items():
        assert cells["python"]["status"] == "pass", case_id
        assert cells["python-ignore-ld-col-c"]["status"] == ("fail" if case_id in col_c else "pass"), case_id
        assert cells["python-writes-padding"]["status"] == ("fail" if case_id in padded_c else "pass"), case_id
        assert cells["python-wrong-status"]["status"] == ("fail" if case_id == "bad-b_dtype_differs_from_a" else "pass"), case_id
    problems = "\n".join(doc["problems"])
    for case_id in col_c:
        assert f"{case_id} [python-ignore-ld-col-c]" in problems
    assert "bad-b_dtype_differs_from_a [python-wrong-status]: reported BSRMM_STATUS_INVALID_ARGUMENT" in problems
