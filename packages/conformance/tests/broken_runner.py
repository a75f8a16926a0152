"""A deliberately broken binding, for the checker's own tests: runs the Python binding's runner,
then damages what it wrote the way a real bug in a binding's translation layer would.

    python broken_runner.py FAULT VECTORS OUT DEVICE

FAULT is one of:
  ignore-ld-col-c   a column-major C is written packed, as if its leading dimension were rows
  wrong-status      reports INVALID_ARGUMENT where the binding said UNSUPPORTED
  writes-padding    writes 0 into the first padding element of a padded C
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from bsrmm_conformance import check, manifest
from bsrmm_conformance.bindings import RUNNERS

FAULTS = ("ignore-ld-col-c", "wrong-status", "writes-padding")


def damage(fault: str, folder: Path, out: Path) -> None:
    results = check.read_results(out / "results.txt")
    lines = []
    for case in manifest.read(folder):
        result = results[case.id]
        path = out / f"{case.id}.bin"
        if result.kind == "ok" and case.c_ld > (case.c_rows if case.c_layout == "col" else case.c_cols):
            before, after = manifest.load_array(folder, case, "c"), np.fromfile(path, dtype=manifest.storage_dtype(case.c_dtype))
            if fault == "ignore-ld-col-c" and case.c_layout == "col":
                values = after[manifest.element_offsets(case.c_rows, case.c_cols, case.c_ld, "col")]
                after = before.copy()
                after[manifest.element_offsets(case.c_rows, case.c_cols, case.c_rows, "col")] = values
            if fault == "writes-padding":
                inside = np.zeros(after.size, dtype=bool)
                inside[manifest.element_offsets(case.c_rows, case.c_cols, case.c_ld, case.c_layout).reshape(-1)] = True
                after[np.flatnonzero(~inside)[0]] = 0
            after.tofile(path)
        line = f"{case.id} {result.kind}"
        if result.kind == "error":
            code = "BSRMM_STATUS_INVALID_ARGUMENT" if fault == "wrong-status" and result.code == "BSRMM_STATUS_UNSUPPORTED" else result.code
            line += f" {code} {result.message}"
        elif result.kind == "skip":
            line += f" {result.message}"
        lines.append(line)
    (out / "results.txt").write_text("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    fault, folder, out, device = argv
    if fault not in FAULTS:
        raise SystemExit(f"FAULT must be one of {FAULTS}")
    # The healthy runner, in this process (one interpreter start instead of two).
    spec = importlib.util.spec_from_file_location("python_runner", RUNNERS / "runner.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    status = runner.main([folder, out, device])
    if status == 0:
        damage(fault, Path(folder), Path(out))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
