"""The tuner's persistent cache: one JSON file shared by every binding and process
(``$BSRMM_TUNING_CACHE``, else ``$XDG_CACHE_HOME/bsrmm/tuning.json``, else
``~/.cache/bsrmm/tuning.json``). A context with ``tuning="auto"`` fills it on a problem's third
multiply in a process; :func:`bsrmm.tune` measures and stores on demand."""

from __future__ import annotations

import json
from typing import Any, Dict, List

from . import _core


def tuner_cache_path() -> str:
    """The cache file in use ("" when there is none: choices then live in memory only)."""
    return _core.tuner_cache_path()


def tuner_cache_entries() -> List[Dict[str, Any]]:
    """Every stored choice: dicts with ``key``, ``device``, ``library_version``, ``variant``,
    ``threads``, ``time_ms``, ``candidates`` and ``measured_at``."""
    entries: List[Dict[str, Any]] = json.loads(_core.tuner_cache_entries())
    return entries


def tuner_cache_warning() -> str:
    """The last problem met with the cache file in this process ("" if none). A broken or
    unwritable cache never fails a multiply; it is reported here (and once on stderr)."""
    return _core.tuner_cache_warning()


def tuner_cache_clear() -> None:
    """Forgets every stored choice, in memory and in the file."""
    _core.tuner_cache_clear()
