"""The environment a result was measured in (RESULTS.md, "environment"): versions, CPU, threads,
and on CUDA the GPU, its clocks, driver and CUDA version."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from . import ours


def capture(device: str) -> dict:
    env = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "threads": {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if os.environ.get(name)},
        "versions": {name: _version(name) for name in ("numpy", "scipy", "matplotlib", "ml_dtypes", "torch", "triton", "cupy-cuda13x",
                                                         "mkl", "sparse_dot_mkl", "threadpoolctl")},
        "git_commit": git_commit(),
    }
    env["versions"]["bsrmm"] = ours.version()
    if device == "cuda":
        env["gpu"] = gpu_info()
    return env


def thread_counts() -> dict:
    """Threads each library computes with, read after the run (the libraries are loaded by then):
    every BLAS / OpenMP pool threadpoolctl finds (numpy's BLAS, MKL, torch's), torch's intra-op
    threads, and the usable cores. bsrmm's own count is in its results' notes."""
    out: dict = {"usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()}
    try:
        from threadpoolctl import threadpool_info

        out["threadpools"] = [{k: info.get(k) for k in ("user_api", "internal_api", "prefix", "num_threads", "version")}
                              for info in threadpool_info()]
    except Exception as e:
        out["threadpools"] = f"threadpoolctl unavailable: {type(e).__name__}: {e}"
    import sys

    if "torch" in sys.modules:
        out["torch_intra_op"] = sys.modules["torch"].get_num_threads()
    return out


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit() -> str | None:
    """The commit of the measured source: $BSRMM_SOURCE_COMMIT when the runner knows it (a copy of
    a working tree shipped to a GPU machine may carry a stale .git), else HEAD, with "+modified"
    when tracked files differ from it (so a stale or dirty checkout never passes for HEAD)."""
    if os.environ.get("BSRMM_SOURCE_COMMIT"):
        return os.environ["BSRMM_SOURCE_COMMIT"]
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=here)
        if head.returncode != 0 or not head.stdout.strip():
            return None
        clean = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], capture_output=True, timeout=30, cwd=here)
        return head.stdout.strip() + ("" if clean.returncode == 0 else "+modified")
    except (OSError, subprocess.SubprocessError):
        return None


def gpu_info() -> dict:
    info: dict = {}
    try:
        import torch

        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        info.update(
            name=props.name,
            capability=f"{props.major}.{props.minor}",
            sm_count=props.multi_processor_count,
            memory_bytes=props.total_memory,
            l2_bytes=getattr(props, "L2_cache_size", None),
            cuda_runtime=torch.version.cuda,
        )
    except Exception as e:  # the report says what could not be read rather than failing the run
        info["torch_error"] = str(e)
    fields = "driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,temperature.gpu"
    try:
        proc = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=10)
        if proc.returncode == 0 and proc.stdout.strip():
            values = [v.strip() for v in proc.stdout.strip().splitlines()[0].split(",")]
            info["nvidia_smi"] = dict(zip(fields.split(","), values))
    except (OSError, subprocess.SubprocessError) as e:
        info["nvidia_smi_error"] = str(e)
    return info


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
