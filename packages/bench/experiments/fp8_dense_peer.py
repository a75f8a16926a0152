"""Dense cuBLAS fp8 (torch._scaled_mm, e4m3 x e4m3, bf16 out) on fp8_timing.cpp's problems:
M = K = 8192 and N in {4096, 2048, 128, 16}, A row-major and B column-major (the layouts
_scaled_mm takes), one scale each. Median of 20 runs between CUDA events after 3 warm-ups.
Prints ms and dense TFLOPS (2 M K N / time), and dense bf16 (a @ b) beside it. A block-sparse
fp8 cell must not take longer than this on the same problem (issue 27).

    python3 packages/bench/experiments/fp8_dense_peer.py
"""
import torch


def median_ms(run, reps=20):
    for _ in range(3):
        run()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, stop in zip(starts, stops):
        start.record()
        run()
        stop.record()
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) for s, e in zip(starts, stops))[reps // 2]


def main():
    m = k = 8192
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"{'N':>5} | {'fp8 ms':>9} {'TFLOPS':>7} | {'bf16 ms':>9} {'TFLOPS':>7}")
    a = (torch.randn(m, k, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    a16 = a.to(torch.bfloat16)
    for n in (4096, 2048, 128, 16):
        b = (torch.randn(n, k, device="cuda") * 0.5).to(torch.float8_e4m3fn).t()  # column-major K x N
        b16 = b.to(torch.bfloat16)
        fp8 = median_ms(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
        bf16 = median_ms(lambda: a16 @ b16)
        flops = 2.0 * m * k * n
        print(f"{n:5d} | {fp8:9.4f} {flops / fp8 * 1e-9:7.1f} | {bf16:9.4f} {flops / bf16 * 1e-9:7.1f}")


if __name__ == "__main__":
    main()
