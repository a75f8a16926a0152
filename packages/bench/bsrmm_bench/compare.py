"""`compare OLD NEW`: flags slowdowns beyond run-to-run noise, using the spread each run recorded.

A timing is a regression when the median slowed by more than `min_change` AND the two runs'
distributions do not overlap: NEW's p10 is above OLD's p90 (an improvement is the mirror image).
Noise moves medians by a fraction of the p10-p90 spread, so it never separates the intervals; a
real slowdown larger than the spread does. A result that was ok and now fails or is wrong is a
regression whatever its time.

Only like is compared with like: a device's cases are compared only when both runs measured them
on the same machine (the GPU's name for cuda cases, the CPU model and usable cores for cpu
cases). Runs from different machines differ by the machine, not by the code: their cases are
listed as not compared, with a loud warning, and never counted as regressions."""

from __future__ import annotations


def _index(doc: dict, impls: list[str] | None) -> dict:
    out = {}
    for record in doc["cases"]:
        for r in record["results"]:
            if impls is None or r["impl"] in impls:
                out[(record["device"], record["id"], r["impl"])] = r
    return out


def machine(doc: dict, device: str) -> str | None:
    """What a device's timings depend on besides the code: the GPU's name for cuda, the CPU model
    and its usable cores for cpu; None when the result does not say."""
    env = doc.get("environment") or {}
    if device == "cuda":
        return (env.get("gpu") or {}).get("name")
    if env.get("cpu_model") is None:
        return None
    return f"{env['cpu_model']} ({env.get('cpu_affinity') or env.get('cpu_count')} cores usable)"


def compare(old: dict, new: dict, *, min_change: float = 0.05, impls: list[str] | None = ("bsrmm",)) -> dict:
    impls = list(impls) if impls is not None else None
    a, b = _index(old, impls), _index(new, impls)
    rows, regressions, improvements, notes, mismatched = [], [], [], [], []
    unlike = {}
    for device in sorted({k[0] for k in a} & {k[0] for k in b}):
        m_old, m_new = machine(old, device), machine(new, device)
        if m_old and m_new and m_old != m_new:
            unlike[device] = (m_old, m_new)
            mismatched.append(f"{device}: OLD ran on {m_old!r}, NEW on {m_new!r}: its cases are not compared "
                              f"(timings from different machines measure the machines)")
    for key in sorted(a.keys() | b.keys()):
        device, case_id, impl = key
        if device in unlike:
            continue
        before, after = a.get(key), b.get(key)
        where = f"{device} {case_id} {impl}"
        if after is None:
            notes.append(f"{where}: not in NEW")
            continue
        if before is None:
            notes.append(f"{where}: new in NEW")
            continue
        if before["status"] == "ok" and after["status"] != "ok":
            serious = after["status"] in ("failed", "wrong") or after["role"] == "ours"
            line = f"{where}: was ok, now {after['status']} ({after.get('reason')})"
            (regressions if serious else notes).append(line)
            continue
        if before["status"] != "ok" or after["status"] != "ok":
            if before["status"] != after["status"]:
                notes.append(f"{where}: {before['status']} -> {after['status']}")
            continue
        t0, t1 = before["time_ms"], after["time_ms"]
        change = t1["median"] / t0["median"] - 1.0
        row = {"where": where, "old_ms": t0["median"], "new_ms": t1["median"], "change": change,
               "old_spread": (t0["p10"], t0["p90"]), "new_spread": (t1["p10"], t1["p90"]), "verdict": "same"}
        if change > min_change and t1["p10"] > t0["p90"]:
            row["verdict"] = "SLOWER"
            regressions.append(f"{where}: {t0['median']:.4g} -> {t1['median']:.4g} ms ({change:+.1%}; "
                               f"p10 {t1['p10']:.4g} above old p90 {t0['p90']:.4g})")
        elif change < -min_change and t1["p90"] < t0["p10"]:
            row["verdict"] = "faster"
            improvements.append(f"{where}: {t0['median']:.4g} -> {t1['median']:.4g} ms ({change:+.1%})")
        rows.append(row)
    return {"rows": rows, "regressions": regressions, "improvements": improvements, "notes": notes,
            "mismatched": mismatched, "min_change": min_change}


def render(outcome: dict) -> str:
    lines = [f"{'case / implementation':<80} {'old ms':>10} {'new ms':>10} {'change':>8}  verdict"]
    for r in outcome["rows"]:
        lines.append(f"{r['where']:<80} {r['old_ms']:>10.4g} {r['new_ms']:>10.4g} {r['change']:>+8.1%}  {r['verdict']}")
    if outcome["improvements"]:
        lines += ["", "improvements:"] + [f"  {x}" for x in outcome["improvements"]]
    if outcome["notes"]:
        lines += ["", "notes:"] + [f"  {x}" for x in outcome["notes"]]
    lines.append("")
    for m in outcome.get("mismatched", []):
        lines.append(f"WARNING: NOT COMPARED, different machines: {m}")
    if outcome["regressions"]:
        lines += [f"{len(outcome['regressions'])} regression(s) beyond noise (min change {outcome['min_change']:.0%}):"]
        lines += [f"  {x}" for x in outcome["regressions"]]
    else:
        lines.append(f"no regression beyond noise (min change {outcome['min_change']:.0%}, p10/p90 intervals)")
    return "\n".join(lines)
