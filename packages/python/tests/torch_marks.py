"""The skip marks the bsrmm.torch tests share, each with its reason: weight-gradient tests need
bsrmm.sddmm, CUDA tests a device that both bsrmm and torch can use. Import it after the test
module's own `pytest.importorskip("torch")`, so that a machine without torch skips the module."""

from __future__ import annotations

import pytest
import torch

import bsrmm

needs_sddmm = pytest.mark.skipif(
    not hasattr(bsrmm, "sddmm"),
    reason="bsrmm.sddmm is not in this build yet (issue 25 item 1): weight gradients need it",
)
cuda_reason = bsrmm.cuda_unavailable_reason() or (None if torch.cuda.is_available() else "torch sees no CUDA device")
needs_cuda = pytest.mark.skipif(cuda_reason is not None, reason=f"no usable CUDA device: {cuda_reason}")
