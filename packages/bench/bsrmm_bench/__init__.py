"""bsrmm's shared benchmark suite: case files + PRNG (cases/), peers, runner, report, compare.
Run it with `python -m bsrmm_bench --help`."""

import os as _os

# Idle BLAS / OpenMP threads sleep at once instead of spinning (Intel OpenMP: 200 ms by default;
# OpenBLAS: ~2^28 cycles): a spinning pool holds cores while the next contender runs, so on a
# small machine whoever runs next was timed against it (MKL BSR and CSR read 3.99 ms, a
# scheduler quantum, on products they finish in 0.2 ms: results/cpu-2core-2026-11-25-coverage).
# Set before numpy, MKL or torch load; a caller's own setting wins (docs/perf-log.md, "CPU
# against every peer", measuring note).
_os.environ.setdefault("KMP_BLOCKTIME", "0")
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

