"""python -m bsrmm_conformance run [options]   (README.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .bindings import BINDINGS
from .run import run


def cuda_devices() -> list[str]:
    """cuda:0 when the Python binding sees a usable GPU (no binding, no GPU: none)."""
    try:
        import bsrmm
    except Exception:
        return []
    return ["cuda:0"] if bsrmm.cuda_available() else []


def devices_for(choice: str) -> list[str]:
    if choice == "cpu":
        return ["cpu"]
    if choice == "cuda":
        return ["cuda:0"]
    if choice == "all":
        return ["cpu", "cuda:0"]
    return ["cpu"] + cuda_devices()


def names(text: str) -> list[str]:
    chosen = [n for n in text.split(",") if n]
    unknown = [n for n in chosen if n not in BINDINGS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown binding(s) {unknown}; known: {', '.join(BINDINGS)}")
    return chosen


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bsrmm_conformance")
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="write the vectors, run every binding, check, print the matrix")
    run_parser.add_argument("--suite", default="conformance", help="a suite of packages/bench/cases (default conformance)")
    run_parser.add_argument("--filter", dest="case_filter", help="only cases whose id matches this regular expression")
    run_parser.add_argument("--device", choices=["auto", "cpu", "cuda", "all"],
                            default=os.environ.get("BSRMM_CONFORMANCE_DEVICE", "auto"),
                            help="auto (default; $BSRMM_CONFORMANCE_DEVICE): the CPU, plus cuda:0 where bsrmm sees a GPU")
    run_parser.add_argument("--bindings", type=names, default=list(BINDINGS), help="comma-separated (default: all)")
    run_parser.add_argument("--require", type=names, default=[],
                            help="bindings that must run: a missing one fails the run (others are skipped with the reason)")
    run_parser.add_argument("--out", type=Path, default=Path("out"), help="vectors, runner outputs, conformance.json")
    args = parser.parse_args(argv)
    ok = run(suite=args.suite, case_filter=args.case_filter, devices=devices_for(args.device),
             bindings=[BINDINGS[n] for n in args.bindings], required=set(args.require), out=args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
