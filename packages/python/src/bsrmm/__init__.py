"""bsrmm: block-sparse (BSR) x dense matrix multiply, on NVIDIA GPUs and on the CPU.

    C = alpha * op(A) @ B + beta * C  (+ bias per row of C, activation)

A is a :class:`BsrMatrix`; B and C are numpy, torch, cupy or any DLPack /
``__cuda_array_interface__`` arrays, used in place.
"""

from __future__ import annotations

from typing import List, Optional

from . import _blas

_blas.point_core_at_numpy_blas()

from . import _core  # noqa: E402 (after BSRMM_BLAS is set for the core)
from ._context import Context, default_context
from ._devices import cuda_available, cuda_device_count, cuda_unavailable_reason
from ._errors import (
    CudaError,
    Error,
    InternalError,
    InvalidArgumentError,
    IoError,
    NoDeviceError,
    OutOfMemoryError,
    UnsupportedError,
)
from ._fp8 import quantize as quantize_fp8
from ._matmul import matmul, tune
from ._matrix import BsrMatrix, TransposedBsrMatrix
from ._sddmm import sddmm
from ._tuner import tuner_cache_clear, tuner_cache_entries, tuner_cache_path, tuner_cache_warning
from . import _threadpool

__version__: str = _core.package_version

_threadpool.register()


def core_version() -> str:
    """The version of the C library this package was built with."""
    return _core.core_version()


def variants(kind: Optional[str] = None) -> List[str]:
    """Kernel variants compiled into this build (CPU ones included), named CUTLASS-style: the
    matmul variants, then the SDDMM ones (``cpu_sddmm_*``, ``sm90_sddmm_*``, ``sm80_sddmm_*``,
    ``cuda_sddmm_simt_*``). ``kind="matmul"`` or ``kind="sddmm"`` lists one operation's.
    ``Context(variant=name)`` forces either kind: :func:`matmul` runs a forced matmul variant and
    :func:`sddmm` a forced SDDMM variant, and each raises :class:`InvalidArgumentError` for a
    variant of the other kind."""
    if kind is not None and kind not in ("matmul", "sddmm"):
        raise InvalidArgumentError(f"kind must be 'matmul', 'sddmm' or None; got {kind!r}")
    return [name for name, its_kind in _core.variants() if kind is None or its_kind == kind]


__all__ = [
    "BsrMatrix",
    "Context",
    "CudaError",
    "Error",
    "InternalError",
    "InvalidArgumentError",
    "IoError",
    "NoDeviceError",
    "OutOfMemoryError",
    "TransposedBsrMatrix",
    "UnsupportedError",
    "__version__",
    "core_version",
    "cuda_available",
    "cuda_device_count",
    "cuda_unavailable_reason",
    "default_context",
    "matmul",
    "quantize_fp8",
    "sddmm",
    "tune",
    "tuner_cache_clear",
    "tuner_cache_entries",
    "tuner_cache_path",
    "tuner_cache_warning",
    "variants",
]
