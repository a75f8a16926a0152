"""The nastiest inputs run in a child interpreter: a crash there (segfault, abort) fails this test
instead of killing the test run, and proves each case ends in a Python exception."""

from __future__ import annotations

import subprocess
import sys
import textwrap

NASTY = textwrap.dedent(
    r'''
    import threading
    import numpy as np
    import bsrmm

    survived = 0

    def expect(cls, fn, *words):
        global survived
        try:
            fn()
        except cls as error:
            message = str(error)
            assert all(w in message for w in words), (words, message)
            survived += 1
            return
        raise AssertionError(f"no {cls.__name__} from {fn}")

    f32 = np.float32
    one_block = np.ones((1, 1, 1), f32)

    # Index values far beyond int32 (the core stores int32 indices).
    expect(bsrmm.InvalidArgumentError, lambda: bsrmm.BsrMatrix.from_arrays(
        np.array([0, 2**40], np.int64), np.array([0], np.int64), one_block, (1, 1)))
    expect(bsrmm.InvalidArgumentError, lambda: bsrmm.BsrMatrix.from_arrays(
        np.array([0, 1], np.int64), np.array([2**40], np.int64), one_block, (1, 2**41)))
    # A shape that would need an indptr of 2**40 entries: caught before any read.
    expect(bsrmm.InvalidArgumentError, lambda: bsrmm.BsrMatrix.from_arrays(
        [0, 1], [0], one_block, (2**40, 2**40)), "indptr")
    # Enormous block sides with no blocks at all.
    expect(bsrmm.InvalidArgumentError, lambda: bsrmm.BsrMatrix.from_arrays(
        [0, 0], [], np.ones((0, 2**31, 1), f32), (2**31, 1)))
    # nnzb larger than the number of block positions.
    expect(bsrmm.InvalidArgumentError, lambda: bsrmm.BsrMatrix.from_arrays(
        [0, 2], [0, 0], np.ones((2, 1, 1), f32), (1, 1)))

    a = bsrmm.BsrMatrix.from_dense(np.eye(6, dtype=f32), 3)

    # Misaligned arrays (offset by one byte inside a buffer): B is copied (as numpy would read
    # it), out must be written where it lies, so it is refused.
    raw = np.frombuffer(bytearray(4 * 18 + 1), dtype=np.uint8)[1:].view(f32).reshape(6, 3)
    assert np.array_equal(bsrmm.matmul(a, raw), raw)
    expect(bsrmm.InvalidArgumentError, lambda: bsrmm.matmul(a, np.ones((6, 3), f32), out=raw),
           "aligned")
    # Objects numpy reads as arrays of the wrong shape, or that lie about being DLPack producers.
    expect(bsrmm.InvalidArgumentError, lambda: bsrmm.matmul(a, memoryview(b"x" * 72)),
           "B has 72 rows")

    class NotACapsule:
        def __dlpack_device__(self): return (1, 0)
        def __dlpack__(self, **kwargs): return 42
    expect(TypeError, lambda: bsrmm.matmul(a, NotACapsule()), "capsule")

    capsule = np.ones((6, 3), f32).__dlpack__()
    class SameCapsuleTwice:
        def __dlpack_device__(self): return (1, 0)
        def __dlpack__(self, stream=None): return capsule
    bsrmm.matmul(a, SameCapsuleTwice())  # the first use consumes it
    expect(TypeError, lambda: bsrmm.matmul(a, SameCapsuleTwice()), "consumed")

    class OnAnAccelerator:
        def __dlpack_device__(self): return (8, 0)  # Metal
        def __dlpack__(self, **kwargs): raise AssertionError("never exported")
    expect(bsrmm.UnsupportedError, lambda: bsrmm.matmul(a, OnAnAccelerator()), "device type 8")

    # NaN everywhere propagates; nothing else happens.
    nan_a = bsrmm.BsrMatrix.from_dense(np.full((6, 6), np.nan, f32), 2)
    assert np.isnan(bsrmm.matmul(nan_a, np.full((6, 4), np.nan, f32))).all()

    # Zero-row matrices and zero-column B.
    empty = bsrmm.BsrMatrix.from_arrays([0], [], np.ones((0, 2, 2), f32), (0, 8))
    assert bsrmm.matmul(empty, np.ones((8, 5), f32)).shape == (0, 5)
    assert bsrmm.matmul(a, np.ones((6, 0), f32)).shape == (6, 0)

    # One shared default context, many threads at once: each result still exact.
    rng = np.random.default_rng(0)
    bs = [rng.standard_normal((6, 64)).astype(f32) for _ in range(8)]
    results = [None] * 8
    def work(i):
        for _ in range(20):
            results[i] = a @ bs[i]
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    for b, c in zip(bs, results):
        assert np.array_equal(b, c)

    print(f"survived {survived}")
    '''
)


def test_nasty_inputs_raise_and_never_crash_the_interpreter():
    done = subprocess.run(
        [sys.executable, "-c", NASTY], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "survived 10" in done.stdout, done.stdout + done.stderr
