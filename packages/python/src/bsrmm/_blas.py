"""Points the core's CPU dense fallback (``cpu_dense_blas``: a dense copy of A times a CBLAS GEMM,
loaded at run time) at the OpenBLAS that numpy's wheels bundle, when the user has not chosen one
with ``BSRMM_BLAS`` and the system has none: without it the dense fallback stays off and a dense
A on the CPU runs at the sparse kernel's rate. Read by the core on first use, so this runs at
import."""

from __future__ import annotations

import glob
import os


def point_core_at_numpy_blas() -> None:
    if os.environ.get("BSRMM_BLAS"):
        return
    try:
        import numpy
    except ImportError:
        return
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    candidates = sorted(glob.glob(os.path.join(libs_dir, "libscipy_openblas*.so*")))
    if candidates:
        os.environ["BSRMM_BLAS"] = candidates[0]
