"""The bsrmm adapter: the only file that talks to `import bsrmm` (packages/python; `load_torch`
gives the training suite `bsrmm.torch`). Everything
else in the suite runs without it; when bsrmm cannot be imported, "ours" is reported as missing
with the import error as the reason."""

from __future__ import annotations

import numpy as np

from .backends import Unavailable, numpy_dtype
from .impl import Implementation, Prepared


def load():
    try:
        import bsrmm
    except Exception as e:  # ImportError, or a broken build raising anything at import
        raise Unavailable(f"bsrmm is not importable: {type(e).__name__}: {e}") from e
    return bsrmm


def load_torch():
    """`bsrmm.torch` (BsrLinear and the custom ops) for the training suite, or Unavailable."""
    load()
    try:
        import bsrmm.torch as bsrmm_torch
    except Exception as e:
        raise Unavailable(f"bsrmm.torch is not importable: {type(e).__name__}: {e}") from e
    return bsrmm_torch


def version() -> str | None:
    try:
        return str(load().__version__)
    except Unavailable:
        return None


def _prepare(ops, backend, context) -> Prepared:
    bsrmm = load()
    case = ops.case
    device = backend.device
    if device == "cuda" and not bsrmm.cuda_available():
        raise Unavailable("bsrmm reports no CUDA support (built without CUDA, or no usable device)")
    ctx = bsrmm.Context(device, f32_mode=case.f32_mode, tuning=context.get("tuning", "auto"))
    storage = numpy_dtype(case.dtype)
    matrices = [
        bsrmm.BsrMatrix.from_arrays(
            ops.pattern.indptr.astype(np.int32),
            ops.pattern.indices.astype(np.int32),
            s.data.astype(storage),
            case.stored_shape,
            device=device,
        )
        for s in ops.sets
    ]
    b = context["b"]
    outs = [backend.empty((case.m, case.n), case.dtype, case.layout_c) for _ in ops.sets]

    def run(i: int) -> None:
        bsrmm.matmul(matrices[i], b[i], out=outs[i], transpose_a=case.transpose_a, context=ctx)

    def close() -> None:
        matrices.clear()
        outs.clear()

    return Prepared(
        run=run,
        result=lambda i: outs[i],
        poison=lambda i: backend.poison(outs[i]),
        variant=lambda: ctx.last_variant or None,
        notes=[f"tuning={ctx.tuning}", f"num_threads={ctx.num_threads} (0: one per hardware thread)"]
        if device == "cpu" else [f"tuning={ctx.tuning}"],
        close=close,
    )


OURS = Implementation(name="bsrmm", role="ours", label="bsrmm", prepare=_prepare)
