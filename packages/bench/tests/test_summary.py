"""x best peer is against the best of ALL peers (sparse and dense), and the worst cell is the
case furthest behind it."""

import pytest

from bsrmm_bench import summary, table


def result(impl, role, ms, status="ok"):
    return {"impl": impl, "label": impl, "role": role, "status": status, "reason": None if status == "ok" else "why",
            "time_ms": {"median": ms, "p10": ms, "p90": ms} if status == "ok" else None, "tflops": 1.0 if status == "ok" else None,
            "variant": None, "error": 0.0}


def record(case_id, ours_ms, peers, n=16, block=(16, 16), device="cpu"):
    return {"id": case_id, "device": device, "operands": {"bytes_per_set": 1_000_000},
            "case": {"n": n, "block": list(block), "dtype": "float32", "f32_mode": "exact", "pattern": {"kind": "uniform"}},
            "results": [result("bsrmm", "ours", ours_ms) if ours_ms else result("bsrmm", "ours", 0, "failed")]
            + [result(name, role, ms) for name, role, ms in peers]}


def test_best_peer_is_the_fastest_of_all_peers_dense_included():
    s = summary.summarize(record("a", 2.0, [("scipy.bsr", "sparse", 8.0), ("mkl.csr", "sparse", 4.0),
                                            ("numpy.dense", "dense", 1.0)]))
    assert s["best_peer"] == "numpy.dense" and s["speedup_vs_best_peer"] == pytest.approx(0.5)
    assert s["best_sparse_peer"] == "mkl.csr" and s["speedup_vs_best_sparse_peer"] == pytest.approx(2.0)
    assert s["speedup_vs_dense"] == pytest.approx(0.5)


def test_bandwidth_fraction():
    s = summary.summarize(record("a", 1.0, []), bytes_moved=3_000_000, bandwidth=6e9)
    assert s["ours_bytes_per_s"] == pytest.approx(3e9) and s["bandwidth_fraction"] == pytest.approx(0.5)


def test_worst_cell_is_the_smallest_ratio():
    doc = {"cases": [
        record("fast", 1.0, [("scipy.bsr", "sparse", 3.0)]),
        record("behind", 2.0, [("scipy.bsr", "sparse", 9.0), ("numpy.dense", "dense", 1.5)]),
        record("no-peer", 1.0, []),
        record("broken", None, [("scipy.bsr", "sparse", 1.0)]),
    ]}
    worst = summary.worst_cell(doc)
    assert worst["id"] == "behind" and worst["ratio"] == pytest.approx(0.75) and worst["best_peer"] == "numpy.dense"
    assert worst["not_ok"] == ["cpu broken: failed"]
    text = table.render(doc)
    assert "worst cell: cpu behind: 0.75x the best peer (numpy.dense" in text
    assert "cpu bsrmm: ran in 3 case(s); not in 1: 1x failed: why" in text


def test_old_results_are_shown_under_todays_rule():
    old = record("old", 2.0, [("scipy.bsr", "sparse", 4.0), ("numpy.dense", "dense", 1.0)])
    old["summary"] = {"best_peer": "scipy.bsr", "speedup_vs_best_peer": 2.0}  # written by the sparse-only rule
    header, rows, _ = table.rows_for({"cases": [old]}, "cpu")
    row = dict(zip(header, rows[0]))
    assert row["x best peer"] == "0.50" and row["best peer"] == "numpy.dense" and row["x best sparse"] == "2.00"
