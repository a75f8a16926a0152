"""Concurrency from Python, bounded in time, every result checked against float64:
threads sharing one Context and one BsrMatrix (the GIL is released inside the multiply, so the
core really runs them at once), a fresh matrix per round released to all threads together (its
lazily built plan is raced for), and threads each with their own Context on one shared matrix."""

from __future__ import annotations

import threading
import time

import numpy as np

import bsrmm
from bsr_cases import assert_matches, dense_from_bsr, random_bsr, reference

THREADS = 8
BUDGET_SECONDS = 2.0


def _problem(seed: int, dtype: str):
    rng = np.random.default_rng(seed)
    indptr, indices, data = random_bsr(rng, 9, 7, (4, 6), 0.35, dtype)
    shape = (9 * 4, 7 * 6)
    return indptr, indices, data, shape


def _checked_multiply(a, a_dense, dtype, transpose, seed, context):
    rng = np.random.default_rng(seed)
    inner = a_dense.shape[0] if transpose else a_dense.shape[1]
    b = rng.standard_normal((inner, 5 + seed % 7)).astype(np.dtype(dtype))
    if seed % 2:
        b = np.asfortranarray(b)
    out = bsrmm.matmul(a.T if transpose else a, b, alpha=0.75, context=context)
    value, scale = reference(a_dense, b, alpha=0.75, transpose_a=transpose)
    assert_matches(out, value, scale, dtype, inner)


def _run_threads(worker):
    errors = []

    def guarded(index):
        try:
            worker(index)
        except BaseException as error:  # reported from the main thread below
            errors.append(f"thread {index}: {error!r}")

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, "\n".join(errors)


def test_threads_share_one_context_and_a_fresh_matrix_each_round():
    context = bsrmm.Context("cpu", num_threads=2)
    barrier = threading.Barrier(THREADS + 1)
    current = {}
    stop = threading.Event()
    done = [0]
    lock = threading.Lock()

    def worker(index):
        round_ = 0
        while True:
            barrier.wait()
            if stop.is_set():
                return
            a, a_dense, dtype = current["a"], current["dense"], current["dtype"]
            _checked_multiply(a, a_dense, dtype, (index + round_) % 2 == 1, 1000 * round_ + index, context)
            with lock:
                done[0] += 1
            barrier.wait()
            round_ += 1

    errors = []

    def guarded(index):
        try:
            worker(index)
        except BaseException as error:
            errors.append(f"thread {index}: {error!r}")
            barrier.abort()

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    rounds = 0
    deadline = time.monotonic() + BUDGET_SECONDS
    try:
        while rounds < 4 or time.monotonic() < deadline:
            dtype = ["float32", "float64", "float16"][rounds % 3]
            indptr, indices, data, shape = _problem(rounds, dtype)
            current.update(a=bsrmm.BsrMatrix.from_arrays(indptr, indices, data, shape),
                           dense=dense_from_bsr(indptr, indices, data, shape), dtype=dtype)
            barrier.wait()
            barrier.wait()
            rounds += 1
        stop.set()
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    for t in threads:
        t.join()
    assert not errors, "\n".join(errors)
    print(f"python stress: {THREADS} threads, {rounds} fresh matrices, {done[0]} checked multiplies")


def _runs_here(variant, a):
    """Whether a multiply forced to `variant` runs on this machine: cpu_dense_blas needs a CBLAS,
    cpu_rowwise_simd AVX2 + FMA or AVX-512 (not in a sanitized build); both decline otherwise."""
    b = np.ones((a.shape[1], 2), np.float32)
    try:
        bsrmm.matmul(a, b, context=bsrmm.Context("cpu", variant=variant))
    except bsrmm.UnsupportedError:
        return False
    return True


def test_threads_with_their_own_contexts_share_one_matrix():
    indptr, indices, data, shape = _problem(42, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, shape)
    a_dense = dense_from_bsr(indptr, indices, data, shape)
    variants = [v for v in bsrmm.variants(kind="matmul") if v.startswith("cpu_") and _runs_here(v, a)] + [None]
    count = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + BUDGET_SECONDS

    def worker(index):
        context = bsrmm.Context("cpu", num_threads=1 + index % 3, variant=variants[index % len(variants)])
        round_ = 0
        while round_ < 3 or time.monotonic() < deadline:
            _checked_multiply(a, a_dense, "float32", round_ % 2 == 1, 77 * round_ + index, context)
            round_ += 1
            with lock:
                count[0] += 1

    _run_threads(worker)
    print(f"python stress: {THREADS} threads with own contexts, {count[0]} checked multiplies")
