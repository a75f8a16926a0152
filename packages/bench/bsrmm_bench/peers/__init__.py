"""Peers: other implementations of the same product, run in the same process on the same
operands. `for_device` lists them in the order the table shows them."""

from __future__ import annotations

from ..impl import Implementation


def for_device(device: str) -> list[Implementation]:
    if device == "cuda":
        from . import cusparse, stk_triton, torch_gpu

        return [torch_gpu.TORCH_DENSE, torch_gpu.TORCH_BSR, torch_gpu.TORCH_BSR_TRITON, cusparse.BSR, cusparse.BLOCKED_ELL,
                cusparse.CSR, cusparse.LEGACY_BSRMM, stk_triton.STK_DSD]
    from . import cpu

    return [cpu.SCIPY_BSR, cpu.SCIPY_CSR, cpu.MKL_BSR, cpu.MKL_CSR, cpu.TORCH_CSR, cpu.TORCH_BSR, cpu.NUMPY_DENSE]
