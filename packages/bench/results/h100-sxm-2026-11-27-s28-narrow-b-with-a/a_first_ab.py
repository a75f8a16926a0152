"""A/B of B's runs loaded beside A's chunks at N = 1 (narrow kernel, Cols = 1, column runs):
BSRMM_NARROW_A_AFTER_COLUMN=1 (a measurement knob in this build only) keeps main's loop, where each step
reads B inside multiply_step. Kernel time per call (profiler), A rotated over 8 copies past L2,
rounds interleaved; the two outputs compared bit for bit (same FMA order)."""
import os, sys, pathlib
import numpy as np, torch
from torch.profiler import ProfilerActivity, profile
import bsrmm
sys.path.insert(0, str(pathlib.Path("packages/bench").resolve()))
from bsrmm_bench import patterns

COPIES = 8
TD = {"f16": (torch.float16, np.float16), "bf16": (torch.bfloat16, None), "f32": (torch.float32, np.float32), "f64": (torch.float64, np.float64)}

def kus(calls, runs=64):
    for c in calls: c()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(runs): calls[i % len(calls)]()
        torch.cuda.synchronize()
    ev = [e for e in prof.key_averages() if e.device_time_total > 0]
    return sum(e.device_time_total for e in ev) / runs

def late(on):
    if on: os.environ["BSRMM_NARROW_A_AFTER_COLUMN"] = "1"
    else: os.environ.pop("BSRMM_NARROW_A_AFTER_COLUMN", None)

def cell(dt, rows, cols, bh, bw, spec, n, variant=None):
    tdt, ndt = TD[dt]
    pat = patterns.generate(spec, rows // bh, cols // bw, 1)
    rng = np.random.default_rng(2)
    mats = []
    for k in range(COPIES):
        v = torch.from_numpy(rng.uniform(-1, 1, (pat.nnzb, bh, bw))).to(tdt)
        mats.append(bsrmm.BsrMatrix.from_arrays(pat.indptr.astype(np.int32), pat.indices.astype(np.int32), v, (rows, cols), device="cuda"))
    b = torch.randn(cols, n, device="cuda", dtype=tdt)
    c = torch.full((rows, n), float("nan"), device="cuda", dtype=tdt)
    ctx = bsrmm.Context("cuda", tuning="off", variant=variant) if variant else bsrmm.Context("cuda", tuning="off")
    calls = [lambda m=m: bsrmm.matmul(m, b, out=c, context=ctx) for m in mats]
    times = {True: [], False: []}
    for r in range(3):
        for on in (True, False):
            late(on); times[on].append(kus(calls))
    outs = {}
    for on in (True, False):
        late(on); c.fill_(float("nan")); calls[0](); torch.cuda.synchronize(); outs[on] = c.clone()
    late(False)
    same = torch.equal(outs[True], outs[False]) and bool(torch.isfinite(outs[False]).all())
    t_old, t_new = min(times[True]), min(times[False])
    print(f"{dt} {rows}x{cols} b{bh}x{bw} {spec.get('kind')} N={n}: {ctx.last_variant:<30} A after column {t_old:7.2f} us  A first {t_new:7.2f} us  ratio {t_new / t_old:.3f}  bit-equal {same}  {[round(t, 2) for t in times[True]]} / {[round(t, 2) for t in times[False]]}", flush=True)

U = lambda d: {"kind": "uniform", "density": d}
cell("f16", 8192, 8192, 64, 64, U(0.125), 1)
cell("f16", 8192, 8192, 64, 64, U(0.125), 2)
cell("f16", 8192, 8192, 64, 64, U(0.125), 4)
cell("bf16", 8192, 8192, 64, 64, U(0.125), 1)
cell("f16", 8192, 8192, 128, 128, U(0.125), 1)
cell("f16", 8192, 8192, 32, 32, U(0.125), 1)
cell("f32", 16384, 16384, 32, 32, U(1 / 64), 1)
cell("f64", 8192, 8192, 16, 16, U(1 / 64), 1)
cell("f64", 8192, 8192, 8, 8, U(1 / 64), 1)
cell("f16", 8190, 8190, 3, 3, U(0.01), 1)
cell("f32", 4096, 14336, 64, 64, U(0.25), 1)
cell("f16", 14336, 4096, 64, 64, {"kind": "power_law", "density": 0.125, "alpha": 1.5}, 1)
cell("f16", 8192, 8192, 64, 64, U(0.125), 1, "narrow_f16_simt_splitrows")
cell("f32", 16384, 16384, 32, 32, U(1 / 64), 8)
