"""Decode cells on `splitrows` with the warps a slice forced (knob BSRMM_SPLIT, a measuring build only)
beside `warprows` (or, with --rule, on a build without the knob: warprows, the rule's split and the untuned pick): kernel time per call (torch profiler), A rotated over 8 copies past L2, min of
3 rounds; every output compared with warprows' (the same sums, other order: max relative diff)."""
import os, sys, pathlib
import numpy as np, torch
from torch.profiler import ProfilerActivity, profile
import bsrmm
sys.path.insert(0, str(pathlib.Path("packages/bench").resolve()))
from bsrmm_bench import patterns

def kus(calls, runs=64):
    for c in calls: c()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(runs): calls[i % len(calls)]()
        torch.cuda.synchronize()
    return sum(e.device_time_total for e in prof.key_averages() if e.device_time_total > 0) / runs

def cell(tdt, rows, cols, bh, spec, n):
    pat = patterns.generate(spec, rows // bh, cols // bh, 1)
    ip = torch.from_numpy(pat.indptr.astype(np.int32)).cuda(); ix = torch.from_numpy(pat.indices.astype(np.int32)).cuda()
    g = torch.Generator(device="cuda").manual_seed(3)
    mats = [bsrmm.BsrMatrix.from_arrays(ip, ix, (torch.rand((pat.nnzb, bh, bh), device="cuda", generator=g) * 2 - 1).to(tdt), (rows, cols), device="cuda") for _ in range(8)]
    b = torch.randn(cols, n, device="cuda", dtype=tdt)
    c = torch.empty((rows, n), device="cuda", dtype=tdt)
    label = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64"}[tdt]
    res = {}
    ref = None
    runs = [("warprows", None), ("splitrows", "1"), ("splitrows", "2"), ("splitrows", "4"), ("splitrows", "8"), ("splitrows", None)]
    if RULE_ONLY: runs = [("warprows", None), ("splitrows", None), ("untuned", None)]
    for name, split in runs:
        if split: os.environ["BSRMM_SPLIT"] = split
        else: os.environ.pop("BSRMM_SPLIT", None)
        ctx = (bsrmm.Context("cuda", tuning="off", f32_mode="exact") if name == "untuned" else
               bsrmm.Context("cuda", tuning="off", variant=f"narrow_{label}_simt_{name}", f32_mode="exact"))
        calls = [lambda m=m: bsrmm.matmul(m, b, out=c, context=ctx) for m in mats]
        t = min(kus(calls) for _ in range(3))
        c.fill_(float("nan")); calls[0](); torch.cuda.synchronize()
        out = c.double()
        if ref is None: ref = out.clone()
        diff = float(((out - ref).abs().max() / ref.abs().max()).item())
        key = f"untuned={ctx.last_variant.replace('narrow_', '').replace('_simt', '')}" if name == "untuned" else \
            f"{name}{'' if split is None and name == 'warprows' else '/' + (split or 'rule')}"
        res[key] = (t, diff)
    os.environ.pop("BSRMM_SPLIT", None)
    print(f"{label} {rows}x{cols} b{bh} {spec} N={n}: " + "  ".join(f"{k} {t:6.2f} us ({d:.0e})" for k, (t, d) in res.items()), flush=True)

U = lambda d: {"kind": "uniform", "density": d}
PL = lambda d, a=1.0: {"kind": "power_law", "density": d, "alpha": a}
which = sys.argv[1] if len(sys.argv) > 1 else "decode"
RULE_ONLY = "--rule" in sys.argv  # a build without the knob: warprows, the rule's split, the untuned pick
if which == "decode":
    cell(torch.float16, 8192, 8192, 64, U(0.125), 1)
    cell(torch.bfloat16, 8192, 8192, 64, U(0.125), 1)
    cell(torch.float16, 8192, 8192, 128, U(0.125), 1)
    cell(torch.float16, 8192, 8192, 32, U(0.125), 1)
    cell(torch.float16, 14336, 4096, 64, U(0.25), 1)
    cell(torch.float16, 4096, 14336, 64, U(0.25), 1)
    cell(torch.float16, 8192, 8192, 64, U(0.125), 2)
    cell(torch.float16, 8192, 8192, 64, U(0.125), 4)
else:
    cell(torch.float16, 4096, 14336, 64, U(0.125), 1)
    cell(torch.float16, 4096, 14336, 64, U(0.5), 1)
    cell(torch.float16, 4096, 14336, 64, U(0.25), 2)
    cell(torch.float16, 4096, 14336, 64, U(0.25), 4)
    cell(torch.float16, 4096, 14336, 128, U(0.25), 1)
    cell(torch.float16, 4096, 14336, 32, U(0.25), 1)
    cell(torch.float16, 8192, 8192, 32, U(0.25), 1)
    cell(torch.float16, 8192, 8192, 16, U(0.125), 1)
    cell(torch.float16, 2048, 16384, 64, U(0.125), 1)
    cell(torch.float32, 4096, 14336, 64, U(0.25), 1)
    cell(torch.float64, 4096, 14336, 32, U(0.25), 1)
    cell(torch.float32, 16384, 16384, 32, U(1 / 64), 1)
    cell(torch.float32, 16384, 16384, 32, PL(0.03125), 8)
    cell(torch.float32, 16384, 16384, 64, PL(0.03125), 16)
    cell(torch.float32, 16384, 16384, 32, PL(0.03125), 32)
    cell(torch.float16, 14336, 4096, 64, PL(0.125, 1.5), 1)
    cell(torch.float16, 4096, 14336, 64, PL(0.125, 1.5), 1)
