"""Odd N and the layouts numpy and torch pass, on the GPU (perf-log 99): the untuned pick and its
time per call through bsrmm.matmul (Python, CUDA events around back-to-back calls, so a call's
host time counts where it exceeds the kernel's), against every eligible variant forced.

    python3 packages/bench/experiments/odd_n_layouts.py --part ld       # numpy's ld = N; torch's layout N = 8..256
    python3 packages/bench/experiments/odd_n_layouts.py --part survey   # N = 9..600 with an aligned ld, every variant
    python3 packages/bench/experiments/odd_n_layouts.py --part rounded  # odd N against N rounded down to 8
    python3 packages/bench/experiments/odd_n_layouts.py --part families # N = 9..1023, r = 1..7: each family's best

A: 8192^2, blocks of 64 at d 0.25 (bf16, f32) or of 128 at d 0.125 (f16); "numpy": B (K, N)
row-major with ld = N; "numpy-ld8": ld rounded up to 8; "torch": B = x^T, C = y^T (column-major).
Products checked against float64 where an error is printed (C filled with NaN first)."""
from __future__ import annotations

import argparse
import statistics

import torch

import bsrmm

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "f64": torch.float64}
KERNEL_PREFIXES = ("sm90", "sm80", "cuda", "narrow", "dense", "generic")


def timed_us(fn, reps: int = 10) -> float:
    fn()
    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(7):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / reps * 1000)
    return statistics.median(samples)


def matrix(size: int, block: int, density: float, dtype: torch.dtype):
    blocks = size // block
    mask = (torch.rand(blocks, blocks, device="cuda") < density).repeat_interleave(block, 0).repeat_interleave(block, 1)
    dense = torch.randn(size, size, device="cuda", dtype=dtype) * mask
    return bsrmm.BsrMatrix.from_dense(dense, (block, block), device="cuda"), dense


def operands(lay: str, n: int, size: int, dtype: torch.dtype):
    if lay == "torch":
        return (torch.randn(n, size, device="cuda", dtype=dtype).T, torch.empty(n, size, device="cuda", dtype=dtype).T)
    ld = n if lay == "numpy" else (n + 7) // 8 * 8
    return (torch.randn(size, ld, device="cuda", dtype=dtype)[:, :n], torch.empty(size, ld, device="cuda", dtype=dtype)[:, :n])


def relative_error(a_dense: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> float:
    ref = a_dense.double() @ b.double()
    return ((c.double() - ref).abs().max() / ref.abs().max()).item()


def untuned(a, b, c, dense=None):
    """The untuned pick's name, its time (us) and its error against float64 (C poisoned first;
    nan without ``dense``)."""
    context = bsrmm.Context("cuda", tuning="off")
    c.fill_(float("nan"))
    bsrmm.matmul(a, b, out=c, context=context)
    err = relative_error(dense, b, c) if dense is not None else float("nan")
    return context.last_variant, timed_us(lambda: bsrmm.matmul(a, b, out=c, context=context)), err


def forced_times(a, b, c, prefixes=KERNEL_PREFIXES):
    """(time in us, name) of every variant named with one of ``prefixes`` that takes the call,
    fastest first."""
    times = []
    for name in bsrmm.variants("matmul"):
        if not name.startswith(prefixes):
            continue
        try:
            ctx = bsrmm.Context("cuda", tuning="off", variant=name)
            bsrmm.matmul(a, b, out=c, context=ctx)
        except bsrmm.Error:
            continue
        times.append((timed_us(lambda: bsrmm.matmul(a, b, out=c, context=ctx), reps=5), name))
    return sorted(times)


def survey(a, b, c, tag: str, dense=None, forced: bool = True, top: int = 6) -> float:
    pick, t_pick, err = untuned(a, b, c, dense)
    line = f"{tag}: untuned {pick} {t_pick:.1f} us (rel err {err:.1e})"
    if forced:
        times = forced_times(a, b, c)
        line += "\n    forced: " + ", ".join(f"{name} {t:.1f}" for t, name in times[:top])
        if times and times[0][0] < 0.95 * t_pick:
            line += f"\n    ** untuned {t_pick / times[0][0]:.2f}x the best forced"
    print(line, flush=True)
    return t_pick


def part_ld() -> None:
    print("== row-major B of odd N (ld = N) against ld rounded up to 8, 8192^2 blocks of 64, d 0.25", flush=True)
    for name in ("bf16", "f32", "f16"):
        a, dense = matrix(8192, 64, 0.25, DTYPES[name])
        for n in (33, 100, 257, 1000, 2049):
            b, c = operands("numpy", n, 8192, DTYPES[name])
            t_odd = survey(a, b, c, f"{name} N={n} ld={n}", dense if n in (100, 2049) else None,
                           forced=n in (100, 2049) and name == "bf16")
            b, c = operands("numpy-ld8", n, 8192, DTYPES[name])
            t_aligned = survey(a, b, c, f"{name} N={n} ld={(n + 7) // 8 * 8}", None, forced=False)
            print(f"    odd / aligned {t_odd / t_aligned:.2f}x", flush=True)
    print("== torch's layout: B = x^T, C = y^T column-major", flush=True)
    for name, block, density in (("bf16", 64, 0.25), ("f16", 128, 0.125)):
        a, dense = matrix(8192, block, density, DTYPES[name])
        for n in (8, 16, 32, 64, 128, 192, 248, 256):
            b, c = operands("torch", n, 8192, DTYPES[name])
            t_col = survey(a, b, c, f"{name} b{block} d{density} N={n} col-major", dense if n in (8, 128) else None,
                           forced=n in (16, 64, 192))
            b, c = operands("numpy", n, 8192, DTYPES[name])
            t_row = survey(a, b, c, f"{name} b{block} d{density} N={n} row-major", None, forced=False)
            print(f"    col / row {t_col / t_row:.2f}x", flush=True)


def part_survey() -> None:
    print("== odd N, aligned ld, every eligible variant", flush=True)
    for name in ("bf16", "f32"):
        a, dense = matrix(8192, 64, 0.25, DTYPES[name])
        for n in (9, 33, 100, 257, 600):
            for lay in ("numpy-ld8", "torch"):
                b, c = operands(lay, n, 8192, DTYPES[name])
                survey(a, b, c, f"{name} {lay} N={n}", dense if n == 100 and lay != "torch" else None, top=8)


def part_rounded() -> None:
    print("== odd N: untuned time against N rounded down to 8 (same layout)", flush=True)
    for name, block, density in (("bf16", 64, 0.25), ("f16", 128, 0.125)):
        a, dense = matrix(8192, block, density, DTYPES[name])
        for n in (9, 17, 33, 100, 257, 600, 1000, 2049):
            for lay in ("numpy", "numpy-ld8", "torch"):
                rows = []
                for m in (n, n // 8 * 8):
                    b, c = operands(lay, m, 8192, DTYPES[name])
                    context = bsrmm.Context("cuda", tuning="off")
                    c.fill_(float("nan"))
                    bsrmm.matmul(a, b, out=c, context=context)
                    err = relative_error(dense, b, c) if m == n and n in (33, 257) else float("nan")
                    rows.append((m, context.last_variant, timed_us(lambda: bsrmm.matmul(a, b, out=c, context=context)), err))
                (n1, v1, t1, e1), (n0, v0, t0, _) = rows
                print(f"{name} b{block} {lay:9s} N={n1}: {v1} {t1:.1f} us (err {e1:.1e}) | N={n0}: {v0} {t0:.1f} us | "
                      f"{t1 / t0:.2f}x", flush=True)
        for n in (33, 257):
            for lay in ("torch", "numpy"):
                b, c = operands(lay, n, 8192, DTYPES[name])
                survey(a, b, c, f"{name} {lay} N={n}", None, top=5)


FAMILIES = (("staging", ("cuda_aligned_staging",)), ("tail", ("sm90_columns_of_8_then_tail",)),
            ("sm80", ("sm80_",)), ("narrow", ("narrow_",)), ("dense", ("dense_",)))


def part_families(sizes: tuple = (9, 23, 33, 63, 100, 129, 199, 257, 263, 390, 519, 775, 1023)) -> None:
    """Which family should take odd N below the column tail's N >= 1024 (perf-log 103): the
    untuned pick against each family's fastest forced variant, torch's layout and row-major B
    with an aligned ld, N = 8q + r over r = 1..7."""
    print("== odd N by family: untuned pick, then each family's fastest forced variant (us)", flush=True)
    for name, block, density in (("bf16", 64, 0.25), ("f16", 128, 0.125)):
        a, dense = matrix(8192, block, density, DTYPES[name])
        for n in sizes:
            for lay in ("torch", "numpy-ld8"):
                b, c = operands(lay, n, 8192, DTYPES[name])
                pick, t_pick, err = untuned(a, b, c, dense)
                best = {}
                for t, variant in forced_times(a, b, c, tuple(p for _, ps in FAMILIES for p in ps)):
                    family = next(f for f, prefixes in FAMILIES if variant.startswith(prefixes))
                    best.setdefault(family, (t, variant))  # fastest first
                fastest = min(best.values())[0] if best else t_pick
                cells = "  ".join(f"{f} {best[f][0]:.1f}" for f, _ in FAMILIES if f in best)
                print(f"{name} b{block} {lay:9s} N={n:4d} r={n % 8}: {pick} {t_pick:.1f} (err {err:.1e}) | {cells} | "
                      f"untuned/best {t_pick / fastest:.2f}x", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("ld", "survey", "rounded", "families"), default="rounded")
    parser.add_argument("--n", help="families: these N (comma-separated) instead of the default list")
    args = parser.parse_args()
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), bsrmm.__version__, flush=True)
    if args.part == "families" and args.n:
        part_families(tuple(int(n) for n in args.n.split(",")))
        return
    {"ld": part_ld, "survey": part_survey, "rounded": part_rounded, "families": part_families}[args.part]()


if __name__ == "__main__":
    main()
