"""bsrmm's CPU path against every CPU peer, in one process, on issue 22's cases.

Peers: dense BLAS through numpy (its thread count recorded through threadpoolctl), scipy.sparse
BSR and CSR, Intel MKL's sparse multiply (sparse_dot_mkl over the `mkl` wheel's libmkl_rt, CSR
and, for square blocks, BSR), torch's CPU sparse matmul (CSR, BSR) where torch is installed.
Every output is checked against a float64 product before timing; each round runs every
contender once in turn (so a load change on a shared machine hits all of them), and both the
median and the fastest round are reported (on a shared machine other work only adds time, so
the fastest is the steadier comparison).

bsrmm is loaded from a shared build through ctypes (no binding needed), with BSRMM_BLAS pointed
at numpy's bundled OpenBLAS (as the Python binding does) so cpu_dense_blas can run:

    cmake -S packages/core-cuda -B /tmp/bsrmm-shared -G Ninja -DCMAKE_BUILD_TYPE=Release \\
        -DBUILD_SHARED_LIBS=ON -DBSRMM_CUDA=OFF && cmake --build /tmp/bsrmm-shared -j2
    python packages/core-cuda/tests/perf/cpu_peers.py /tmp/bsrmm-shared/libbsrmm.so [--only NAME]

"bsrmm" is the default context after tuning (tuning mode AUTO, cache in a temporary file);
"bsrmm untuned" is the heuristic's pick (tuning OFF); --baseline LIB adds another build (e.g.
the commit before) as "bsrmm before", tuned, in the same rounds; --variants a,b adds each
variant forced ("bsrmm blocked", "bsrmm rowwise"; one that declines a case is left out of it).
--set coverage runs the CPU coverage run's tiny-block cells (and a few it won, for regressions)
instead of issue 22's cases; --cpu-time runs one thread each, timed by process CPU time. The
contender that runs first in a round ("bsrmm") can measure slower than the same variant later
in the round: caches cold from the round's last peer.
"""
import os
import sys

if "--cpu-time" in sys.argv:  # one thread everywhere, set before numpy, MKL or torch load
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "BSRMM_NUM_THREADS"):
        os.environ[var] = "1"

# Idle BLAS threads sleep at once instead of spinning (Intel OpenMP: 200 ms by default; OpenBLAS:
# ~2^28 cycles): a spinning pool holds both cores while the next contender runs, so whoever runs
# after MKL or numpy would be timed on a busy machine. Set before numpy or MKL load.
os.environ.setdefault("KMP_BLOCKTIME", "0")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import argparse  # noqa: E402
import ctypes as C  # noqa: E402
import glob  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_vs_scipy import BsrDesc, Dense, Device, check  # noqa: E402

DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 3}
DENSE_BYTES_LIMIT = 2 << 30  # the dense peer materialises A: not beyond this (the stencils)


def numpy_openblas():
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "libscipy_openblas*.so"))
    return os.path.realpath(libs[0]) if libs else None


def mkl_rt():
    if os.environ.get("MKL_RT"):
        return os.environ["MKL_RT"]
    from importlib import metadata
    try:
        files = [f for f in metadata.files("mkl") or [] if "libmkl_rt.so" in str(f)]
    except metadata.PackageNotFoundError:
        return None
    if files:
        os.environ["MKL_RT"] = str(files[0].locate().resolve())
        return os.environ["MKL_RT"]
    return None


# ---- patterns -----------------------------------------------------------------------------

def stencil(dims, points, block, dtype, rng):
    """A block stencil on a grid: one block row per grid point, a block per neighbour."""
    shape = tuple(dims)
    n = int(np.prod(shape))
    coords = np.stack(np.unravel_index(np.arange(n), shape), axis=1)
    if points in (5, 7):
        offsets = [o for o in np.ndindex(*(3,) * len(shape)) if sum(abs(x - 1) for x in o) <= 1]
    else:  # 9-point (2-D) or 27-point (3-D): the whole 3^d neighbourhood
        offsets = list(np.ndindex(*(3,) * len(shape)))
    rows, cols = [], []
    for o in offsets:
        nb = coords + (np.array(o) - 1)
        ok = np.all((nb >= 0) & (nb < np.array(shape)), axis=1)
        rows.append(np.nonzero(ok)[0])
        cols.append(np.ravel_multi_index(tuple(nb[ok].T), shape))
    rows = np.concatenate(rows)
    cols = np.concatenate(cols)
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int32)
    data = rng.uniform(-1, 1, (len(cols), block, block)).astype(dtype)
    return sp.bsr_array((data, cols.astype(np.int32), indptr), shape=(n * block, n * block))


def uniform(m, k, block, density, dtype, rng):
    rows, cols = m // block, k // block
    mask = rng.random((rows, cols)) < density
    return from_mask(mask, block, dtype, rng)


def causal(m, block, dtype, rng):
    rows = m // block
    return from_mask(np.tril(np.ones((rows, rows), dtype=bool)), block, dtype, rng)


def from_mask(mask, block, dtype, rng):
    indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(np.int32)
    indices = np.nonzero(mask)[1].astype(np.int32)
    data = rng.uniform(-1, 1, (len(indices), block, block)).astype(dtype)
    return sp.bsr_array((data, indices, indptr), shape=(mask.shape[0] * block, mask.shape[1] * block))


def banded(nb, block, dtype, rng):
    """Block tridiagonal (the coverage suite's banded-l1-u1)."""
    offsets = np.array([-1, 0, 1])
    rows = np.repeat(np.arange(nb), 3)
    cols = rows + np.tile(offsets, nb)
    ok = (cols >= 0) & (cols < nb)
    mask = sp.csr_array((np.ones(ok.sum(), dtype=bool), (rows[ok], cols[ok])), shape=(nb, nb))
    indptr = mask.indptr.astype(np.int32)
    data = rng.uniform(-1, 1, (mask.nnz, block, block)).astype(dtype)
    return sp.bsr_array((data, mask.indices.astype(np.int32), indptr), shape=(nb * block, nb * block))


def sparse_uniform(m, block, density, dtype, rng):
    """Uniform block pattern without a dense mask (for very sparse, large matrices)."""
    nb = m // block
    count = rng.binomial(nb * nb, density)
    flat = np.unique(rng.integers(0, nb * nb, count))
    mask = sp.csr_array((np.ones(flat.size, dtype=bool), (flat // nb, flat % nb)), shape=(nb, nb))
    data = rng.uniform(-1, 1, (mask.nnz, block, block)).astype(dtype)
    return sp.bsr_array((data, mask.indices.astype(np.int32), mask.indptr.astype(np.int32)),
                        shape=(nb * block, nb * block))


def coverage_cases(rng):
    """The cells of the CPU coverage run (results/cpu-2core-2026-11-25-coverage-report) that lost
    to a peer, with the suite's shapes (patterns rebuilt here: same kind, size and density)."""
    f32, f64 = np.float32, np.float64
    yield "cov 1x1 9pt 256^2 f32 N=16", lambda: stencil((256, 256), 9, 1, f32, rng), 16
    yield "cov 1x1 7pt 32^3 f32 N=16", lambda: stencil((32, 32, 32), 7, 1, f32, rng), 16
    yield "cov 1x1 d0.0005 8192 f32 N=128", lambda: sparse_uniform(8192, 1, 0.00048828125, f32, rng), 128
    yield "cov 2x2 banded 4096 f32 N=1", lambda: banded(2048, 2, f32, rng), 1
    yield "cov 1x1 banded 16384 f32 N=2", lambda: banded(16384, 1, f32, rng), 2
    yield "cov 2x2 d0.0005 16384 f64 N=8", lambda: sparse_uniform(16384, 2, 0.00048828125, f64, rng), 8
    yield "cov 3x3 d0.0015 32766 f64 N=8", lambda: sparse_uniform(32766, 3, 0.0014649331624244644, f64, rng), 8
    yield "cov 8x8 d0.0066 32768 f64 N=1", lambda: sparse_uniform(32768, 8, 0.006591796875, f64, rng), 1
    yield "cov 4x4 27pt 16^3 f32 N=1", lambda: stencil((16, 16, 16), 27, 4, f32, rng), 1
    yield "cov 4x4 27pt 16^3 f64 N=1", lambda: stencil((16, 16, 16), 27, 4, f64, rng), 1
    yield "cov b64 d0.125 4096 f32 N=1", lambda: uniform(4096, 4096, 64, 0.125, f32, rng), 1
    yield "cov 4x4 9pt 32^2 f64 N=4", lambda: stencil((32, 32), 9, 4, f64, rng), 4
    yield "cov 4x4 d0.0625 4096 f64 N=32", lambda: uniform(4096, 4096, 4, 0.0625, f64, rng), 32
    yield "cov 6x6 9pt 104^2 f64 N=2", lambda: stencil((104, 104), 9, 6, f64, rng), 2
    yield "cov 6x6 banded 4092 f32 N=4", lambda: banded(682, 6, f32, rng), 4
    yield "cov 2x2 powerlaw 8192 f64 N=256", lambda: uniform(8192, 8192, 2, 0.00390625, f64, rng), 256
    yield "cov 3x3 27pt 16^3 f64 N=16", lambda: stencil((16, 16, 16), 27, 3, f64, rng), 16
    yield "cov 3x3 9pt 91x30 f32 N=4", lambda: stencil((91, 30), 9, 3, f32, rng), 4
    # cells bsrmm already won there (tiny blocks at N 16-128): kept to catch regressions
    yield "cov+ 4x4 27pt 16^3 f64 N=16", lambda: stencil((16, 16, 16), 27, 4, f64, rng), 16
    yield "cov+ 4x4 27pt 16^3 f32 N=64", lambda: stencil((16, 16, 16), 27, 4, f32, rng), 64
    yield "cov+ 8x8 9pt 128^2 f32 N=32", lambda: stencil((128, 128), 9, 8, f32, rng), 32
    yield "cov+ 8x8 d0.0078 16384 f32 N=32", lambda: uniform(16384, 16384, 8, 0.0078125, f32, rng), 32
    yield "cov+ 6x6 d0.0117 8190 f64 N=64", lambda: uniform(8190, 8190, 6, 0.011721611721611722, f64, rng), 64
    yield "cov+ 2x2 7pt 16^3 f64 N=128", lambda: stencil((16, 16, 16), 7, 2, f64, rng), 128
    yield "cov+ 2x2 banded 16384 f32 N=128", lambda: banded(8192, 2, f32, rng), 128


def cases(rng):
    f32, f64 = np.float32, np.float64
    for n in (1, 16, 64):
        yield f"stencil9 256^2 3x3 f64 N={n}", lambda: stencil((256, 256), 9, 3, f64, rng), n
    for n in (1, 16):
        yield f"stencil27 24^3 4x4 f64 N={n}", lambda: stencil((24, 24, 24), 27, 4, f64, rng), n
    yield "4096^2 b16 d0.05 f32 N=256", lambda: uniform(4096, 4096, 16, 0.05, f32, rng), 256
    yield "4096^2 b64 d0.25 f32 N=256", lambda: uniform(4096, 4096, 64, 0.25, f32, rng), 256
    yield "2048^2 b32 causal f32 N=128", lambda: causal(2048, 32, f32, rng), 128
    yield "2048^2 b32 d0.125 f64 N=128", lambda: uniform(2048, 2048, 32, 0.125, f64, rng), 128
    yield "4096^2 b64 d0.125 f32 N=1", lambda: uniform(4096, 4096, 64, 0.125, f32, rng), 1


# ---- contenders ---------------------------------------------------------------------------

class Bsrmm:
    def __init__(self, lib, tuning, variant=None):
        self.lib = lib
        self.ctx = C.c_void_p()
        check(lib, lib.bsrmm_context_create(Device(0, 0), C.byref(self.ctx)))
        check(lib, lib.bsrmm_context_set_tuning_mode(self.ctx, tuning))
        if variant:
            check(lib, lib.bsrmm_context_set_variant(self.ctx, variant.encode()))

    def prepare(self, a, b):
        lib = self.lib
        a.sort_indices()
        self.keep = (a.data, a.indices, a.indptr)
        bh, bw = a.blocksize
        desc = BsrDesc(a.shape[0], a.shape[1], bh, bw, a.indices.size, a.indptr.ctypes.data,
                       a.indices.ctypes.data, 0, a.data.ctypes.data, DTYPES[a.dtype], Device(0, 0))
        matrix = C.c_void_p()
        check(lib, lib.bsrmm_matrix_create(self.ctx, C.byref(desc), 0, C.byref(matrix)))
        self.matrix = matrix
        out = np.full((a.shape[0], b.shape[1]), np.nan, dtype=a.dtype)
        bd = Dense(b.ctypes.data, b.shape[0], b.shape[1], b.shape[1], 0, DTYPES[b.dtype], Device(0, 0))
        cd = Dense(out.ctypes.data, out.shape[0], out.shape[1], out.shape[1], 0, DTYPES[b.dtype], Device(0, 0))

        def run():
            check(lib, lib.bsrmm_matmul(self.ctx, matrix, C.byref(bd), C.byref(cd), None))
            return out
        return run

    def variant(self):
        return self.lib.bsrmm_context_last_variant(self.ctx).decode()

    def release(self):
        self.lib.bsrmm_matrix_destroy(self.matrix)


def contenders(lib, a, b, have_mkl, baseline=None, variants=()):
    out = {}
    tuned, untuned = Bsrmm(lib, 1), Bsrmm(lib, 0)
    out["bsrmm"] = (tuned.prepare(a, b), tuned)
    out["bsrmm untuned"] = (untuned.prepare(a, b), untuned)
    handles = [tuned, untuned]
    for variant in variants:  # forced variants, named by their suffix
        forced = Bsrmm(lib, 0, variant)
        out["bsrmm " + variant.split("_")[1]] = (forced.prepare(a, b), forced)
        handles.append(forced)
    if baseline is not None:
        before = Bsrmm(baseline, 1)
        out["bsrmm before"] = (before.prepare(a, b), before)
        handles.append(before)
    if a.shape[0] * a.shape[1] * a.dtype.itemsize <= DENSE_BYTES_LIMIT:
        dense = a.toarray()
        out["dense numpy"] = (lambda: dense @ b, None)
    out["scipy BSR"] = (lambda: a @ b, None)
    csr = a.tocsr()
    out["scipy CSR"] = (lambda: csr @ b, None)
    if have_mkl:
        import sparse_dot_mkl
        mkl_out = np.empty((a.shape[0], b.shape[1]), dtype=a.dtype)
        out["MKL CSR"] = (lambda: sparse_dot_mkl.dot_product_mkl(csr, b, out=mkl_out, out_scalar=0.0), None)
        if a.blocksize[0] == a.blocksize[1]:
            mkl_bsr_out = np.empty_like(mkl_out)
            out["MKL BSR"] = (lambda: sparse_dot_mkl.dot_product_mkl(a, b, out=mkl_bsr_out, out_scalar=0.0), None)
    try:
        import torch
        tb = torch.from_numpy(b)
        tcsr = torch.sparse_csr_tensor(torch.from_numpy(csr.indptr.astype(np.int64)),
                                       torch.from_numpy(csr.indices.astype(np.int64)),
                                       torch.from_numpy(csr.data), size=csr.shape)
        out["torch CSR"] = (lambda: (tcsr @ tb).numpy(), None)
        if a.blocksize[0] == a.blocksize[1]:
            tbsr = torch.sparse_bsr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                           torch.from_numpy(a.indices.astype(np.int64)),
                                           torch.from_numpy(a.data), size=a.shape)
            out["torch BSR"] = (lambda: (tbsr @ tb).numpy(), None)
    except ImportError:
        pass
    return out, handles


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--baseline", default="", help="another build of libbsrmm.so, timed as 'bsrmm before'")
    parser.add_argument("--set", choices=("issue", "coverage"), default="issue",
                        help="issue 22's cases, or the coverage run's losing cells")
    parser.add_argument("--variants", default="",
                        help="comma-separated CPU variants to force beside the tuned / untuned choice")
    parser.add_argument("--cpu-time", action="store_true",
                        help="one thread each, timed by the process's CPU time (what other "
                             "processes' load inflates least)")
    parser.add_argument("--min-seconds", type=float, default=0.05,
                        help="repeat a contender within a round until this long, report per call")
    args = parser.parse_args()

    blas = numpy_openblas()
    if blas and not os.environ.get("BSRMM_BLAS"):
        os.environ["BSRMM_BLAS"] = blas
    os.environ.setdefault("BSRMM_TUNING_CACHE", os.path.join(tempfile.mkdtemp(), "tuning.json"))
    have_mkl = mkl_rt() is not None
    if have_mkl:
        try:
            import sparse_dot_mkl  # noqa: F401
        except Exception as e:  # noqa: BLE001
            print(f"# MKL unavailable: {e}")
            have_mkl = False
    lib = C.CDLL(args.library)
    baseline = C.CDLL(args.baseline) if args.baseline else None
    for handle in (lib, baseline):
        if handle is not None:
            handle.bsrmm_last_error.restype = C.c_char_p
            handle.bsrmm_context_last_variant.restype = C.c_char_p

    from threadpoolctl import threadpool_info
    print(f"# BSRMM_BLAS={os.environ.get('BSRMM_BLAS')}  MKL_RT={os.environ.get('MKL_RT')}  "
          f"KMP_BLOCKTIME={os.environ['KMP_BLOCKTIME']}  OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']}")
    print("# BLAS libraries loaded (threadpoolctl): " + "; ".join(
        f"{i['internal_api']} {i.get('version')} threads {i['num_threads']} ({os.path.basename(i['filepath'])})"
        for i in threadpool_info() if i["user_api"] == "blas"))
    if have_mkl:
        import sparse_dot_mkl
        print(f"# MKL threads {sparse_dot_mkl.mkl_get_max_threads()}")
    print(f"# medians of {args.rounds} rounds; each round runs every contender in turn")
    rng = np.random.default_rng(0)
    variants = [v for v in args.variants.split(",") if v]
    clock = time.process_time if args.cpu_time else time.perf_counter
    for name, make, n in (coverage_cases if args.set == "coverage" else cases)(rng):
        if args.only and args.only not in name:
            continue
        a = make()
        b = rng.uniform(-1, 1, (a.shape[1], n)).astype(a.dtype)
        expected = a.astype(np.float64) @ b.astype(np.float64)
        scale = (abs(a).astype(np.float64) @ abs(b).astype(np.float64)).max()
        tol = (1e-5 if a.dtype == np.float32 else 1e-12) * scale
        runs, handles = contenders(lib, a, b, have_mkl, baseline, variants)
        for who, (fn, _) in list(runs.items()):
            try:
                for _ in range(4):  # the tuned context tunes on its first calls
                    got = fn()
            except RuntimeError as e:  # a forced variant that declines this case
                print(f"  ({who}: {e})")
                del runs[who]
                continue
            err = np.abs(np.asarray(got, dtype=np.float64) - expected).max()
            assert err <= tol, f"{name}: {who} is wrong (max error {err:.3g}, tolerance {tol:.3g})"
        reps = {}
        for who, (fn, _) in runs.items():
            t0 = time.perf_counter()
            fn()
            reps[who] = max(1, int(args.min_seconds / max(time.perf_counter() - t0, 1e-6)))
        times = {who: [] for who in runs}
        for _ in range(args.rounds):
            for who, (fn, _) in runs.items():
                t0 = clock()
                for _ in range(reps[who]):
                    fn()
                times[who].append((clock() - t0) / reps[who])
        med = {who: statistics.median(t) * 1e3 for who, t in times.items()}
        low = {who: min(t) * 1e3 for who, t in times.items()}
        peers = {w: t for w, t in med.items() if not w.startswith("bsrmm")}
        best_peer = min(peers, key=peers.get)
        best_peer_low = min((w for w in low if not w.startswith("bsrmm")), key=low.get)
        density = a.nnz / (a.shape[0] * a.shape[1])
        print(f"\n{name}  ({a.shape[0]}x{a.shape[1]}, nnzb {a.indices.size}, density {density:.4f})")
        print(f"  {'':14} {'median':>9}    {'fastest':>9}")
        ran = {"bsrmm": handles[0], "bsrmm untuned": handles[1]}
        ran.update({"bsrmm " + v.split("_")[1]: h for v, h in zip(variants, handles[2:])})
        if baseline is not None:
            ran["bsrmm before"] = handles[-1]
        for who in sorted(med, key=med.get):
            extra = f"  [{ran[who].variant()}]" if who in ran and who in runs else ""
            print(f"  {who:14} {med[who]:9.3f} ms {low[who]:9.3f} ms{extra}")
        print(f"  => bsrmm / best peer: median {med['bsrmm'] / peers[best_peer]:.2f}x ({best_peer}), "
              f"fastest {low['bsrmm'] / low[best_peer_low]:.2f}x ({best_peer_low})")
        for h in handles:
            h.release()


if __name__ == "__main__":
    main()
