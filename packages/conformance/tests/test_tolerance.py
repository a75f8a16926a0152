"""The one tolerance definition: its value, that real accumulations stay inside it, and that the
errors a layout bug makes do not."""

import numpy as np
import pytest

from bsrmm_conformance import tolerance


def test_bound_is_the_stated_formula():
    u32 = 2.0**-24
    assert tolerance.bound("float32", 0, 1.0, 1.0) == pytest.approx(8 * 3 * u32)
    assert tolerance.bound("float16", 100, 2.0, -0.5) == pytest.approx(8 * (102 * u32 * 2 + 2.0**-11 * 0.5))
    assert tolerance.bound("bfloat16", 100, 2.0, 0.5) == pytest.approx(8 * (102 * u32 * 2 + 2.0**-8 * 0.5))
    assert tolerance.bound("float64", 10, 1.0, 0.0) == pytest.approx(8 * 12 * 2.0**-53)


def test_zero_magnitude_allows_nothing():
    # An empty row with no C and no bias must come out exactly 0.
    assert tolerance.bound("bfloat16", 4096, np.zeros(3), np.zeros(3)).tolist() == [0, 0, 0]
    assert tolerance.excess(np.array([0.0, -0.0, 1e-30]), np.zeros(3), np.zeros(3)).tolist() == [0, 0, np.inf]


@pytest.mark.parametrize("bad", [{"dtype": "int8", "k": 1}, {"dtype": "float32", "k": -1}])
def test_bad_arguments_are_refused(bad):
    with pytest.raises(ValueError):
        tolerance.bound(bad["dtype"], bad["k"], 1.0, 1.0)


@pytest.mark.parametrize("dtype,store", [("float32", np.float32), ("float16", np.float16), ("float64", np.float64)])
def test_sequential_accumulation_stays_inside(dtype, store):
    """A k-term dot product summed one term at a time in the accumulator type (the worst order),
    then rounded to the output type, is within the bound for every row."""
    rng = np.random.default_rng(1)
    k = 4096
    a = rng.uniform(-1, 1, (64, k)).astype(store).astype(np.float64)
    b = rng.uniform(-1, 1, k).astype(store).astype(np.float64)
    acc_type = np.float64 if dtype == "float64" else np.float32
    acc = np.zeros(64, dtype=acc_type)
    for i in range(k):
        acc = (acc + (a[:, i] * b[i]).astype(acc_type)).astype(acc_type)
    out = acc.astype(store).astype(np.float64)
    ref = a @ b
    ratio = tolerance.excess(out, ref, tolerance.bound(dtype, k, np.abs(a) @ np.abs(b), ref))
    assert ratio.max() <= 1


def test_a_misplaced_element_is_far_outside():
    """What a layout mistake produces (another element of the product) is many bounds away."""
    rng = np.random.default_rng(2)
    a, b = rng.uniform(-1, 1, (32, 64)), rng.uniform(-1, 1, (64, 8))
    ref, magnitude = a @ b, np.abs(a) @ np.abs(b)
    ratio = tolerance.excess(ref.T.reshape(32, 8), ref, tolerance.bound("bfloat16", 64, magnitude, ref))
    assert np.median(ratio) > 10


def test_nan_and_inf():
    x = np.array([np.nan, np.nan, 1.0, np.inf, np.inf])
    y = np.array([np.nan, 1.0, np.nan, np.inf, -np.inf])
    assert tolerance.excess(x, y, np.ones(5)).tolist() == [0, np.inf, np.inf, 0, np.inf]
