"""A/B of two changes to the tiny-block kernels, each against the loop it replaces, in one process:
- lanes along N (`nlanes`): a batch of (block, k) steps' A values and B runs loaded before any is
  used, against one block at a time (knob BSRMM_NLANES_OLD=1, this build only);
- lanes along M (`mlanes`): a block's row split over lanes (contiguous loads of the block), against
  one lane a row (knob BSRMM_MLANES_SPLIT=1, this build only).
Kernel time per call (torch profiler), A rotated over copies past L2, 3 interleaved rounds, min;
outputs compared with each other (bit-equal expected for nlanes: same FMA order; mlanes sums a
row in another order: max relative difference) and checked finite."""
import os, sys, pathlib
import numpy as np, torch
from torch.profiler import ProfilerActivity, profile
import bsrmm
sys.path.insert(0, str(pathlib.Path("packages/bench").resolve()))
from bsrmm_bench import patterns

TD = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}

def kus(calls, runs=48):
    for c in calls: c()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(runs): calls[i % len(calls)]()
        torch.cuda.synchronize()
    ev = [e for e in prof.key_averages() if e.device_time_total > 0]
    return sum(e.device_time_total for e in ev) / runs

def knob(name, value):
    if value is None: os.environ.pop(name, None)
    else: os.environ[name] = value

def cell(family, dt, rows, cols, bh, bw, spec, n, f32_mode="exact"):
    tdt = TD[dt]
    variant = f"narrow_{dt}_simt_{family}"
    name, old = ("BSRMM_NLANES_OLD", "1") if family == "nlanes" else ("BSRMM_MLANES_SPLIT", "1")
    if family == "mlanes" and os.environ.get("AB_MLANES_KNOB"): name, old = os.environ["AB_MLANES_KNOB"], "1"
    pat = patterns.generate(spec, rows // bh, cols // bw, 1)
    a_bytes = pat.nnzb * bh * bw * tdt.itemsize
    copies = max(1, min(8, int(4 * 60e6 // max(a_bytes, 1))))
    gen = torch.Generator(device="cuda").manual_seed(2)
    indptr = torch.from_numpy(pat.indptr.astype(np.int32)).cuda(); indices = torch.from_numpy(pat.indices.astype(np.int32)).cuda()
    mats = []
    for k in range(copies):
        v = (torch.rand((pat.nnzb, bh, bw), device="cuda", dtype=torch.float32, generator=gen) * 2 - 1).to(tdt)
        mats.append(bsrmm.BsrMatrix.from_arrays(indptr, indices, v, (rows, cols), device="cuda"))
    b = torch.randn(cols, n, device="cuda", dtype=tdt)
    c = torch.full((rows, n), float("nan"), device="cuda", dtype=tdt)
    ctx = bsrmm.Context("cuda", tuning="off", variant=variant, f32_mode=f32_mode)
    calls = [lambda m=m: bsrmm.matmul(m, b, out=c, context=ctx) for m in mats]
    times = {True: [], False: []}
    for r in range(3):
        for is_old in (True, False):
            knob(name, None if is_old else old); times[is_old].append(kus(calls)) if name == "BSRMM_MLANES_DEPTH" else None
            if name != "BSRMM_MLANES_DEPTH": knob(name, old if is_old else None); times[is_old].append(kus(calls))
    outs = {}
    for is_old in (True, False):
        knob(name, (None if is_old else old) if name == "BSRMM_MLANES_DEPTH" else (old if is_old else None)); c.fill_(float("nan")); calls[0](); torch.cuda.synchronize(); outs[is_old] = c.clone()
    knob(name, None)
    finite = bool(torch.isfinite(outs[False]).all())
    o, nw = outs[True].double(), outs[False].double()
    diff = float(((o - nw).abs().max() / o.abs().max().clamp_min(1e-30)).item())
    t_old, t_new = min(times[True]), min(times[False])
    gbs = (a_bytes + pat.nnzb * 4) / (t_new * 1e3)
    print(f"{family} {dt} {rows}x{cols} b{bh}x{bw} {spec.get('kind')} N={n}: {ctx.last_variant:<24} old {t_old:8.2f} us  new {t_new:8.2f} us  ratio {t_new / t_old:.3f}  A {gbs:6.0f} GB/s  finite {finite} maxdiff {diff:.1e}  {[round(t, 1) for t in times[True]]} / {[round(t, 1) for t in times[False]]}", flush=True)
    del mats, b, c, outs; torch.cuda.empty_cache()

S27 = {"kind": "stencil", "dims": 3, "points": 27}
S7 = {"kind": "stencil", "dims": 3, "points": 7}
S9 = {"kind": "stencil", "dims": 2, "points": 9}
BAND = {"kind": "banded", "lower": 1, "upper": 1}
U = lambda d: {"kind": "uniform", "density": d}
PL = lambda d: {"kind": "power_law", "density": d, "alpha": 1.0}
which = sys.argv[1] if len(sys.argv) > 1 else "both"
if which in ("both", "mlanes"):
    cell("mlanes", "f64", 1048576, 1048576, 4, 4, S27, 1)
    cell("mlanes", "f64", 1048576, 1048576, 4, 4, S27, 2)
    cell("mlanes", "f64", 262144, 262144, 4, 4, S27, 4)
    cell("mlanes", "f64", 1048576, 1048576, 4, 4, BAND, 1)
    cell("mlanes", "f32", 524288, 524288, 8, 8, S27, 1)
    cell("mlanes", "f64", 524288, 524288, 8, 8, U(0.0004119873046875), 1)
    cell("mlanes", "f64", 262144, 262144, 16, 16, S27, 4)
    cell("mlanes", "f64", 196608, 196608, 12, 12, S7, 1)
    cell("mlanes", "bf16", 262144, 262144, 16, 16, S27, 1)
    cell("mlanes", "f16", 262144, 262144, 8, 8, S27, 1)
    cell("mlanes", "f64", 524288, 524288, 2, 2, S27, 1)
if which in ("both", "nlanes"):
    cell("nlanes", "bf16", 16384, 16384, 1, 1, S9, 1024)
    cell("nlanes", "f32", 4095, 4095, 3, 3, S27, 128, "tf32")
    cell("nlanes", "f32", 16383, 16383, 3, 3, U(0.0007324665812122322), 1024)
    cell("nlanes", "f32", 4092, 4092, 6, 6, BAND, 1024)
    cell("nlanes", "f64", 16384, 16384, 4, 4, S7, 256)
    cell("nlanes", "f64", 1048576, 1048576, 4, 4, S27, 64)
    cell("nlanes", "bf16", 8192, 8192, 8, 8, S7, 256)
    cell("nlanes", "f16", 65536, 65536, 2, 2, S9, 256)
    cell("nlanes", "f32", 131072, 131072, 4, 4, BAND, 32)
    cell("nlanes", "f32", 32768, 32768, 1, 1, PL(0.001), 64)
    cell("nlanes", "bf16", 32768, 32768, 8, 8, U(0.002), 512)
