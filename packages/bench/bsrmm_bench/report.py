"""`report`: a result JSON -> report.md, report.html and plots (PNG files for the markdown; the
same plots as SVG inside the HTML, not written beside it: a second copy of every plot made the
committed results a fifth larger, perf-log 96): effective rate vs
density per block size, speed-up over the best peer (all peers, dense included) per case and
against N and block size, and speed-up over the dense GEMM of the same problem. The report leads
with the worst cell and lists the memory-bound cells' share of the measured memory bandwidth."""

from __future__ import annotations

import html
import io
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from . import summary as summary_mod
from . import table

PLOTS = {
    "rate_vs_density": "Effective rate vs density, per block size",
    "speedup_best_peer": "Speed-up of bsrmm over the best peer (all peers, dense included)",
    "ratio_vs_n": "bsrmm / best peer against N",
    "ratio_vs_block": "bsrmm / best peer against block size",
    "speedup_dense": "Speed-up of bsrmm over the dense GEMM of the same problem",
}
# The targets the plots draw, as packages/bench/README.md ("Targets") states them.
GOAL_SOURCE = "packages/bench/README.md, Targets"
GOAL_BEST_PEER = 1.0  # never behind the best peer, dense included
GOAL_DENSE = 0.95  # within 5% of dense cuBLAS where the dense fallback is the answer
GOAL_BANDWIDTH = 0.7  # memory-bound cells: 70% of the measured bandwidth on A + B + C
# Memory-bound cells for the bandwidth table: N this small moves more bytes than it computes.
MEMORY_BOUND_N = 16


def default_dir(result_path: Path) -> Path:
    return result_path.parent / f"report-{result_path.stem}"


def write(doc: dict, out_dir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # files only; no display on CI or the GPU machine
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = {
        "rate_vs_density": plot_rate_vs_density(doc),
        "speedup_best_peer": plot_speedups(doc, "speedup_vs_best_peer", "x over the best peer (all peers)", goal=GOAL_BEST_PEER),
        "ratio_vs_n": plot_ratio_against(doc, "n"),
        "ratio_vs_block": plot_ratio_against(doc, "block"),
        "speedup_dense": plot_speedups(doc, "speedup_vs_dense", "x over dense GEMM (same problem)", goal=GOAL_DENSE),
    }
    svgs = {}
    for name, fig in figures.items():
        fig.savefig(out_dir / f"{name}.png", dpi=130, bbox_inches="tight")
        svg = io.StringIO()
        fig.savefig(svg, format="svg", bbox_inches="tight")
        svgs[name] = svg.getvalue()
    import matplotlib.pyplot as plt

    for fig in figures.values():
        plt.close(fig)
    (out_dir / "report.md").write_text(markdown(doc))
    (out_dir / "report.html").write_text(html_page(doc, svgs))
    return out_dir


def families(doc: dict) -> dict:
    """Cases that differ only in block size and density, keyed by everything else:
    {family label: {block label: [(density, record), ...]}} for families with a density sweep."""
    groups: dict = defaultdict(lambda: defaultdict(list))
    for record in doc["cases"]:
        c = record["case"]
        if "density" not in c["pattern"]:
            continue
        rest = {k: v for k, v in c["pattern"].items() if k != "density"}
        prec = c["dtype"] + ("-tf32" if c["dtype"] == "float32" and c["f32_mode"] == "tf32" else "")
        label = f"{record['device']} {prec} {c['m']}x{c['k']}x{c['n']} " + " ".join(
            [rest.pop("kind")] + [f"{k}={v}" for k, v in sorted(rest.items())]
        )
        if c.get("kind"):  # the training suite: one family per op / MLP / run
            label += f" {c['op']}"
        if c["layout_b"] != "row" or c["layout_c"] != "row" or c["transpose_a"]:
            label += f" {c['layout_b'][0]}{c['layout_c'][0]}" + (" A^T" if c["transpose_a"] else "")
        bh, bw = c["block"]
        groups[label][f"{bh}" if bh == bw else f"{bh}x{bw}"].append((c["pattern"]["density"], record))
    return {
        fam: {blk: sorted(points, key=lambda p: p[0]) for blk, points in blocks.items()}
        for fam, blocks in groups.items()
        if any(len(points) >= 2 for points in blocks.values())
    }


def plot_rate_vs_density(doc: dict):
    import matplotlib.pyplot as plt

    fams = families(doc)
    if not fams:
        return _placeholder("No density sweep in this run (every case has a single density)")
    fig, axes = plt.subplots(len(fams), 1, figsize=(10, 4.2 * len(fams)), squeeze=False)
    for ax, (fam, blocks) in zip(axes[:, 0], fams.items()):
        device = fam.split()[0]
        unit, scale = table.rate_unit(device)
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for color, (block, points) in zip(colors * 4, sorted(blocks.items(), key=lambda kv: _block_key(kv[0]))):
            d = [p[0] for p in points]
            ours = [_rate(r, "ours", scale) for _, r in points]
            peer = [_best_peer_rate(r, scale) for _, r in points]
            ax.plot(d, ours, "-o", color=color, lw=2, label=f"b{block} bsrmm")
            ax.plot(d, peer, "--s", color=color, lw=1.2, ms=4, alpha=0.8, label=f"b{block} best sparse peer")
        # The dense GEMM's time does not depend on the block size: one line, averaged over blocks,
        # at the rate it would need to match (sparse work / dense time).
        by_density = defaultdict(list)
        for points in blocks.values():
            for density, record in points:
                by_density[density].append(_rate(record, "dense", scale))
        xs = sorted(by_density)
        ax.plot(xs, [float(np.nanmean(by_density[x])) if not all(np.isnan(by_density[x])) else float("nan") for x in xs],
                ":", color="black", lw=1.2, label="dense GEMM (same nnz work / its time)")
        if all(np.isnan(_rate(r, "ours", scale)) for pts in blocks.values() for _, r in pts):
            ax.text(0.98, 0.95, "no bsrmm results in this run", transform=ax.transAxes, ha="right", va="top", color="gray")
        ax.set_xscale("log")
        densities = sorted({p[0] for pts in blocks.values() for p in pts})
        ax.set_xticks(densities)
        ax.set_xticklabels([f"{x:g}" for x in densities])
        ax.minorticks_off()
        ax.set_xlabel("block density")
        ax.set_ylabel(f"effective {unit} (2 nnzb bh bw N / t)")
        ax.set_title(fam, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def plot_speedups(doc: dict, key: str, xlabel: str, goal: float):
    import matplotlib.pyplot as plt

    points = [(r["id"], v) for r in doc["cases"] if (v := summary_mod.of(r, doc).get(key))]
    if not points:
        return _placeholder("No case has both a bsrmm time and a peer time to compare\n(bsrmm or the peers missing in this run)")
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.28 * len(points)))
    labels = [p[0] for p in points][::-1]
    values = [p[1] for p in points][::-1]
    colors = ["#2a9d8f" if v >= goal else "#e76f51" for v in values]
    ax.barh(range(len(values)), values, color=colors)
    ax.set_yticks(range(len(values)))
    ax.set_yticklabels(labels, fontsize=7)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.2f}", va="center", fontsize=7)
    ax.axvline(1.0, color="black", lw=1, label="parity (1x)" + (f": the goal ({GOAL_SOURCE})" if goal == 1.0 else ""))
    if goal != 1.0:
        ax.axvline(goal, color="gray", ls="--", lw=1, label=f"goal {goal:g}x ({GOAL_SOURCE})")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_xlabel(xlabel)
    ax.set_xlim(0, max(values + [goal, 1.0]) * 1.15)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def plot_ratio_against(doc: dict, axis: str):
    """bsrmm's speed-up over the best peer for every case with both, against N or the block size
    (bh * bw, labelled bh x bw), one colour per precision, log scales; the parity line is the goal."""
    import matplotlib.pyplot as plt

    points = []
    for record in doc["cases"]:
        ratio = summary_mod.of(record, doc)["speedup_vs_best_peer"]
        if ratio:
            c = record["case"]
            prec = c["dtype"] + ("-tf32" if c["dtype"] == "float32" and c["f32_mode"] == "tf32" else "")
            x = c["n"] if axis == "n" else c["block"][0] * c["block"][1]
            points.append((x, ratio, f"{record['device']} {prec}", c["block"]))
    if not points:
        return _placeholder("No case has both a bsrmm time and a peer time to compare")
    fig, ax = plt.subplots(figsize=(9, 5))
    for group in sorted({p[2] for p in points}):
        xs = [p[0] for p in points if p[2] == group]
        ys = [p[1] for p in points if p[2] == group]
        ax.scatter(xs, ys, s=22, alpha=0.8, label=group)
    ax.axhline(1.0, color="black", lw=1, label=f"parity: the goal ({GOAL_SOURCE})")
    worst = min(points, key=lambda p: p[1])
    ax.annotate(f"worst {worst[1]:.2f}x", (worst[0], worst[1]), textcoords="offset points", xytext=(6, -10), fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    if axis == "block":
        ticks: dict = {}
        for p in sorted(points, key=lambda p: tuple(p[3])):
            ticks.setdefault(p[0], []).append(f"{p[3][0]}x{p[3][1]}")
        ax.set_xticks(sorted(ticks))
        ax.set_xticklabels(["/".join(dict.fromkeys(ticks[x])) for x in sorted(ticks)], rotation=60, fontsize=7)
        ax.minorticks_off()
        ax.set_xlabel("block (bh x bw, placed by bh * bw)")
    else:
        ax.set_xlabel("N (columns of B and C)")
    ax.set_ylabel("x over the best peer (all peers, dense included)")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def worst_cell_lines(doc: dict) -> list[str]:
    worst = summary_mod.worst_cell(doc)
    if worst is None:
        return ["**Worst cell**: none (no case has both a bsrmm time and a peer time).", ""]
    lines = [f"**Worst cell: {worst['ratio']:.2f}x the best peer** — {worst['device']} `{worst['id']}`: bsrmm "
             f"{worst['ours_ms']:.4g} ms, {worst['best_peer']} {worst['best_peer_ms']:.4g} ms "
             f"(goal: >= 1x everywhere, {GOAL_SOURCE})."]
    if worst["not_ok"]:
        lines.append(f"bsrmm did not run ok in {len(worst['not_ok'])} case(s): " + "; ".join(worst["not_ok"][:10]))
    return lines + [""]


def bandwidth_lines(doc: dict) -> list[str]:
    """The memory-bound cells (N <= MEMORY_BOUND_N): bytes that must move (A values + indices + B
    + C), bsrmm's achieved rate on them, and its share of the run's measured bandwidth."""
    bws = (doc.get("environment") or {}).get("memory_bandwidth") or {}
    rows = []
    for record in doc["cases"]:
        if record["case"]["n"] > MEMORY_BOUND_N:
            continue
        s = summary_mod.of(record, doc)
        if s["ours_bytes_per_s"] is None:
            continue
        rows.append((s["bandwidth_fraction"] or 0.0, record, s))
    if not rows:
        return []
    lines = [f"## Memory-bound cells (N <= {MEMORY_BOUND_N}): share of the measured memory bandwidth", ""]
    for device, bw in bws.items():
        if bw.get("bytes_per_s"):
            lines.append(f"- {device}: {bw['bytes_per_s'] / 1e9:.0f} GB/s ({bw.get('source')})"
                         + (f"; constant {bw['constant_bytes_per_s'] / 1e12:.2f} TB/s" if bw.get("constant_bytes_per_s") else ""))
    lines += ["", f"Goal: >= {GOAL_BANDWIDTH:.0%} of it on the bytes that must move ({GOAL_SOURCE}).", "",
              "| case | bytes moved | bsrmm ms | bsrmm GB/s | % of bandwidth | x best peer |", "|---|---|---|---|---|---|"]
    for fraction, record, s in sorted(rows, key=lambda r: r[0]):
        ratio = s["speedup_vs_best_peer"]
        lines.append(f"| {record['device']} `{record['id']}` | {s['bytes_moved'] / 1e6:.1f} MB | {s['ours_ms']:.4g} | "
                     f"{s['ours_bytes_per_s'] / 1e9:.0f} | {100 * fraction:.0f} | {f'{ratio:.2f}' if ratio else '-'} |")
    return lines + [""]


def markdown(doc: dict) -> str:
    env = doc.get("environment", {})
    gpu = env.get("gpu", {})
    versions = ", ".join(f"{k} {v}" for k, v in env.get("versions", {}).items() if v)
    lines = [
        f"# bsrmm benchmark: suite `{doc['suite']}`",
        "",
        f"- started {doc['started']}, finished {doc.get('finished') or '(unfinished)'}; filter `{doc.get('filter')}`",
        f"- CPU: {env.get('cpu_model')} ({env.get('cpu_affinity') or env.get('cpu_count')} threads usable)",
    ]
    if gpu:
        smi = gpu.get("nvidia_smi", {})
        lines.append(f"- GPU: {gpu.get('name')} (sm {gpu.get('capability')}, {gpu.get('sm_count')} SMs), driver "
                     f"{smi.get('driver_version')}, CUDA {gpu.get('cuda_runtime')}, SM clock {smi.get('clocks.sm')} / "
                     f"max {smi.get('clocks.max.sm')} MHz")
    threads = env.get("threads") or {}
    pools = threads.get("threadpools")
    if isinstance(pools, list):
        lines.append("- threads: " + ", ".join(f"{p.get('internal_api')} {p.get('num_threads')}" for p in pools)
                     + (f", torch {threads['torch_intra_op']}" if "torch_intra_op" in threads else ""))
    lines += [f"- versions: {versions}", f"- git commit: {env.get('git_commit')}", ""]
    lines = lines[:2] + worst_cell_lines(doc) + lines[2:]
    lines += [
        "Times are medians; effective rate = 2 * nnzb * bh * bw * N / time. Every output was checked "
        "against a float64 reference before timing (see each case's `reference` in the JSON). "
        + table.LEGEND + ".",
        "",
        table.markdown(doc),
    ]
    lines += [f"- {line.strip()}" for line in table.peer_availability(doc)[1:]] + [""]
    lines += bandwidth_lines(doc)
    for skipped in doc.get("skipped", []):
        lines.append(f"Skipped {len(skipped['cases'])} {skipped['device']} case(s): {skipped['reason']}\n")
    for name, title in PLOTS.items():
        lines += [f"## {title}", "", f"![{title}]({name}.png)", ""]
    return "\n".join(lines)


def html_page(doc: dict, svgs: dict) -> str:
    """The report as one page; `svgs` holds each plot's SVG text, by its name in PLOTS."""
    body = []
    for device in ("cpu", "cuda"):
        header, rows, notes = table.rows_for(doc, device)
        if not rows:
            continue
        body.append(f"<h2>{device}</h2><table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
        for r in rows:
            body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
        body.append("</table>")
        if notes:
            body.append("<ol>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ol>")
    for skipped in doc.get("skipped", []):
        body.append(f"<p>Skipped {len(skipped['cases'])} {skipped['device']} case(s): {html.escape(skipped['reason'])}</p>")
    for name, title in PLOTS.items():
        svg = svgs[name]
        body.append(f"<h2>{html.escape(title)}</h2><div class='plot'>{svg[svg.index('<svg'):]}</div>")
    env = html.escape(json.dumps(doc.get("environment", {}), indent=1))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>bsrmm benchmark: {html.escape(doc['suite'])}</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1400px}} table{{border-collapse:collapse;font-size:12px}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}} td:first-child{{text-align:left;font-family:monospace}}
.plot svg{{max-width:100%;height:auto}} pre{{background:#f6f6f6;padding:1em;font-size:11px}}</style></head>
<body><h1>bsrmm benchmark: suite {html.escape(doc['suite'])}</h1>
<p><b>{html.escape(worst_cell_lines(doc)[0].replace('**', '').replace('`', ''))}</b></p>
<p>Started {html.escape(doc['started'])}. Times are medians; effective rate = 2 nnzb bh bw N / time; every output
checked against a float64 reference before timing.</p>
{''.join(body)}
<h2>Environment</h2><pre>{env}</pre></body></html>
"""


def _rate(record: dict, role: str, scale: float):
    r = next((x for x in record["results"] if x["role"] == role and x["status"] == "ok"), None)
    return r["tflops"] * scale if r else float("nan")


def _best_peer_rate(record: dict, scale: float):
    best = summary_mod.of(record).get("best_sparse_peer")
    r = next((x for x in record["results"] if x["impl"] == best), None)
    return r["tflops"] * scale if r else float("nan")


def _block_key(label: str):
    return tuple(int(x) for x in label.split("x"))


def _placeholder(message: str):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 2))
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11)
    ax.set_axis_off()
    return fig
