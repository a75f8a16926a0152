"""The SDDMM's vectors (sddmm.py) cover what they claim, its reference is the float64 SDDMM, and
the checker fails an SDDMM output that is wrong (blocks out of order, a block transposed)."""

import numpy as np
import pytest

from bsrmm_conformance import check, manifest, sddmm

from test_checker import verdict, write_column

BUILT = {case.id: (case, arrays) for case, arrays in sddmm.vectors()}
VALID = [case for case, _ in BUILT.values() if case.expect == "ok"]


def test_covers_dtypes_layouts_beta_blocks_and_empty_cases():
    assert {c.dtype for c in VALID} == {"float32", "float16", "bfloat16", "float64"}
    assert {(c.b_layout, c.y_layout) for c in VALID} == {("row", "row"), ("row", "col"), ("col", "row"), ("col", "col")}
    assert any(c.beta != 0 for c in VALID) and any(c.alpha not in (0, 1) for c in VALID)
    assert any(c.b_ld > (c.b_cols if c.b_layout == "row" else c.b_rows) for c in VALID)  # padded X
    assert any(c.bh != c.bw for c in VALID) and {64, 128} <= {c.bh for c in VALID}
    assert any(c.b_cols == 0 for c in VALID)  # T = 0
    empty_rows = [c for c, arrays in BUILT.values() if c.expect == "ok" and (np.diff(arrays["row_ptr"]) == 0).any()]
    assert empty_rows


def test_every_bad_input_changes_its_base_and_expects_the_c_abi_status():
    base_case, base_arrays = sddmm.build(sddmm.BASE)
    for name, (expect, _) in sddmm.BAD_INPUTS.items():
        case, arrays = BUILT[f"bad-sddmm-{name}"]
        assert case.expect == expect
        changed = [k for k in arrays if arrays[k].tobytes() != base_arrays[k].tobytes()]
        assert changed and case != base_case, name


def test_reference_is_the_float64_product_at_the_stored_blocks():
    case, arrays = BUILT["sddmm-f64-b4-padded-beta"]
    x = check.dense(arrays["b"], case.b_rows, case.b_cols, case.b_ld, case.b_layout)
    y = check.dense(arrays["y"], case.y_rows, case.y_cols, case.y_ld, case.y_layout)
    c0 = check.dense(arrays["c"], case.c_rows, case.c_cols, case.c_ld, case.c_layout)
    value, _ = sddmm.reference(case, x, y, c0, arrays["row_ptr"], arrays["col_idx"])
    full = x @ y
    ptr, idx = arrays["row_ptr"], arrays["col_idx"]
    k = 0
    for r in range(ptr.size - 1):
        for c in idx[ptr[r]:ptr[r + 1]]:
            block = full[r * case.bh:(r + 1) * case.bh, c * case.bw:(c + 1) * case.bw].reshape(-1)
            np.testing.assert_allclose(value[k], case.alpha * block + case.beta * c0[k], rtol=1e-13)
            k += 1
    assert k == case.c_rows


@pytest.fixture()
def grad_case(tmp_path):
    folder = tmp_path / "vectors"
    manifest.write(folder, [BUILT["sddmm-f32-grad-b16x8"]])
    [case] = manifest.read(folder)
    ref, _ = check.reference(folder, case)
    columns = tmp_path / "columns"
    columns.mkdir()
    return folder, case, ref.astype(np.float32), columns


def test_right_values_pass_blocks_out_of_order_or_transposed_fail(grad_case):
    folder, case, ref, columns = grad_case
    _, problems = verdict(folder, case, {"good": write_column(columns, folder, case, ref, "ok")})
    assert problems == []
    swapped = ref[::-1].copy()  # the blocks in reverse order
    transposed = ref.reshape(-1, case.bh, case.bw).transpose(0, 2, 1).reshape(ref.shape).copy()
    _, problems = verdict(folder, case, {"good": write_column(columns, folder, case, ref, "ok"),
                                         "swapped": write_column(columns, folder, case, swapped, "ok"),
                                         "transposed": write_column(columns, folder, case, transposed, "ok")})
    assert sorted(p.split(":")[0] for p in problems if "disagree" not in p) == [f"{case.id} [swapped]", f"{case.id} [transposed]"]
