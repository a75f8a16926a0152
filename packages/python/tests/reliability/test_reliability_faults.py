"""Faults seen from Python: no GPU (NoDeviceError with the core's reason, and the CPU still
works), NaN and Inf propagating per IEEE through every dtype and CPU variant, and the tuning
cache broken in every way a file can be — corrupt, truncated, nested past any parser's stack,
of another format, a directory, a FIFO, unwritable — or shared by processes tuning at once.
Cache cases run in child interpreters (the cache location is read from the environment), each
must multiply correctly and exit cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import bsrmm
from bsr_cases import activate, assert_matches, dense_from_bsr, np_dtype, random_bsr, reference

TESTS_DIR = str(Path(__file__).resolve().parent.parent)


def test_without_a_gpu_cuda_says_why_and_the_cpu_works():
    if bsrmm.cuda_available():
        pytest.skip("a CUDA device is present")
    reason = bsrmm.cuda_unavailable_reason()
    assert reason
    with pytest.raises(bsrmm.NoDeviceError) as caught:
        bsrmm.Context("cuda")
    assert len(str(caught.value)) > 20, str(caught.value)
    rng = np.random.default_rng(1)
    indptr, indices, data = random_bsr(rng, 5, 4, (3, 2), 0.5, "float32")
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (15, 8))
    b = rng.standard_normal((8, 6)).astype(np.float32)
    value, scale = reference(dense_from_bsr(indptr, indices, data, (15, 8)), b)
    assert_matches(bsrmm.matmul(a, b), value, scale, "float32", 8)


def _activate_limits(x: np.ndarray, activation):
    """The activation with the core's rule at infinities: ReLU, GELU and SiLU all give x at +inf
    and 0 at -inf (the GELU and SiLU formulas would give inf * 0 = NaN there)."""
    if activation is None:
        return x
    with np.errstate(invalid="ignore", over="ignore"):
        y = activate(np.where(np.isinf(x), 0.0, x), activation)
    return np.where(np.isinf(x), np.where(x > 0, x, 0.0), y)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("variant", ["cpu_blocked_simd", "cpu_reference_f64acc"])
@pytest.mark.parametrize("transpose", [False, True])
def test_nan_and_inf_propagate(dtype, variant, transpose):
    if variant not in bsrmm.variants():
        pytest.skip(f"{variant} is not in this build")
    rng = np.random.default_rng(3)
    # Every block stored: the dense float64 reference then multiplies exactly what bsrmm does.
    indptr, indices, data = random_bsr(rng, 3, 4, (4, 2), 1.0, dtype)
    data[0, 0, 0] = np.nan
    data[2, 3, 1] = np.inf
    data[-1, 1, 0] = -np.inf
    shape = (12, 8)
    a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, shape)
    inner = shape[0] if transpose else shape[1]
    rows = shape[1] if transpose else shape[0]
    b = rng.standard_normal((inner, 5)).astype(np_dtype(dtype))
    b[1, 2] = np.nan
    b[-1, 0] = np.inf
    c = rng.standard_normal((rows, 5)).astype(np_dtype(dtype))
    c[rows - 1, 3] = np.nan
    c0 = c.copy()
    bias = rng.standard_normal(rows).astype(np_dtype(dtype))
    bias[2] = -np.inf
    context = bsrmm.Context("cpu", variant=variant)
    for activation in [None, "relu", "gelu", "silu"]:
        out = c0.copy()
        bsrmm.matmul(a.T if transpose else a, b, alpha=1.5, beta=0.5, out=out, bias=bias,
                     activation=activation, context=context)
        with np.errstate(invalid="ignore"):
            value, scale = reference(dense_from_bsr(indptr, indices, data, shape), b, alpha=1.5,
                                     beta=0.5, c0=c0, transpose_a=transpose, bias=bias)
            value = _activate_limits(value, activation)
            assert_matches(out, value, np.where(np.isfinite(scale), scale, 0.0), dtype, inner)
    # beta == 0: C's NaN is never read; alpha = NaN: every element is NaN.
    out = np.full((rows, 5), np.nan, dtype=np_dtype(dtype))
    bsrmm.matmul(a.T if transpose else a, b, out=out, context=context)
    with np.errstate(invalid="ignore"):
        value, scale = reference(dense_from_bsr(indptr, indices, data, shape), b, transpose_a=transpose)
        assert_matches(out, value, np.where(np.isfinite(scale), scale, 0.0), dtype, inner)
    bsrmm.matmul(a.T if transpose else a, b, alpha=float("nan"), out=out, context=context)
    assert np.isnan(out.astype(np.float64)).all()


# A child interpreter: three problems whose tuning keys are the same in every child, each
# multiplied three times (AUTO tunes a key on its third call) with the given tuning mode and
# checked; prints what ran.
CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    import bsrmm
    sys.path.insert(0, sys.argv[3])
    from bsr_cases import assert_matches, dense_from_bsr, random_bsr, reference

    mode, seed = sys.argv[1], int(sys.argv[2])
    context = bsrmm.Context("cpu", tuning=mode)
    for problem in range(3):
        rng = np.random.default_rng(problem)
        indptr, indices, data = random_bsr(rng, 16, 16, (8, 8), 0.3, "float32")
        a = bsrmm.BsrMatrix.from_arrays(indptr, indices, data, (128, 128))
        b = np.random.default_rng(seed).standard_normal((128, 16 * (problem + 1))).astype(np.float32)
        value, scale = reference(dense_from_bsr(indptr, indices, data, (128, 128)), b)
        for call in range(3):
            out = bsrmm.matmul(a, b, context=context)
            assert_matches(out, value, scale, "float32", 128)
        print("ran", context.last_variant)
    """
)


def _spawn(cache: Path, mode: str, seed: int) -> subprocess.Popen:
    env = dict(os.environ, BSRMM_TUNING_CACHE=str(cache))
    return subprocess.Popen([sys.executable, "-c", CHILD, mode, str(seed), TESTS_DIR], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(child: subprocess.Popen, what: str):
    try:
        out, err = child.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        child.kill()  # a child left waiting (on a FIFO, say) would outlive the test run
        out, err = child.communicate()
        pytest.fail(f"{what}: still running after 300 s (killed)\nstdout:\n{out}\nstderr:\n{err}")
    assert child.returncode == 0, f"{what}: exit {child.returncode}\nstdout:\n{out}\nstderr:\n{err}"
    return out, err


@pytest.fixture(scope="module")
def tuner_in_build(tmp_path_factory):
    """Skips when a tuning child writes no cache: a build whose CPU multiplies are not tuned."""
    cache = tmp_path_factory.mktemp("probe") / "tuning.json"
    _finish(_spawn(cache, "auto", 0), "probing for the tuner")
    if not cache.exists():
        pytest.skip("no tuning cache is written by this build (the CPU path is not tuned)")


def test_processes_tuning_at_once_share_one_cache(tmp_path, tuner_in_build):
    cache = tmp_path / "tuning.json"
    children = [_spawn(cache, "force", seed) for seed in range(6)]
    errs = [_finish(child, f"tuning process {i}")[1] for i, child in enumerate(children)]
    for err in errs:
        assert "cache" not in err.lower(), f"a tuning process complained about the shared cache:\n{err}"
    entries = json.loads(cache.read_text())
    assert entries, "the shared cache is empty after six tuning processes"
    _, err = _finish(_spawn(cache, "auto", 99), "a reader of the shared cache")
    assert "cache" not in err.lower(), err
    print(f"python stress: 6 processes tuned into one cache of {len(cache.read_text())} bytes")


def _write(text):
    def make(path: Path) -> Path:
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return path
    return make


def _directory(path: Path) -> Path:
    path.mkdir()
    return path


def _fifo(path: Path) -> Path:
    """A FIFO: an open() for reading would wait for a writer, in every multiply."""
    os.mkfifo(path)
    return path


def _below_a_file(path: Path) -> Path:
    blocker = path.parent / "not-a-directory"
    blocker.write_text("a file where the cache's folder should be")
    return blocker / "tuning.json"


# name: (how to break the cache at a path -> the path to use, whether a store replaces it)
BROKEN_CACHES = {
    "corrupt": (_write("{ this is not json ]"), True),
    "truncated": (_write('{"format": 1, "entries": [{"key": "'), True),
    "empty": (_write(""), True),
    "binary": (_write(bytes(range(256)) * 64), True),
    "nested": (_write("[" * 200000 + "]" * 200000), True),
    "other format": (_write('{"format": 99999, "entries": "elsewhere"}'), True),
    "a directory": (_directory, False),
    "a FIFO": (_fifo, False),
    "unwritable": (_below_a_file, False),
}


@pytest.mark.parametrize("case", sorted(BROKEN_CACHES))
def test_a_broken_cache_never_fails_a_multiply(tmp_path, case, tuner_in_build):
    make, replaced = BROKEN_CACHES[case]
    cache = make(tmp_path / "tuning.json")
    out, err = _finish(_spawn(cache, "auto", 1), f"tuning with a {case} cache")
    assert out.count("ran ") == 3
    assert err.strip(), f"a {case} cache was ignored silently (no warning on stderr)"
    if replaced:  # the next store rewrote it as a valid cache
        json.loads(cache.read_text())
