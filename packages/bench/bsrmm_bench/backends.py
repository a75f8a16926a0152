"""Where a case runs: the host (numpy arrays, perf_counter) or a CUDA GPU (torch tensors, CUDA
events, float64 reference computed on the GPU). Implementations receive operands through these,
so ours and every peer see the same values in the same dtype and layout."""

from __future__ import annotations

import time

import numpy as np

from . import operands, timing


class Unavailable(Exception):
    """An implementation cannot run here (missing package, unsupported dtype...): reported as
    status "missing" with this reason, never silently dropped."""


class HostBackend:
    device = "cpu"
    # Full float64 reference up to 2**34 flops (a few seconds of float64 BLAS on 2 cores) and
    # 512 MiB of dense float64 op(A); beyond, whole block rows are sampled.
    full_flop_limit = 2.0**34
    full_bytes_limit = 2.0**29

    def __init__(self, budget: timing.Budget = timing.CPU_BUDGET):
        self.budget = budget
        self._bandwidth = None

    def bandwidth(self) -> dict:
        """DRAM bandwidth as a numpy copy achieves it (read + write bytes / time, best of 5 copies
        of 256 MiB): the denominator of the memory-bound cells' bandwidth fraction."""
        if self._bandwidth is None:
            src = np.ones(32 << 20, dtype=np.float64)
            dst = np.empty_like(src)
            best = float("inf")
            for _ in range(5):
                t0 = time.perf_counter()
                np.copyto(dst, src)
                best = min(best, time.perf_counter() - t0)
            self._bandwidth = {"bytes_per_s": 2 * src.nbytes / best,
                               "source": "measured: numpy copy of 256 MiB, (read + write) / best of 5"}
        return self._bandwidth

    def rotation_sets(self, bytes_per_set: int) -> int:
        """One set on the host: every implementation meets the same warm caches, CPU runs last
        milliseconds to seconds, and more sets would multiply operand memory and generation time
        past the quick suite's one-minute budget (RESULTS.md records the choice per case)."""
        return 1

    def numpy_dtype(self, dtype: str):
        return numpy_dtype(dtype)

    def array(self, values: np.ndarray, dtype: str, layout: str = "row") -> np.ndarray:
        x = np.asarray(values).astype(self.numpy_dtype(dtype))
        return np.asfortranarray(x) if layout == "col" else np.ascontiguousarray(x)

    def empty(self, shape: tuple[int, int], dtype: str, layout: str = "row") -> np.ndarray:
        return np.empty(shape, dtype=self.numpy_dtype(dtype), order="F" if layout == "col" else "C")

    def poison(self, out) -> None:
        out[...] = np.nan

    def synchronize(self) -> None:
        pass

    def reference(self, ops: operands.Operands, rows: np.ndarray):
        return operands.reference(ops, rows)

    def check(self, out, rows: np.ndarray, ref) -> dict:
        """Error of the checked rows, after counting non-finite values over the whole output
        (the poison left in any element the implementation did not write)."""
        out64 = np.asarray(out).astype(np.float64)
        non_finite = int(np.count_nonzero(~np.isfinite(out64)))
        if non_finite:
            return {"error": float("inf"), "non_finite": non_finite}
        return {"error": operands.relative_error(out64[rows], ref), "non_finite": 0}

    def time(self, run, sets: int) -> dict:
        return timing.time_host(run, sets, self.budget)


class CudaBackend:
    device = "cuda"
    # Float64 GEMM on the GPU is cheap (8192 x 8192 x 4096: ~10 ms): every row is checked unless
    # op(A) as dense float64 would take more than 4 GiB (then whole block rows are sampled).
    full_flop_limit = 2.0**42
    full_bytes_limit = 2.0**32

    def __init__(self, budget: timing.Budget = timing.GPU_BUDGET):
        import torch

        if not torch.cuda.is_available():
            raise Unavailable("torch sees no CUDA device")
        self.torch = torch
        self.budget = budget
        self.dev = torch.device("cuda", torch.cuda.current_device())
        self._bandwidth = None

    def bandwidth(self) -> dict:
        """HBM bandwidth as a device-to-device copy achieves it (read + write bytes / time, median
        of 20 copies of 1 GiB), beside the per-device constant of KNOWN_COPY_BANDWIDTH."""
        if self._bandwidth is None:
            t = self.torch
            name = t.cuda.get_device_properties(self.dev).name
            known = next((v for k, v in KNOWN_COPY_BANDWIDTH.items() if k in name), None)
            try:
                src = t.empty(1 << 30, dtype=t.uint8, device=self.dev)
                dst = t.empty_like(src)
                stats = timing.time_cuda(lambda i: dst.copy_(src), 1, timing.Budget(3, 20, 20, 0.0))
                measured = 2 * src.numel() / (stats["median"] * 1e-3)
                del src, dst
                self._bandwidth = {"bytes_per_s": measured, "constant_bytes_per_s": known,
                                   "source": f"measured: device-to-device copy of 1 GiB on {name}, (read + write) / median of 20"}
            except Exception as e:  # out of memory, or no events: the constant, else nothing
                self._bandwidth = {"bytes_per_s": known, "constant_bytes_per_s": known,
                                   "source": f"constant for {name} (copy not measured: {type(e).__name__}: {e})"}
        return self._bandwidth

    def rotation_sets(self, bytes_per_set: int) -> int:
        """Enough operand sets that a case fitting in L2 is not timed from L2 (METHOD.md)."""
        props = self.torch.cuda.get_device_properties(self.dev)
        return operands.rotation_sets(bytes_per_set, int(getattr(props, "L2_cache_size", 50 << 20)))

    def torch_dtype(self, dtype: str):
        t = self.torch
        return {"float32": t.float32, "float64": t.float64, "float16": t.float16, "bfloat16": t.bfloat16}[dtype]

    def array(self, values: np.ndarray, dtype: str, layout: str = "row"):
        """A device tensor holding exactly `values` (already representable in dtype); "col" gives
        a column-major tensor (strides (1, rows)), the transposed view of a contiguous one."""
        t = self.torch.from_numpy(np.ascontiguousarray(values)).to(self.dev).to(self.torch_dtype(dtype))
        return t.t().contiguous().t() if layout == "col" else t

    def empty(self, shape: tuple[int, int], dtype: str, layout: str = "row"):
        if layout == "col":
            return self.torch.empty((shape[1], shape[0]), dtype=self.torch_dtype(dtype), device=self.dev).t()
        return self.torch.empty(shape, dtype=self.torch_dtype(dtype), device=self.dev)

    def poison(self, out) -> None:
        out.fill_(float("nan"))

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    def reference(self, ops: operands.Operands, rows: np.ndarray):
        """float64 op(A)[rows] @ B computed on the GPU, B upcast exactly: op(A)'s rows built
        densely in float64 on the host (cuBLAS DGEMM), or past DENSE_ROWS_BYTES_LIMIT kept sparse
        (cuSPARSE SpMM in float64; on the host this product took 100 s for an 8192^2 A at
        d 0.5 with N = 4096)."""
        t = self.torch
        b = t.from_numpy(ops.sets[0].b.astype(np.float64)).to(self.dev)
        if rows.size * ops.case.k * 8 > operands.DENSE_ROWS_BYTES_LIMIT:
            sub, local = operands.sparse_op_a_rows(ops, rows)
            a_rows = t.sparse_csr_tensor(t.from_numpy(sub.indptr.astype(np.int64)), t.from_numpy(sub.indices.astype(np.int64)),
                                         t.from_numpy(sub.data), size=sub.shape, dtype=t.float64, device=self.dev)
            return (a_rows @ b)[t.from_numpy(local).to(self.dev)]
        a_rows = t.from_numpy(ops.dense_op_a(0, np.float64, rows)).to(self.dev)
        return a_rows @ b

    def check(self, out, rows: np.ndarray, ref) -> dict:
        t = self.torch
        full = out.to(t.float64)
        non_finite = int((~t.isfinite(full)).sum().item())
        if non_finite:
            return {"error": float("inf"), "non_finite": non_finite}
        sel = full[t.from_numpy(rows).to(self.dev)]
        denom = t.linalg.norm(ref).item()
        diff = t.linalg.norm(sel - ref).item()
        return {"error": diff / denom if denom > 0 else diff, "non_finite": 0}

    def time(self, run, sets: int) -> dict:
        return timing.time_cuda(run, sets, self.budget)


# Device-to-device copy bandwidth, (read + write) bytes / s, by device name, as measured on the
# project's H100 80GB HBM3 (~3.0 TB/s; 3.35 TB/s on its datasheet): used where the run's own
# copy could not be measured.
KNOWN_COPY_BANDWIDTH = {"H100": 3.0e12}


def make_backend(device: str, cpu_budget=timing.CPU_BUDGET, gpu_budget=timing.GPU_BUDGET):
    return CudaBackend(gpu_budget) if device == "cuda" else HostBackend(cpu_budget)


def numpy_dtype(dtype: str):
    if dtype == "bfloat16":
        try:
            import ml_dtypes
        except ImportError as e:
            raise Unavailable("bfloat16 on the host needs the ml_dtypes package") from e
        return ml_dtypes.bfloat16
    return {"float32": np.float32, "float64": np.float64, "float16": np.float16}[dtype]

