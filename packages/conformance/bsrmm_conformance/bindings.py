"""The runners, one per binding, and how to start each: where it is built in this repository,
or where an environment variable says (a GPU machine gets prebuilt runners carried in)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

PACKAGE = Path(__file__).resolve().parent.parent  # packages/conformance
REPO = PACKAGE.parent.parent
RUNNERS = PACKAGE / "runners"


@dataclass(frozen=True)
class Binding:
    name: str
    command: Callable[[], list[str]]  # the runner; VECTORS OUT DEVICE are appended
    unavailable: Callable[[], str | None]  # None when it can run here, else why not


def _executable(env: str, default: Path) -> Callable[[], list[str]]:
    return lambda: [os.environ.get(env) or str(default)]


def _missing_file(env: str, default: Path, how: str) -> Callable[[], str | None]:
    def check() -> str | None:
        path = Path(os.environ.get(env) or default)
        return None if path.is_file() else f"no runner at {path} ({how}, or set {env})"
    return check


def _python_unavailable() -> str | None:
    return None if importlib.util.find_spec("bsrmm") is not None else f"`import bsrmm` fails in {sys.executable}"


def _node() -> str:
    return os.environ.get("BSRMM_CONFORMANCE_NODE") or shutil.which("node") or "node"


def _node_unavailable() -> str | None:
    if shutil.which(_node()) is None and not Path(_node()).is_file():
        return "no node on PATH (set BSRMM_CONFORMANCE_NODE)"
    package = PACKAGE / "node_modules" / "bsrmm" / "dist" / "esm" / "index.js"
    return None if package.is_file() else f"the bsrmm npm package is not built ({package} is absent: pnpm --filter bsrmm build)"


C_RUNNER = PACKAGE / "build" / "bsrmm_conformance_c"
RUST_RUNNER = REPO / "packages" / "rust-burn" / "target" / "debug" / "examples" / "conformance"

BINDINGS = {
    "c": Binding("c", _executable("BSRMM_CONFORMANCE_C_RUNNER", C_RUNNER),
                 _missing_file("BSRMM_CONFORMANCE_C_RUNNER", C_RUNNER, "pnpm --filter @bsrmm/conformance build")),
    "python": Binding("python", lambda: [sys.executable, str(RUNNERS / "runner.py")], _python_unavailable),
    "rust": Binding("rust", _executable("BSRMM_CONFORMANCE_RUST_RUNNER", RUST_RUNNER),
                    _missing_file("BSRMM_CONFORMANCE_RUST_RUNNER", RUST_RUNNER,
                                  "cargo test --workspace --no-run in packages/rust-burn builds it")),
    "node": Binding("node", lambda: [_node(), str(RUNNERS / "runner.mjs")], _node_unavailable),
}


def runner_env(out: Path) -> dict[str, str]:
    """The runners' environment: this package and the bench importable (the Python runner reads
    the vectors with manifest.py), and a tuner cache of their own, so a run neither reads nor
    writes the user's (~/.cache/bsrmm/tuning.json)."""
    env = dict(os.environ)
    paths = [str(PACKAGE), str(REPO / "packages" / "bench")]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["BSRMM_TUNING_CACHE"] = str(out / "tuning.json")
    return env
