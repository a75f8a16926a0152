"""What the runner needs from an implementation (ours or a peer): an untimed `prepare` that
converts the case's operands into the implementation's own format, and a `Prepared` whose
`run(i)` is the timed call on operand set i."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .backends import Unavailable  # noqa: F401  (re-exported for implementations)


@dataclass
class Prepared:
    run: Callable[[int], None]
    # The output of the latest run on set i, as the backend's array type (numpy or torch).
    result: Callable[[int], Any]
    # NaN-fills the outputs of set i before the checked run; None when every call allocates
    # a fresh output (nothing stale can be mistaken for a result).
    poison: Callable[[int], None] | None = None
    # The kernel variant that ran, read after the runs (ours only).
    variant: Callable[[], str | None] = lambda: None
    # How this implementation was fed, for the reader of the results (e.g. "A^T materialised").
    notes: list[str] = field(default_factory=list)
    # Called when the case is done (frees device memory early).
    close: Callable[[], None] = lambda: None


@dataclass(frozen=True)
class Implementation:
    name: str  # stable key in result JSON, e.g. "bsrmm", "scipy.bsr", "cusparse.blocked_ell"
    role: str  # "ours", "sparse" (a sparse peer) or "dense" (the dense GEMM of the same problem)
    label: str  # shown in tables and plots
    prepare: Callable[..., Prepared]  # prepare(ops, backend, context) -> Prepared
