"""Is a case bound by the card's power cap? Per-run times of the untuned pick, 300 runs back to
back as the benchmark suite times them, beside nvidia-smi's SM clock and clock-event reasons
sampled every 10 ms while they run; then dense cuBLAS (torch.mm) the same way.

    python3 packages/bench/experiments/clock_trace.py [BLOCK] [DENSITIES]     e.g. 128 0.125,0.25,0.5 (the default)

M = K = 8192, N = 4096 (the grid problem), f16 and bf16, uniform pattern with a fixed count per
block row, values uniform in [-1, 1); each output is checked on 1024 sampled rows against a
float64 product first. "by tenth" is the median of each tenth of the runs: a step up part-way
through is the clock coming down under the cap. Needs the Python package (gpu-check's python
step installs it).
"""
import pathlib
import subprocess
import sys
import threading
import time

import numpy as np
import torch

import bsrmm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # packages/bench
from bsrmm_bench import patterns  # noqa: E402

M = K = 8192
N = 4096
RUNS = 300
# nvidia-smi's clocks_event_reasons bits (nvml's nvmlClocksEventReason*).
REASONS = {0x1: "idle", 0x2: "app clocks", 0x4: "SW power cap", 0x8: "HW slowdown", 0x20: "SW thermal",
           0x40: "HW thermal", 0x80: "HW power brake"}


class ClockSampler:
    """nvidia-smi every 10 ms in the background; each line stamped with the host time it came."""

    def __init__(self):
        self.samples = []  # (host time, SM MHz, reasons bit set)
        self.process = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=clocks.sm,clocks_event_reasons.active",
             "--format=csv,noheader,nounits", "-lms", "10"], stdout=subprocess.PIPE, text=True, bufsize=1)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            fields = [f.strip() for f in line.split(",")]
            if len(fields) == 2 and fields[0].isdigit():
                self.samples.append((time.monotonic(), int(fields[0]), int(fields[1], 16)))

    def between(self, start, end):
        return [s for s in self.samples if start <= s[0] <= end]

    def stop(self):
        self.process.terminate()
        self.process.wait()


def trace(label, run, flops, sampler):
    for _ in range(5):
        run()
    torch.cuda.synchronize()
    time.sleep(1.0)  # back towards idle clocks, so every case starts from the same state
    timer = torch.cuda.Event
    events = [(timer(enable_timing=True), timer(enable_timing=True)) for _ in range(RUNS)]
    start = time.monotonic()
    for begin, end in events:
        begin.record()
        run()
        end.record()
    torch.cuda.synchronize()
    seconds = np.array([b.elapsed_time(e) for b, e in events])
    samples = sampler.between(start, time.monotonic())
    tenths = [np.median(seconds[i:i + RUNS // 10]) for i in range(0, RUNS, RUNS // 10)]
    print(f"{label}: median {np.median(seconds):.4f} ms = {flops / np.median(seconds) / 1e9:.0f} TFLOPS"
          f" (fastest run {flops / seconds.min() / 1e9:.0f})")
    print("  by tenth (ms): " + " ".join(f"{t:.3f}" for t in tenths))
    if samples:
        clocks = [s[1] for s in samples]
        bits = 0
        for s in samples:
            bits |= s[2]
        reasons = [name for bit, name in REASONS.items() if bits & bit] or ["none"]
        print(f"  SM clock over {len(samples)} samples: {min(clocks)}-{max(clocks)} MHz, median"
              f" {int(np.median(clocks))}; reasons {', '.join(reasons)}")


def sparse_case(block, density, dtype, sampler):
    pattern = patterns.generate({"kind": "uniform", "density": density}, M // block, K // block, seed=1)
    indptr = torch.from_numpy(pattern.indptr.astype(np.int32)).cuda()
    indices = torch.from_numpy(pattern.indices.astype(np.int32)).cuda()
    values = (torch.rand(len(pattern.indices), block, block, device="cuda") * 2 - 1).to(dtype)
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, values, (M, K), device="cuda")
    b = (torch.rand(K, N, device="cuda") * 2 - 1).to(dtype)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    context = bsrmm.Context("cuda", tuning="off")
    bsrmm.matmul(a, b, out=c, context=context)
    dense_a = torch.zeros(M // block, block, K // block, block, device="cuda", dtype=torch.float64)
    rows = torch.repeat_interleave(torch.arange(M // block, device="cuda"), torch.diff(indptr.long()))
    dense_a[rows, :, indices.long(), :] = values.double()
    checked = torch.randperm(M, device="cuda")[:1024]  # sampled rows: a full float64 product takes ~10 s
    reference = dense_a.reshape(M, K)[checked] @ b.double()
    error = ((c[checked].double() - reference).norm() / reference.norm()).item()
    assert error < 1e-2, f"block {block} d{density} {dtype}: relative error {error:.1e}"
    del dense_a, reference
    flops = 2.0 * len(pattern.indices) * block * block * N
    trace(f"{str(dtype)[6:]} b{block} d{density} {context.last_variant}",
          lambda: bsrmm.matmul(a, b, out=c, context=context), flops, sampler)


def main():
    block = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    densities = [float(d) for d in (sys.argv[2] if len(sys.argv) > 2 else "0.125,0.25,0.5").split(",")]
    sampler = ClockSampler()
    try:
        for dtype in (torch.float16, torch.bfloat16):
            for density in densities:
                sparse_case(block, density, dtype, sampler)
        a = (torch.rand(M, K, device="cuda") * 2 - 1).half()
        b = (torch.rand(K, N, device="cuda") * 2 - 1).half()
        trace("float16 dense cuBLAS (dense TFLOPS)", lambda: torch.mm(a, b), 2.0 * M * K * N, sampler)
    finally:
        sampler.stop()


if __name__ == "__main__":
    main()
