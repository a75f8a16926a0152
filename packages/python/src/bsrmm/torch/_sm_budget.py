"""An SM budget for the bsrmm ops run inside ``with sm_budget(count):`` on this thread: their
multiplies and SDDMMs go through a CUDA context of that budget (:attr:`bsrmm.Context.sm_budget`:
the persistent kernels launch on at most ``count`` SMs) instead of the device's default context.
For work that must run beside them on the same GPU: the tensor-parallel overlap
(parallel/_overlap.py) leaves NCCL's reduction kernels SMs this way, since a persistent multiply
otherwise holds every SM until it ends. CPU tensors ignore it. Thread-local, so another thread's
steps (or autograd's backward, which runs after the ``with`` has closed) keep every SM."""

from __future__ import annotations

import contextlib
import threading
from typing import Dict, Iterator, Optional, Tuple

import torch

import bsrmm

_INT32_MAX = 2**31 - 1

_state = threading.local()
# One context per (device, budget), made on first use and kept: a context is cheap, but the
# tuner's choices are filed per budget and a fresh context per step would have nothing to find.
_contexts: Dict[Tuple[int, int], bsrmm.Context] = {}
_contexts_lock = threading.Lock()


@contextlib.contextmanager
def sm_budget(count: int) -> Iterator[None]:
    """Runs the bsrmm ops of the block on at most ``count`` SMs (0: every SM). Nests; the outer
    budget comes back on exit."""
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= _INT32_MAX:
        raise ValueError(f"sm_budget must be an int in 0..{_INT32_MAX} (0: every SM); got {count!r}")
    previous = getattr(_state, "count", 0)
    _state.count = count
    try:
        yield
    finally:
        _state.count = previous


def context_for(device: torch.device) -> Optional[bsrmm.Context]:
    """The context the ops on ``device`` run through: None (the device's default context)
    unless a budget is set on this thread and the device is a GPU."""
    count: int = getattr(_state, "count", 0)
    if count == 0 or device.type != "cuda":
        return None
    ordinal = device.index if device.index is not None else torch.cuda.current_device()
    with _contexts_lock:
        context = _contexts.get((ordinal, count))
        if context is None:
            context = _contexts[(ordinal, count)] = bsrmm.Context(f"cuda:{ordinal}", sm_budget=count)
        return context
