"""bsrmm for PyTorch: block-sparse layers that train and compile.

``import bsrmm.torch`` (needs torch; ``import bsrmm`` alone never imports it) registers two
custom ops, ``torch.ops.bsrmm.bsr_mm`` (the multiply, bias and activation fused) and
``torch.ops.bsrmm.sampled_mm`` (SDDMM: the weight gradient), with fake kernels and autograd,
and gives :class:`BsrLinear` (an nn.Linear with a block-sparse weight) and :func:`sparsify_`.
``with sm_budget(count):`` runs the ops of a block on at most ``count`` SMs of their GPU (to
leave the rest to work beside them, e.g. NCCL's reductions).
"""

from __future__ import annotations

from typing import Tuple

import torch

from . import _ops, _patterns
from ._linear import BsrLinear
from ._ops import bsr_mm, sampled_mm
from ._sm_budget import sm_budget
from ._sparsify import sparsify_


def register_pattern(
    indptr: torch.Tensor, indices: torch.Tensor, shape: Tuple[int, int], blocksize: Tuple[int, int]
) -> int:
    """The key the ops take for this BSR pattern (validated and prepared on the CPU now; call
    :func:`prepare_pattern` for other devices and dtypes before a compiled or captured step).
    Keys live until :func:`release_pattern`; BsrLinear manages its own."""
    return _patterns.register(_patterns.Pattern(indptr, indices, shape, blocksize))


def prepare_pattern(key: int, device: torch.device, dtype: torch.dtype) -> None:
    """Uploads pattern ``key`` to ``device`` in ``dtype`` (once), so no step has to."""
    _patterns.lookup(key).prepare(torch.device(device), dtype)


def release_pattern(key: int) -> None:
    _patterns.release(key)


__all__ = [
    "BsrLinear",
    "bsr_mm",
    "prepare_pattern",
    "register_pattern",
    "release_pattern",
    "sampled_mm",
    "sm_budget",
    "sparsify_",
]
