"""python -m bsrmm_bench {run, report, compare, list, vectors}: see packages/bench/README.md."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "out"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bsrmm_bench", description="bsrmm benchmark suite")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a suite: check and time bsrmm and the peers, write a result JSON")
    run.add_argument("--suite", default="quick", help="quick | grid | shapes | blocks | coverage | full | training | fp8 (a file in cases/)")
    run.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"directory for the result JSON (default {DEFAULT_OUT})")
    run.add_argument("--filter", dest="case_filter", help="regular expression on case ids")
    run.add_argument("--device", choices=["cpu", "cuda"], help="run only this device's cases (default: every device present)")
    run.add_argument("--tuning", choices=["off", "auto", "force"], default="auto", help="bsrmm tuning mode (default auto)")
    run.add_argument("--report", action="store_true", help="also write the report (markdown, plots, HTML) next to the JSON")
    run.add_argument("--peers", metavar="NAMES",
                     help="time only these peers beside bsrmm (comma-separated names such as cusparse.bsr,torch.dense; "
                          "'none': bsrmm alone, for a quick `compare` against an earlier run); default: every peer")
    run.add_argument("--cases-dir", type=Path, help="directory of suite files (default: packages/bench/cases)")
    run.add_argument("--time-budget", type=float, metavar="SECONDS",
                     help="start no case after this many seconds; the rest are listed as skipped (for time-limited runs)")

    rep = sub.add_parser("report", help="markdown + plots (PNG, SVG) + HTML from a result JSON")
    rep.add_argument("result", type=Path)
    rep.add_argument("--out", type=Path, help="output directory (default: next to RESULT, in report-<name>/)")

    cmp_ = sub.add_parser("compare", help="flag regressions of NEW against OLD beyond the recorded noise (exit 1 if any); "
                                          "only results from the same machine (GPU / CPU model) are compared")
    cmp_.add_argument("old", type=Path)
    cmp_.add_argument("new", type=Path)
    cmp_.add_argument("--min-change", type=float, default=0.05, help="smallest relative slowdown reported (default 0.05)")
    cmp_.add_argument("--all", action="store_true", help="compare every implementation, not only bsrmm")

    lst = sub.add_parser("list", help="list a suite's cases")
    lst.add_argument("--suite", default="quick")
    lst.add_argument("--filter", dest="case_filter")
    lst.add_argument("--cases-dir", type=Path)

    vec = sub.add_parser("vectors", help="check (default) or rewrite cases/vectors.json")
    vec.add_argument("--write", action="store_true")

    args = parser.parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "report":
        from . import report

        out = report.write(json.loads(args.result.read_text()), args.out or report.default_dir(args.result))
        print(f"report: {(out / 'report.html').resolve()} (and report.md, plots)")
        return 0
    if args.command == "compare":
        from . import compare

        old, new = (json.loads(p.read_text()) for p in (args.old, args.new))
        outcome = compare.compare(old, new, min_change=args.min_change, impls=None if args.all else ["bsrmm"])
        print(compare.render(outcome))
        for m in outcome["mismatched"]:
            print(f"WARNING: NOT COMPARED, different machines: {m}", file=sys.stderr)
        return 1 if outcome["regressions"] else 0
    if args.command == "list":
        from . import cases, runner

        if args.suite in ("training", "fp8"):
            from .training import suite as training_suite

            _, found = training_suite.load(args.cases_dir or cases.CASES_DIR, args.suite)
            for case in found:
                if not args.case_filter or __import__("re").search(args.case_filter, case.id):
                    print(f"{case.id}  [{case.device}]  {case.note}")
            return 0
        for case in runner.select(cases.load_suite(args.suite, args.cases_dir or cases.CASES_DIR), args.case_filter):
            print(f"{case.id}  [{','.join(case.devices)}]  {case.note}")
        return 0
    if args.command == "vectors":
        from . import vectors

        if args.write:
            print(f"wrote {vectors.write()}")
            return 0
        problems = vectors.check()
        print("\n".join(problems) if problems else f"{vectors.VECTORS_PATH} matches this implementation")
        return 1 if problems else 0
    return 2


def _chosen_implementations(names: str | None):
    """bsrmm and the peers --peers names (None: the runner's default, every peer)."""
    if names is None:
        return None
    from . import ours, peers

    wanted = set() if names.strip() == "none" else {n.strip() for n in names.split(",") if n.strip()}
    known = {p.name for device in ("cpu", "cuda") for p in peers.for_device(device)}
    unknown = sorted(wanted - known)
    if unknown:
        raise SystemExit(f"--peers: unknown peer(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}, or 'none'")
    return lambda device: [ours.OURS] + [p for p in peers.for_device(device) if p.name in wanted]


def _run(args) -> int:
    from . import cases, runner, table

    devices = [args.device] if args.device else None
    if args.suite in ("training", "fp8"):  # cases of their own kinds (ops, MLP steps, fp8): training/run.py
        from .training import run as training_run

        doc, path = training_run.run_suite(out_dir=args.out, devices=devices, case_filter=args.case_filter,
                                           cases_dir=args.cases_dir or cases.CASES_DIR, time_budget=args.time_budget,
                                           name=args.suite)
    else:
        doc, path = runner.run_suite(args.suite, out_dir=args.out, devices=devices, case_filter=args.case_filter,
                                     tuning=args.tuning, cases_dir=args.cases_dir or cases.CASES_DIR,
                                     implementations=_chosen_implementations(args.peers),
                                     time_budget=args.time_budget)
    print(table.render(doc))
    print(f"result: {path.resolve()}")
    if args.report:
        from . import report

        out = report.write(doc, report.default_dir(path))
        print(f"report: {(out / 'report.html').resolve()}")
    bad = [r for c in doc["cases"] for r in c["results"] if r["role"] == "ours" and r["status"] in ("failed", "wrong")]
    if bad:
        print(f"{len(bad)} case(s) where bsrmm failed or was wrong", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
