"""The PRNG against an independent pure-Python SplitMix64, the bit recipes of PRNG.md §4-5, and
the published test vectors."""

import json
import struct

import numpy as np
import pytest

from bsrmm_bench import prng, vectors

MASK = 2**64 - 1


def splitmix64_sequence(state: int, count: int) -> list[int]:
    """Textbook sequential SplitMix64 on Python ints: the reference the counter form must match."""
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def py_mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def test_mix64_is_splitmix64_first_output_from_zero():
    assert splitmix64_sequence(0, 1)[0] == 0xE220A8397B1DCDAF
    assert int(prng.mix64(np.array([0x9E3779B97F4A7C15], dtype=np.uint64))[0]) == 0xE220A8397B1DCDAF


@pytest.mark.parametrize("seed,stream", [(0, 1), (1, 3), (42, 4), (2**63 + 5, 21), (123456789, 2)])
def test_draws_equal_sequential_splitmix64_from_the_key(seed, stream):
    key = py_mix64(py_mix64(seed) ^ stream)
    assert int(prng.stream_key(seed, stream)) == key
    expected = splitmix64_sequence(key, 50)
    got = prng.draw_range(seed, stream, 0, 50)
    assert [int(x) for x in got] == expected
    # random access: any counter alone gives the same value
    assert int(prng.draw(seed, stream, np.array([37], dtype=np.uint64))[0]) == expected[37]


def test_streams_and_seeds_differ():
    a = prng.draw_range(1, 3, 0, 1000)
    assert not np.array_equal(a, prng.draw_range(2, 3, 0, 1000))
    assert not np.array_equal(a, prng.draw_range(1, 4, 0, 1000))


def test_unit_range_and_exactness():
    assert prng.unit_from_u64(np.array([0], dtype=np.uint64))[0] == -1.0
    assert prng.unit_from_u64(np.array([MASK], dtype=np.uint64))[0] == 1.0 - 2.0**-23
    u = prng.draw_range(7, 3, 0, 100000)
    x = prng.unit_from_u64(u)
    assert x.dtype == np.float32 and x.min() >= -1.0 and x.max() < 1.0
    # exact: the float equals the integer recipe computed with Python ints
    for ui, xi in zip(u[:200].tolist(), x[:200].tolist()):
        assert xi == (ui >> 40) * 2.0**-23 - 1.0
    assert abs(float(x.mean())) < 0.01 and abs(float(x.std()) - 1 / np.sqrt(3)) < 0.01


def test_bounded_and_coin():
    u = prng.draw_range(3, 1, 0, 20000)
    b = prng.bounded(u, 10)
    assert b.min() == 0 and b.max() == 9
    assert int(prng.bounded(np.array([MASK], dtype=np.uint64), 10)[0]) == 9
    assert all(int(v) == ((int(w) >> 32) * 1000003) >> 32 for v, w in zip(prng.bounded(u[:100], 1000003), u[:100]))
    assert not prng.coin_below(u, 0.0).any() and prng.coin_below(u, 1.0).all()
    assert abs(prng.coin_below(u, 0.3).mean() - 0.3) < 0.02
    with pytest.raises(ValueError, match="probability"):
        prng.coin_below(u, 1.5)


def test_float16_rounding_is_ieee_round_to_nearest_even():
    x = prng.unit_from_u64(prng.draw_range(9, 3, 0, 5000))
    got = prng.round_to_dtype(x, "float16")
    for xi, gi in zip(x.tolist(), got.tolist()):
        assert gi == struct.unpack("<e", struct.pack("<e", xi))[0]  # struct rounds half to even


def test_bfloat16_rounding_ties_to_even():
    one = 1.0
    cases = {one + 2**-8: one, one + 3 * 2**-8: one + 2**-6, one + 2**-9: one, -(one + 2**-7 + 2**-9): -(one + 2**-7)}
    for value, expected in cases.items():
        assert prng.round_to_dtype(np.array([value], np.float32), "bfloat16")[0] == expected
    # every rounded value is a bfloat16: low 16 bits zero
    x = prng.round_to_dtype(prng.unit_from_u64(prng.draw_range(2, 3, 0, 1000)), "bfloat16")
    assert not (x.view(np.uint32) & 0xFFFF).any()


def test_round_to_dtype_rejects_unknown_dtype():
    with pytest.raises(ValueError, match="dtype must be one of"):
        prng.round_to_dtype(np.zeros(2, np.float32), "int8")


def test_published_vectors_match_this_implementation():
    assert vectors.check() == []


def test_published_draws_match_independent_splitmix64():
    doc = json.loads(vectors.VECTORS_PATH.read_text())
    for entry in doc["draws"]:
        key = py_mix64(py_mix64(int(entry["seed"])) ^ entry["stream"])
        assert int(entry["key"]) == key
        for counter, u in zip(entry["counters"], entry["u64"]):
            assert int(u) == py_mix64((key + 0x9E3779B97F4A7C15 * (int(counter) + 1)) & MASK)
