"""The training suite's STK adapters run for real on the CPU: Triton's interpreter
(TRITON_INTERPRET=1, in a subprocess since it must be set before triton is imported) executes
STK's own kernels, and each op and an MLP step (plain and gated) must match float64. float16 and
float32 only: the interpreter computes bfloat16 dots wrongly (a plain tl.dot too), so bf16 is
checked on the GPU. Skips when STK is not staged (.carry/stk: experiments/stage-stk.sh)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bsrmm_bench.backends import Unavailable
from bsrmm_bench.peers import stk_triton

SCRIPT = textwrap.dedent('''
    import json, sys, types
    from bsrmm_bench.peers import stk_triton
    from bsrmm_bench.training import mlp, ops, run, suite

    stk_triton.why_not = lambda *args, **kwargs: None  # the interpreter runs the CUDA kernels here
    cuda = types.SimpleNamespace(device="cuda")
    errors = {}
    for dtype in ("float16", "float32"):
        for op in suite.OPS:
            c = suite.TrainingCase(id=op, kind="op", device="cpu", dtype=dtype, block=128, density=0.5, seed=1,
                                   params={"op": op, "m": 256, "k": 384, "n": 128})
            o = ops.build(c, "cpu")
            positions, ref = ops.reference(o)
            p = ops.STK.prepare(o, cuda)
            p.run(0)
            errors[f"{dtype} {op}"] = run.check(p.result(0), ref, positions, ops, o)
        for kind in suite.MLPS:
            c = suite.TrainingCase(id=kind, kind="mlp", device="cpu", dtype=dtype, block=128, density=0.5, seed=2,
                                   params={"mlp": kind, "d_model": 128, "d_ff": 256, "tokens": 128})
            o = mlp.build(c, "cpu")
            ref = mlp.reference(o)
            p = mlp.STK.prepare(o, cuda)
            p.run(0)
            errors[f"{dtype} mlp {kind}"] = run.check(p.result(0), ref, None, mlp, o)
    print(json.dumps(errors))
''')


def test_stk_adapters_match_float64_under_tritons_interpreter():
    try:
        stk_triton.load()
    except Unavailable as e:
        pytest.skip(str(e))
    bench = Path(__file__).resolve().parent.parent
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(bench))
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    errors = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(errors) == 2 * (3 + 2)
    for name, error in errors.items():
        tolerance = 1e-3 if name.startswith("float16") else 1e-5
        if " mlp " in name:
            tolerance *= 4  # as the suite: chained products
        assert error <= tolerance, (name, error)
