"""Shared by the runner, report and compare tests: a tiny suite and stand-in implementations."""

from __future__ import annotations

import json

import numpy as np

from bsrmm_bench import timing
from bsrmm_bench.backends import Unavailable
from bsrmm_bench.impl import Implementation, Prepared
from bsrmm_bench.peers import cpu

FAST = timing.Budget(warmup_runs=0, min_runs=3, max_runs=4, seconds=0.01)


def write_tiny_suite(directory, name="tiny"):
    doc = {
        "suite": name,
        "defaults": {"m": 64, "k": 96, "n": 8, "dtype": "float32", "devices": ["cpu"], "pattern": {"kind": "uniform"}},
        "cases": [
            {"vary": [["block", [8, 16]], ["pattern.density", [0.25, 0.5]]]},
            {"block": [8, 16], "transpose_a": True, "layout_b": "col", "layout_c": "col", "pattern": {"kind": "topk", "density": 0.3}},
        ],
    }
    (directory / f"{name}.json").write_text(json.dumps(doc))
    return name


def _product(ops, i, dtype):
    return (ops.dense_op_a(i) @ ops.sets[i].b.astype(np.float64)).astype(dtype)


def _writer(role, name, damage=None):
    """An implementation computing the exact product into a poisoned output, then `damage`."""

    def prepare(ops, backend, context):
        case = ops.case
        outs = [backend.empty((case.m, case.n), case.dtype, case.layout_c) for _ in ops.sets]

        def run(i):
            outs[i][...] = _product(ops, i, outs[i].dtype)
            if damage:
                damage(outs[i])

        return Prepared(run=run, result=lambda i: outs[i], poison=lambda i: backend.poison(outs[i]),
                        variant=lambda: "fake_variant_f32" if role == "ours" else None)

    return Implementation(name=name, role=role, label=name, prepare=prepare)


def _half(out):
    out[out.shape[0] // 2:] = np.nan  # as if half the rows were never written


def _off(out):
    out *= 1 + 1e-3


def _boom_prepare(ops, backend, context):
    def run(i):
        raise RuntimeError("kernel launch failed: invalid argument")

    return Prepared(run=run, result=lambda i: None)


def _absent_prepare(ops, backend, context):
    raise Unavailable("no such library on this machine")


def _crash_prepare(ops, backend, context):
    raise KeyError("missing key")


FAKE_OURS = _writer("ours", "bsrmm")
ALL = [
    FAKE_OURS,
    cpu.SCIPY_BSR,
    cpu.NUMPY_DENSE,
    _writer("sparse", "lazy", _half),
    _writer("sparse", "off", _off),
    Implementation("boom", "sparse", "boom", _boom_prepare),
    Implementation("absent", "sparse", "absent", _absent_prepare),
    Implementation("crash", "sparse", "crash", _crash_prepare),
]
