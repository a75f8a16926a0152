"""(Default: arms main / 5 / 6 CTAs, on a build whose default is main's caps. --rule: main's caps against the build's new default.)
Lanes along M at one column with more CTAs an SM: the register cap of `row_lanes_kernel` at
Cols = 1 from 4 CTAs an SM (64 registers, main) to 5 (48) and 6 (40), knob BSRMM_MLANES_MB on
this build only. Kernel time per call (torch profiler), A rotated over copies past L2, 3
interleaved rounds, min; outputs compared bit for bit with main's cap (the same FMA order)."""
import os, sys, pathlib
import numpy as np, torch
from torch.profiler import ProfilerActivity, profile
import bsrmm
sys.path.insert(0, str(pathlib.Path("packages/bench").resolve()))
from bsrmm_bench import patterns

TD = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}

def kus(calls, runs=40):
    for c in calls: c()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(runs): calls[i % len(calls)]()
        torch.cuda.synchronize()
    return sum(e.device_time_total for e in prof.key_averages() if e.device_time_total > 0) / runs

def cell(dt, rows, bh, spec):
    tdt = TD[dt]
    pat = patterns.generate(spec, rows // bh, rows // bh, 1)
    a_bytes = pat.nnzb * bh * bh * tdt.itemsize
    copies = max(1, min(8, int(4 * 60e6 // a_bytes)))
    ip = torch.from_numpy(pat.indptr.astype(np.int32)).cuda(); ix = torch.from_numpy(pat.indices.astype(np.int32)).cuda()
    g = torch.Generator(device="cuda").manual_seed(5)
    mats = [bsrmm.BsrMatrix.from_arrays(ip, ix, (torch.rand((pat.nnzb, bh, bh), device="cuda", generator=g) * 2 - 1).to(tdt), (rows, rows), device="cuda") for _ in range(copies)]
    b = torch.randn(rows, 1, device="cuda", dtype=tdt)
    c = torch.empty((rows, 1), device="cuda", dtype=tdt)
    ctx = bsrmm.Context("cuda", tuning="off", variant=f"narrow_{dt}_simt_mlanes")
    calls = [lambda m=m: bsrmm.matmul(m, b, out=c, context=ctx) for m in mats]
    arms = ARMS
    times = {a: [] for a in arms}; outs = {}
    for r in range(3):
        for a in arms:
            if a: os.environ["BSRMM_MLANES_MB"] = a
            else: os.environ.pop("BSRMM_MLANES_MB", None)
            times[a].append(kus(calls))
    for a in arms:
        if a: os.environ["BSRMM_MLANES_MB"] = a
        else: os.environ.pop("BSRMM_MLANES_MB", None)
        c.fill_(float("nan")); calls[0](); torch.cuda.synchronize(); outs[a] = c.clone()
    os.environ.pop("BSRMM_MLANES_MB", None)
    base = min(times[None])
    base = min(times[arms[0]])
    line = f"{dt} {rows} b{bh} {spec['kind']}: {arms[0] or 'build default'} {base:8.2f} us ({(a_bytes + pat.nnzb * 4) / base / 1e3:5.0f} GB/s)"
    for a in arms[1:]:
        t = min(times[a]); line += f"  {a or 'build default'} {t:8.2f} us ({t / base:.3f}x, bit-equal {torch.equal(outs[a], outs[arms[0]])})"
    print(line, flush=True)
    del mats; torch.cuda.empty_cache()

ARMS = ["4", None] if "--rule" in sys.argv else [None, "5", "6"]  # --rule: main's caps ("4") against the new rule (no knob)
S27 = {"kind": "stencil", "dims": 3, "points": 27}
S7 = {"kind": "stencil", "dims": 3, "points": 7}
BAND = {"kind": "banded", "lower": 1, "upper": 1}
cell("f64", 1048576, 4, S27)
cell("f32", 1048576, 4, S27)
cell("f64", 1048576, 4, BAND)
cell("f64", 524288, 2, S27)
cell("f64", 524288, 8, {"kind": "uniform", "density": 0.0004119873046875})
cell("f32", 524288, 8, S27)
cell("f16", 262144, 8, S27)
cell("bf16", 1048576, 4, S7)
cell("f64", 786432, 3, S27)
cell("f32", 1048576, 2, S7)
