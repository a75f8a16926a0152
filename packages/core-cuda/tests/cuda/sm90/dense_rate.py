"""Dense cuBLAS rate (through PyTorch) for the PERF.md problem: the ceiling bsrmm is compared to.

    python3 dense_rate.py      # prints TFLOPS of an 8192x8192 @ 8192x4096 product, f16 and bf16
"""
import torch


def rate(dtype, m=8192, k=8192, n=4096, runs=20):
    a = torch.rand(m, k, device="cuda", dtype=dtype) - 0.5
    b = torch.rand(k, n, device="cuda", dtype=dtype) - 0.5
    for _ in range(5):
        torch.matmul(a, b)
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    ms = sorted(times)[runs // 2]
    return 2.0 * m * k * n / (ms * 1e-3) / 1e12, ms


if __name__ == "__main__":
    for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        tflops, ms = rate(dtype)
        print(f"dense cuBLAS {name} 8192x8192x4096: {ms:.4f} ms {tflops:.1f} TFLOPS")
