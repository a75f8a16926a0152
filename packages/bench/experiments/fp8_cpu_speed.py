"""fp8 products on the CPU against the f32 product of the same dequantised values and the fp8
reference kernel (docs/perf-log.md entry 66): A quantised per block (e4m3), B per tensor, the
heuristic's pick for both dtypes, median of 5 (the reference once). Prints the times, the
variant fp8 ran and its relative error against float64 of the dequantised operands.

    python packages/bench/experiments/fp8_cpu_speed.py
"""
import time

import numpy as np

import bsrmm


def median_ms(run, reps=5):
    run()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2] * 1e3


def main():
    rng = np.random.default_rng(0)
    for m, block, density, n in [(1024, 32, 0.5, 256), (2048, 64, 0.25, 128), (4096, 16, 0.125, 16), (2048, 4, 0.05, 64)]:
        keep = rng.random((m // block, m // block)) < density
        w = rng.standard_normal((m, m)) * np.kron(keep, np.ones((block, block)))
        a8 = bsrmm.BsrMatrix.from_dense(w, block, dtype="float8_e4m3")
        a32 = a8.astype("float32")
        q, s = bsrmm.quantize_fp8(rng.standard_normal((m, n)))
        x32 = q.astype(np.float32) * np.float32(s)
        context = bsrmm.Context("cpu")
        reference = bsrmm.Context("cpu", variant="cpu_reference_f64acc")
        fp8 = median_ms(lambda: bsrmm.matmul(a8, q, b_scales=s, context=context))
        f32 = median_ms(lambda: bsrmm.matmul(a32, x32))
        slow = median_ms(lambda: bsrmm.matmul(a8, q, b_scales=s, context=reference), reps=1)
        got = bsrmm.matmul(a8, q, b_scales=s, context=context)
        want = a32.to_dense().astype(np.float64) @ x32.astype(np.float64)
        error = np.linalg.norm(got - want) / np.linalg.norm(want)
        print(f"{m}^2 block {block} d {density} N {n}: fp8 {fp8:.2f} ms ({context.last_variant}), "
              f"f32 {f32:.2f} ms, fp8 reference {slow:.1f} ms, relative error {error:.1e}")


if __name__ == "__main__":
    main()
