"""Untuned (tuning off) against tuned (tuning force) bsrmm per CPU coverage cell: best median of each mode's runs."""
import json, sys, glob, collections
best = collections.defaultdict(dict)
variant = collections.defaultdict(dict)
for mode in ("off", "auto"):
    for path in sorted(glob.glob(f"{sys.argv[1]}/{mode}-*/*.json")):
        for c in json.load(open(path))["cases"]:
            ours = [r for r in c["results"] if r["role"] == "ours"][0]
            if ours["status"] != "ok": continue
            t = ours["time_ms"]["median"]
            if t < best[c["id"]].get(mode, 1e30):
                best[c["id"]][mode] = t; variant[c["id"]][mode] = ours.get("variant")
rows = sorted(((v["off"] / v["auto"], k) for k, v in best.items() if "off" in v and "auto" in v), reverse=True)
differ = [(r, k) for r, k in rows if variant[k]["off"] != variant[k]["auto"]]
print(f"cells {len(rows)}; untuned more than 10% slower than tuned: {sum(r > 1.10 for r, _ in rows)}, "
      f"of which with a different pick: {sum(r > 1.10 for r, _ in differ)} (the others: the same kernel, run-to-run noise)")
for r, k in rows[:12]:
    print(f"{r:5.2f}  off {best[k]['off']:8.3f} ms {variant[k]['off']:22s} auto {best[k]['auto']:8.3f} ms {variant[k]['auto']:22s} {k}")
