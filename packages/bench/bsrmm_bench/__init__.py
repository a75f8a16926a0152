"""bsrmm's shared benchmark suite: case files + PRNG (cases/), peers, runner, report, compare.
Run it with `python -m bsrmm_bench --help`."""
