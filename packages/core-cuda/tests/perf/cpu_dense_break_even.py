"""The CPU dense fallback's break-even density per block size, dtype and N on this machine.

For each (dtype, block, N) the blocked kernel (cpu_blocked_simd) and the dense GEMM
(cpu_dense_blas, numpy's OpenBLAS through BSRMM_BLAS) multiply the same full-density matrix
(every block stored, so the sparse kernel does its most work); each is timed in alternating
rounds, and the fastest round is kept (on a shared machine other work only ever adds time). The sparse time scales with the stored blocks, the dense one does not, so the
break-even density is t_dense / t_blocked(d = 1). Feeds src/cpu/dense_heuristic.cpp.

    python packages/core-cuda/tests/perf/cpu_dense_break_even.py /tmp/bsrmm-shared/libbsrmm.so

--cpu-time: one thread each (bsrmm's pool and the BLAS) timed by the process's CPU time, which
other processes' load does not inflate the way it inflates wall time (on 2 cores shared with
builds, wall-time ratios moved 5x between runs; these do not).
"""
import sys

if "--cpu-time" in sys.argv:  # before numpy loads its OpenBLAS
    import os
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    os.environ["BSRMM_NUM_THREADS"] = "1"
import argparse
import ctypes as C
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_peers import numpy_openblas  # noqa: E402
from cpu_vs_scipy import BsrDesc, Dense, Device, check  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("--m", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--cpu-time", action="store_true")
    parser.add_argument("--blocks", default="2,3,4,8,16,32,64")
    parser.add_argument("--ns", default="1,16,64,128,256")
    args = parser.parse_args()
    os.environ.setdefault("BSRMM_BLAS", numpy_openblas() or "")
    lib = C.CDLL(args.library)
    lib.bsrmm_last_error.restype = C.c_char_p
    ctx = C.c_void_p()
    check(lib, lib.bsrmm_context_create(Device(0, 0), C.byref(ctx)))
    check(lib, lib.bsrmm_context_set_tuning_mode(ctx, 0))
    rng = np.random.default_rng(0)
    m = k = args.m
    clock = time.process_time if args.cpu_time else time.perf_counter
    print(f"M = K = {m}, full density; fastest of {args.rounds} alternating rounds"
          + ("; one thread each, CPU time" if args.cpu_time else ""))
    print(f"{'dtype':8} {'block':>5} {'N':>4} {'blocked ms':>10} {'dense ms':>9} {'break-even d':>12}")
    for dtype, code in ((np.float32, 0), (np.float64, 3)):
        for block in [int(x) for x in args.blocks.split(",")]:
            mb = m // block * block
            for n in [int(x) for x in args.ns.split(",")]:
                rows = mb // block
                indptr = (np.arange(rows + 1) * rows).astype(np.int32)
                indices = np.tile(np.arange(rows, dtype=np.int32), rows)
                values = rng.uniform(-1, 1, (rows * rows, block, block)).astype(dtype)
                desc = BsrDesc(mb, mb, block, block, indices.size, indptr.ctypes.data,
                               indices.ctypes.data, 0, values.ctypes.data, code, Device(0, 0))
                matrix = C.c_void_p()
                check(lib, lib.bsrmm_matrix_create(ctx, C.byref(desc), 0, C.byref(matrix)))
                b = rng.uniform(-1, 1, (mb, n)).astype(dtype)
                c = np.empty((mb, n), dtype)
                bd = Dense(b.ctypes.data, mb, n, n, 0, code, Device(0, 0))
                cd = Dense(c.ctypes.data, mb, n, n, 0, code, Device(0, 0))
                times = {"cpu_blocked_simd": [], "cpu_dense_blas": []}
                for variant in times:
                    check(lib, lib.bsrmm_context_set_variant(ctx, variant.encode()))
                    check(lib, lib.bsrmm_matmul(ctx, matrix, C.byref(bd), C.byref(cd), None))
                for _ in range(args.rounds):
                    for variant in times:
                        check(lib, lib.bsrmm_context_set_variant(ctx, variant.encode()))
                        t0 = clock()
                        check(lib, lib.bsrmm_matmul(ctx, matrix, C.byref(bd), C.byref(cd), None))
                        times[variant].append(clock() - t0)
                tb = min(times["cpu_blocked_simd"]) * 1e3
                td = min(times["cpu_dense_blas"]) * 1e3
                print(f"{np.dtype(dtype).name:8} {block:5} {n:4} {tb:10.3f} {td:9.3f} {td / tb:12.3f}", flush=True)
                lib.bsrmm_matrix_destroy(matrix)
    lib.bsrmm_context_destroy(ctx)


if __name__ == "__main__":
    main()
