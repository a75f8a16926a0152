"""The fp8 vectors (fp8.py) cover what they claim; the reference is the float64 product of the
dequantised operands, within fp8's rounding of the unquantised ones; and the checker fails an
output that ignores A's or B's scales."""

import numpy as np
import pytest

from bsrmm_bench import prng
from bsrmm_conformance import check, fp8, manifest

from test_checker import verdict, write_column

BUILT = {case.id: (case, arrays) for case, arrays in fp8.vectors()}
VALID = [case for case, _ in BUILT.values() if case.expect == "ok"]


def test_covers_pairings_scale_kinds_and_outputs():
    assert {(c.dtype, c.b_dtype) for c in VALID} >= {("float8_e4m3", "float8_e4m3"), ("float8_e4m3", "float8_e5m2")}
    assert {c.a_scales for c in VALID} == {"per-tensor", "per-block", "per-block-row"}
    assert {c.b_scales for c in VALID} == {"per-tensor", "per-column"}
    assert {c.c_dtype for c in VALID} == {"float32", "float16", "bfloat16"}
    assert any(c.bias for c in VALID) and any(c.beta != 0 for c in VALID) and any(c.b_layout == "col" for c in VALID)


def test_every_bad_input_changes_its_base_and_expects_the_c_abi_status():
    for name, (expect, base, _) in fp8.BAD_INPUTS.items():
        base_case, base_arrays = fp8.build(base)
        case, arrays = BUILT[f"bad-fp8-{name}"]
        assert case.expect == expect
        changed = [k for k in arrays if arrays[k].tobytes() != base_arrays[k].tobytes()]
        assert changed or case.op != base_case.op, name


@pytest.fixture(params=[f.name for f in fp8.CASES])
def written(request, tmp_path):
    folder = tmp_path / "vectors"
    manifest.write(folder, [BUILT[request.param]])
    [case] = manifest.read(folder)
    columns = tmp_path / "columns"
    columns.mkdir()
    return folder, case, columns


def test_reference_is_within_fp8_rounding_of_the_unquantised_product(written):
    """The generator's values before quantising, multiplied in float64, differ from the reference
    by at most what rounding both operands to fp8 allows (all values normal: amax scaling)."""
    folder, case, _ = written
    f = next(f for f in fp8.CASES if f.name == case.id)
    if f.beta != 0 or f.bias or f.activation != "none" or f.alpha != 1:
        pytest.skip("the plain product only")
    ref, _ = check.reference(folder, case)
    ptr, idx = manifest.load_array(folder, case, "row_ptr"), manifest.load_array(folder, case, "col_idx")
    values = prng.dense_values(f.seed, prng.STREAM_A, idx.size * f.block[0], f.block[1], "float32").astype(np.float64)
    blocks = values.reshape(idx.size, f.block[0], f.block[1])
    a = np.zeros((f.rows, f.cols))
    for r in range(ptr.size - 1):
        for k in range(ptr[r], ptr[r + 1]):
            a[r * f.block[0]:(r + 1) * f.block[0], idx[k] * f.block[1]:(idx[k] + 1) * f.block[1]] = blocks[k]
    b = prng.dense_values(f.seed, prng.STREAM_B, f.cols, f.n, "float32").astype(np.float64) * 3.0
    u = {"float8_e4m3": 2.0**-4, "float8_e5m2": 2.0**-3}
    fp8_bound = (u[f.dtype] + u[f.b_dtype] + u[f.dtype] * u[f.b_dtype]) * (np.abs(a) @ np.abs(b))
    # A value too small for the format's normal range loses more than u: half a subnormal step.
    subnormal = {"float8_e4m3": 2.0**-10, "float8_e5m2": 2.0**-17}
    a_scale = manifest.load_array(folder, case, "a_scales").max()
    b_scale = manifest.load_array(folder, case, "b_scales").max()
    tiny = (subnormal[f.dtype] * a_scale * (np.abs(b) @ np.ones(f.n)).max() + subnormal[f.b_dtype] * b_scale * np.abs(a).sum(axis=1).max())
    assert np.all(np.abs(ref - a @ b) <= fp8_bound + tiny)


def test_outputs_ignoring_a_scales_or_b_scales_fail(written):
    folder, case, columns = written
    ref, _ = check.reference(folder, case)
    good = ref.astype(np.float32)
    _, problems = verdict(folder, case, {"good": write_column(columns, folder, case, good, "ok")})
    assert problems == []
    a_scales = manifest.load_array(folder, case, "a_scales")
    b_scales = manifest.load_array(folder, case, "b_scales")
    # Without scales the elements are off by the scales' size (amax / 448 or / 57344): far out.
    wrong = np.clip(good / (float(np.median(a_scales)) * float(np.median(b_scales))), -6e4, 6e4).astype(np.float32)
    _, problems = verdict(folder, case, {"good": write_column(columns, folder, case, good, "ok"),
                                         "unscaled": write_column(columns, folder, case, wrong, "ok")})
    assert any(p.startswith(f"{case.id} [unscaled]") for p in problems)
