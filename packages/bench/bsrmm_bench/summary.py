"""A case's summary (ours against the best of all peers, the best sparse peer and the dense
GEMM; the memory bandwidth it achieved) and a run's worst cell. The runner stores summaries in
the result JSON; the table and the report recompute them from the results, so a result written
before a rule changed is shown under today's rule."""

from __future__ import annotations


def summarize(record: dict, bytes_moved: int | None = None, bandwidth: float | None = None) -> dict:
    """Ours against the best of ALL peers (sparse and dense alike: "never behind" means behind
    none of them), and separately against the best sparse peer and the dense GEMM (medians).
    With `bytes_moved` (A + B + C) and the device's memory `bandwidth` (bytes/s), also the
    fraction of that bandwidth ours achieved on the bytes that must move."""
    ok = {r["impl"]: r for r in record["results"] if r["status"] == "ok"}
    mine = next((r for r in ok.values() if r["role"] == "ours"), None)
    peers_ok = [r for r in ok.values() if r["role"] != "ours"]
    sparse = [r for r in peers_ok if r["role"] == "sparse"]
    dense = min((r for r in peers_ok if r["role"] == "dense"), key=_median, default=None)
    best = min(peers_ok, key=_median, default=None)
    best_sparse = min(sparse, key=_median, default=None)
    out = {"best_peer": best["impl"] if best else None, "best_peer_ms": _median(best) if best else None,
           "best_sparse_peer": best_sparse["impl"] if best_sparse else None,
           "best_sparse_peer_ms": _median(best_sparse) if best_sparse else None,
           "dense_peer": dense["impl"] if dense else None, "dense_ms": _median(dense) if dense else None,
           "ours_ms": _median(mine) if mine else None, "speedup_vs_best_peer": None,
           "speedup_vs_best_sparse_peer": None, "speedup_vs_dense": None,
           "bytes_moved": bytes_moved, "ours_bytes_per_s": None, "bandwidth_fraction": None}
    if mine and best:
        out["speedup_vs_best_peer"] = _median(best) / _median(mine)
    if mine and best_sparse:
        out["speedup_vs_best_sparse_peer"] = _median(best_sparse) / _median(mine)
    if mine and dense:
        out["speedup_vs_dense"] = _median(dense) / _median(mine)
    if mine and bytes_moved:
        out["ours_bytes_per_s"] = bytes_moved / (_median(mine) * 1e-3)
        if bandwidth:
            out["bandwidth_fraction"] = out["ours_bytes_per_s"] / bandwidth
    return out


def _median(r: dict) -> float:
    return r["time_ms"]["median"]





def of(record: dict, doc: dict | None = None) -> dict:
    """The record's summary under today's rules (bytes moved and the run's bandwidth as stored)."""
    stored = record.get("summary") or {}
    bytes_moved = stored.get("bytes_moved") or (record.get("operands") or {}).get("bytes_per_set")
    bw = (((doc or {}).get("environment") or {}).get("memory_bandwidth") or {}).get(record.get("device"), {})
    return summarize(record, bytes_moved, bw.get("bytes_per_s"))


def worst_cell(doc: dict) -> dict | None:
    """The case where ours is furthest behind (or least ahead of) the best of all peers:
    {"id", "device", "ratio", "ours_ms", "best_peer", "best_peer_ms"}; None when no case has both
    an ours time and a peer time. Cases where ours did not run ok are counted in "not_ok"."""
    worst, not_ok = None, []
    for record in doc["cases"]:
        s = of(record, doc)
        mine = next((r for r in record["results"] if r["role"] == "ours"), None)
        if mine is not None and mine["status"] != "ok":
            not_ok.append(f"{record['device']} {record['id']}: {mine['status']}")
        ratio = s["speedup_vs_best_peer"]
        if ratio is None:
            continue
        if worst is None or ratio < worst["ratio"]:
            worst = {"id": record["id"], "device": record["device"], "ratio": ratio, "ours_ms": s["ours_ms"],
                     "best_peer": s["best_peer"], "best_peer_ms": s["best_peer_ms"]}
    if worst is not None:
        worst["not_ok"] = not_ok
    return worst
