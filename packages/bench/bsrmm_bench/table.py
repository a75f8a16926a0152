"""The terminal table printed at the end of a run (and embedded in the markdown report)."""

from __future__ import annotations

import re

from . import summary as summary_mod

_STATUS_MARK = {"unavailable": "n/a", "failed": "FAILED", "wrong": "WRONG"}


def rate_unit(device: str) -> tuple[str, float]:
    """Effective rate unit: TFLOP/s on GPUs, GFLOP/s on the host."""
    return ("TFLOP/s", 1.0) if device == "cuda" else ("GFLOP/s", 1e3)


def rows_for(doc: dict, device: str) -> tuple[list[str], list[list[str]], list[str]]:
    """Header, rows and footnotes (one per distinct reason) for one device's cases."""
    records = [r for r in doc["cases"] if r["device"] == device]
    unit, scale = rate_unit(device)
    peer_names: list[str] = []
    labels: dict[str, str] = {}
    for record in records:
        for r in record["results"]:
            if r["role"] != "ours" and r["impl"] not in peer_names:
                peer_names.append(r["impl"])
                labels[r["impl"]] = r["label"]
    header = ["case", "ours ms", f"ours {unit}"] + [f"{labels[p]} ms" for p in peer_names] + [
        "best peer", "x best peer", "x best sparse", "x dense", "ours % BW", "variant", "ours error"]
    notes: list[str] = []

    def mark(r: dict) -> str:
        if r["status"] == "ok":
            return f"{r['time_ms']['median']:.3f}"
        note = f"{r['label']}: {r['reason']}"
        if note not in notes:
            notes.append(note)
        return f"{_STATUS_MARK.get(r['status'], r['status'])} [{notes.index(note) + 1}]"

    rows = []
    for record in records:
        by_name = {r["impl"]: r for r in record["results"]}
        mine = next((r for r in record["results"] if r["role"] == "ours"), None)
        summary = summary_mod.of(record, doc)
        row = [record["id"]]
        if mine is None:
            row += ["-", "-"]
        else:
            row.append(mark(mine))
            row.append(f"{mine['tflops'] * scale:.1f}" if mine["status"] == "ok" else "-")
        row += [mark(by_name[p]) if p in by_name else "-" for p in peer_names]
        s, d = summary.get("speedup_vs_best_peer"), summary.get("speedup_vs_dense")
        sp, bw = summary.get("speedup_vs_best_sparse_peer"), summary.get("bandwidth_fraction")
        row.append(labels.get(summary["best_peer"], "-") if summary.get("best_peer") else "-")
        row.append(f"{s:.2f}" if s else "-")
        row.append(f"{sp:.2f}" if sp else "-")
        row.append(f"{d:.2f}" if d else "-")
        row.append(f"{100 * bw:.0f}" if bw else "-")
        row.append((mine or {}).get("variant") or "-")
        err = (mine or {}).get("error")
        row.append(f"{err:.1e}" if err is not None else "-")
        rows.append(row)
    return header, rows, notes


LEGEND = ("x best peer = the fastest peer's median / bsrmm's, over ALL peers (sparse and dense); x best sparse: "
          "sparse peers only; x dense: the dense GEMM; ours % BW: (A + B + C bytes) / bsrmm's time as a share of the "
          "device's measured memory bandwidth")


def render(doc: dict) -> str:
    out = []
    for device in ("cpu", "cuda"):
        header, rows, notes = rows_for(doc, device)
        if not rows:
            continue
        out.append(f"{device}: {len(rows)} case(s), times are medians")
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        line = lambda cells: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        out.append(line(header))
        out.append("  ".join("-" * w for w in widths))
        out += [line(r) for r in rows]
        out += [f"  [{i}] {n}" for i, n in enumerate(notes, start=1)]
        out.append("")
    if out:
        out.append(LEGEND)
    worst = summary_mod.worst_cell(doc)
    if worst:
        out.append(f"worst cell: {worst['device']} {worst['id']}: {worst['ratio']:.2f}x the best peer "
                   f"({worst['best_peer']} {worst['best_peer_ms']:.4g} ms, bsrmm {worst['ours_ms']:.4g} ms)")
    out += peer_availability(doc)
    for skipped in doc.get("skipped", []):
        out.append(f"skipped {len(skipped['cases'])} {skipped['device']} case(s): {skipped['reason']}")
    return "\n".join(out)


def peer_availability(doc: dict) -> list[str]:
    """Which implementations ran and which could not, and why (the first reason of each kind)."""
    counts: dict = {}
    for record in doc["cases"]:
        for r in record["results"]:
            c = counts.setdefault((record["device"], r["label"]), {"ok": 0, "reasons": {}})
            if r["status"] == "ok":
                c["ok"] += 1
            else:
                reason = f"{r['status']}: {(r['reason'] or '')[:160]}"
                # one group per kind of reason: the same words with other sizes in them
                group = c["reasons"].setdefault(re.sub(r"\d+(\.\d+)?", "#", reason), [0, reason])
                group[0] += 1
    lines = []
    for (device, label), c in counts.items():
        kinds = sorted(((n, why, "#" in key) for key, (n, why) in c["reasons"].items()), key=lambda g: -g[0])
        missed = "; ".join(f"{n}x {why}" + (" (e.g.)" if n > 1 and varies else "") for n, why, varies in kinds[:3])
        lines.append(f"{device} {label}: ran in {c['ok']} case(s)" + (f"; not in {sum(g[0] for g in kinds)}: {missed}" if missed else ""))
    return ["implementations:"] + ["  " + line for line in lines] if lines else []


def markdown(doc: dict) -> str:
    out = []
    for device in ("cpu", "cuda"):
        header, rows, notes = rows_for(doc, device)
        if not rows:
            continue
        out.append(f"### {device}\n")
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join("---" for _ in header) + "|")
        out += ["| " + " | ".join(f"`{c}`" if i == 0 else c for i, c in enumerate(r)) + " |" for r in rows]
        if notes:
            out.append("")
            out += [f"{i}. {n}" for i, n in enumerate(notes, start=1)]
        out.append("")
    return "\n".join(out)
