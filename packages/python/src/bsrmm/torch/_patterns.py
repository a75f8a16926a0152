"""The block patterns the custom ops multiply with. A custom op takes tensors and plain scalars
only, so a pattern reaches it as an int key into this registry. An entry holds the pattern's
host arrays and, per (device, dtype) it was prepared for, a bsrmm matrix of the pattern and one
of its transpose. Building those validates and uploads the pattern, so it happens in
:meth:`Pattern.prepare` (BsrLinear calls it when it is built or moved), not inside a step: a step
only hands a prepared matrix the step's values (``BsrMatrix.with_values``)."""

from __future__ import annotations

import itertools
import threading
from typing import Dict, NamedTuple, Optional, Tuple

import torch

from bsrmm import BsrMatrix

_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def device_name(device: torch.device) -> str:
    """bsrmm's name of a torch device ("cpu", "cuda:N")."""
    if device.type == "cuda":
        index = torch.cuda.current_device() if device.index is None else device.index
        return f"cuda:{index}"
    if device.type != "cpu":
        raise ValueError(f"bsrmm runs on the CPU and on CUDA devices; got a tensor on {device}")
    return "cpu"


class Prepared(NamedTuple):
    """A pattern on one device in one dtype: the matrix W and W^T (its blocks in W^T's BSR
    order). Making W^T plans the transposition of W's pattern, which every step's W then
    shares (the core's ``transpose_step_values`` writes W^T's values from it)."""

    matrix: BsrMatrix
    transposed: BsrMatrix


class Pattern:
    """Which blocks of a (rows x cols) matrix of (bh x bw) blocks are stored, in BSR order
    (``indptr``, ``indices`` as scipy and ``to_sparse_bsr`` keep them: row-major block order)."""

    def __init__(
        self, indptr: torch.Tensor, indices: torch.Tensor, shape: Tuple[int, int],
        blocksize: Tuple[int, int],
    ) -> None:
        self.indptr = indptr.detach().to("cpu", torch.int64).contiguous()
        self.indices = indices.detach().to("cpu", torch.int64).contiguous()
        self.shape = (int(shape[0]), int(shape[1]))
        self.blocksize = (int(blocksize[0]), int(blocksize[1]))
        self.nnzb = int(self.indices.numel())
        self._prepared: Dict[Tuple[str, torch.dtype], Prepared] = {}
        self._lock = threading.Lock()
        # Validates the pattern now (sorted, in range), in float32 on the host.
        self.prepare(torch.device("cpu"), torch.float32)

    def prepare(self, device: torch.device, dtype: torch.dtype) -> Prepared:
        """The pattern as bsrmm matrices on ``device`` in ``dtype``, built on first use (their
        values are zeros: every multiply brings its own)."""
        if dtype not in _DTYPES:
            raise TypeError(f"bsrmm multiplies float32, float64, float16 and bfloat16; got {dtype}")
        key = (device_name(device), dtype)
        with self._lock:
            prepared = self._prepared.get(key)
            if prepared is None:
                zeros = torch.zeros((self.nnzb, *self.blocksize), dtype=dtype)
                matrix = BsrMatrix.from_arrays(self.indptr, self.indices, zeros, self.shape, device=key[0])
                prepared = Prepared(matrix, matrix._materialized_transpose())
                self._prepared[key] = prepared
        return prepared

    def prepared(self, device: torch.device, dtype: torch.dtype) -> Optional[Prepared]:
        """The matrices prepared for ``device`` and ``dtype``, or None (nothing is built)."""
        return self._prepared.get((device_name(device), dtype))

    def matrices(self, device: torch.device, dtype: torch.dtype) -> Prepared:
        """The matrices for a step on ``device`` in ``dtype``: the prepared ones (built here only
        for a caller that never prepared them, e.g. a bare op call in eager mode)."""
        prepared = self._prepared.get((device_name(device), dtype))
        return prepared if prepared is not None else self.prepare(device, dtype)


_registry: Dict[int, Pattern] = {}
_keys = itertools.count(1)
_registry_lock = threading.Lock()


def register(pattern: Pattern) -> int:
    """A new key for ``pattern``; :func:`release` it when its owner goes away."""
    with _registry_lock:
        key = next(_keys)
        _registry[key] = pattern
    return key


def replace(key: int, pattern: Pattern) -> None:
    """Points ``key`` at another pattern of the same shape and block count (a loaded state)."""
    with _registry_lock:
        _registry[key] = pattern


def release(key: int) -> None:
    with _registry_lock:
        _registry.pop(key, None)


def lookup(key: int) -> Pattern:
    pattern = _registry.get(key)
    if pattern is None:
        raise KeyError(
            f"pattern={key} names no live bsrmm pattern (its BsrLinear was deleted, or the key "
            "was not made by bsrmm.torch.register_pattern)"
        )
    return pattern
