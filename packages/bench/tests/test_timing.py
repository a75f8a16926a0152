"""timing.time_host_rounds: a case's contenders timed together, in rotating rounds."""

import time

import pytest

from bsrmm_bench import timing


def test_rounds_run_every_contender_once_each_in_a_rotating_order():
    calls = []
    runs = {name: (lambda i, name=name: calls.append(name)) for name in "abc"}
    stats = timing.time_host_rounds(runs, 1, timing.Budget(warmup_runs=0, min_runs=3, max_runs=3, seconds=0.0))
    assert calls == list("abc" "bca" "cab")
    assert all(stats[name]["runs"] == 3 and stats[name]["timer"] == "perf_counter, interleaved rounds" for name in "abc")


def test_a_contender_stops_as_time_host_would_while_the_others_go_on():
    runs = {"slow": lambda i: time.sleep(0.02), "fast": lambda i: None}
    stats = timing.time_host_rounds(runs, 1, timing.Budget(warmup_runs=1, min_runs=2, max_runs=6, seconds=0.03))
    assert stats["slow"]["runs"] == 2 and stats["slow"]["median"] >= 20  # 2 runs pass 0.03 s
    assert stats["fast"]["runs"] == 6  # never reaches 0.03 s: max_runs


def test_a_contender_that_raises_leaves_the_rounds():
    seen = []

    def broken(i):
        if len(seen) >= 1:
            raise RuntimeError("lost the device")
        seen.append(i)

    stats = timing.time_host_rounds({"ok": lambda i: None, "broken": broken}, 1,
                                    timing.Budget(warmup_runs=0, min_runs=4, max_runs=4, seconds=0.0))
    assert stats["ok"]["runs"] == 4
    assert isinstance(stats["broken"], RuntimeError) and "lost the device" in str(stats["broken"])


@pytest.mark.parametrize("sets", [1, 3])
def test_each_contender_cycles_its_operand_sets(sets):
    got = {"a": [], "b": []}
    runs = {name: (lambda i, name=name: got[name].append(i)) for name in got}
    timing.time_host_rounds(runs, sets, timing.Budget(warmup_runs=0, min_runs=4, max_runs=4, seconds=0.0))
    assert got["a"] == got["b"] == [i % sets for i in range(4)]
