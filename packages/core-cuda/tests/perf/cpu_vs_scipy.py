"""CPU fast path vs scipy.sparse.bsr_array @ dense, side by side in one process.

Loads a shared build of the core through ctypes (no binding needed), builds each problem once,
checks both results against a float64 reference, then times both (median of repeats).

    cmake -S packages/core-cuda -B /tmp/bsrmm-shared -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=ON -DBSRMM_CUDA=OFF && cmake --build /tmp/bsrmm-shared -j2
    python packages/core-cuda/tests/perf/cpu_vs_scipy.py /tmp/bsrmm-shared/libbsrmm.so

Needs numpy and scipy. Default grid: M = K = 4096, N = 256, blocks 16/32/64, densities 0.05
and 0.25, float32 and float64.
"""
import argparse
import ctypes as C
import statistics
import time

import numpy as np
import scipy.sparse as sp


class Device(C.Structure):
    _fields_ = [("type", C.c_int), ("ordinal", C.c_int32)]


class Dense(C.Structure):
    _fields_ = [("data", C.c_void_p), ("rows", C.c_int64), ("cols", C.c_int64), ("ld", C.c_int64),
                ("layout", C.c_int), ("dtype", C.c_int), ("device", Device)]


class BsrDesc(C.Structure):
    _fields_ = [("rows", C.c_int64), ("cols", C.c_int64), ("block_height", C.c_int32),
                ("block_width", C.c_int32), ("nnzb", C.c_int64), ("row_ptr", C.c_void_p),
                ("col_idx", C.c_void_p), ("index_type", C.c_int), ("values", C.c_void_p),
                ("dtype", C.c_int), ("device", Device)]


DTYPES = {np.float32: 0, np.float64: 3}


def load(path):
    lib = C.CDLL(path)
    lib.bsrmm_last_error.restype = C.c_char_p
    lib.bsrmm_context_last_variant.restype = C.c_char_p
    return lib


def check(lib, status):
    if status != 0:
        raise RuntimeError(lib.bsrmm_last_error().decode())


def dense_of(array):
    return Dense(array.ctypes.data, array.shape[0], array.shape[1], array.shape[1], 0,
                 DTYPES[array.dtype.type], Device(0, 0))


def random_bsr(rng, m, k, block, density, dtype):
    rows, cols = m // block, k // block
    mask = rng.random((rows, cols)) < density
    indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(np.int32)
    indices = np.nonzero(mask)[1].astype(np.int32)
    data = rng.uniform(-1, 1, (len(indices), block, block)).astype(dtype)
    return sp.bsr_array((data, indices, indptr), shape=(m, k))


def median_seconds(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--variant", default="cpu_blocked_simd",
                        help="forced bsrmm variant; '' lets the tuner choose")
    args = parser.parse_args()

    lib = load(args.library)
    ctx = C.c_void_p()
    check(lib, lib.bsrmm_context_create(Device(0, 0), C.byref(ctx)))
    check(lib, lib.bsrmm_context_set_variant(ctx, args.variant.encode()))
    rng = np.random.default_rng(0)
    m = k = args.m
    print(f"M = K = {m}, N = {args.n}; times are medians of {args.repeats} runs")
    print(f"{'dtype':8} {'block':>5} {'density':>7} {'scipy ms':>9} {'bsrmm ms':>9} {'speedup':>8} "
          f"{'bsrmm GFLOP/s':>13}  variant")
    for dtype in (np.float32, np.float64):
        for block in (16, 32, 64):
            for density in (0.05, 0.25):
                a = random_bsr(rng, m, k, block, density, dtype)
                b = rng.uniform(-1, 1, (k, args.n)).astype(dtype)
                c = np.full((m, args.n), np.nan, dtype=dtype)
                desc = BsrDesc(m, k, block, block, a.indices.size, a.indptr.ctypes.data,
                               a.indices.ctypes.data, 0, a.data.ctypes.data, DTYPES[dtype],
                               Device(0, 0))
                matrix = C.c_void_p()
                check(lib, lib.bsrmm_matrix_create(ctx, C.byref(desc), 0, C.byref(matrix)))
                bd, cd = dense_of(b), dense_of(c)

                def run_bsrmm():
                    check(lib, lib.bsrmm_matmul(ctx, matrix, C.byref(bd), C.byref(cd), None))

                run_bsrmm()
                expected = a.astype(np.float64) @ b.astype(np.float64)
                tolerance = 1e-4 if dtype == np.float32 else 1e-10
                scale = np.abs(expected).max()
                assert np.abs(c - expected).max() <= tolerance * scale, "bsrmm result is wrong"
                assert np.abs(a @ b - expected).max() <= tolerance * scale, "scipy result is wrong"

                t_scipy = median_seconds(lambda: a @ b, args.repeats)
                t_bsrmm = median_seconds(run_bsrmm, args.repeats)
                flops = 2.0 * a.indices.size * block * block * args.n
                variant = lib.bsrmm_context_last_variant(ctx).decode()
                print(f"{np.dtype(dtype).name:8} {block:5} {density:7.2f} {t_scipy * 1e3:9.2f} "
                      f"{t_bsrmm * 1e3:9.2f} {t_scipy / t_bsrmm:7.1f}x {flops / t_bsrmm / 1e9:13.1f}  "
                      f"{variant}")
                lib.bsrmm_matrix_destroy(matrix)
    lib.bsrmm_context_destroy(ctx)


if __name__ == "__main__":
    main()
