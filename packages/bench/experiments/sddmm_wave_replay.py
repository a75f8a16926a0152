"""How evenly the Hopper SDDMM's persistent grid shares sddmm_sm90_probe.py's patterns (issue 25,
docs/perf-log.md entry 54). CPU only: it draws the probe's patterns again (numpy seed 0, the same
draws in the same order, the probe's check() included) and prints, per case, the stored blocks
and the busiest CTA's blocks over the mean, for the first kernel's units (entry 47: 4 blocks at
64 x 64, else 2, all whole) and for the current ones (a tile 256 / 512 wide for every full wave,
then the last wave's blocks spread: split_units in packages/core-cuda/src/cuda/sddmm/sm90_variants.cu).
Every unit is T deep, so that ratio bounds the time against a perfectly shared grid.

    python3 packages/bench/experiments/sddmm_wave_replay.py [--vs-sm80] [--all-shapes] [--sms 132]

Pass the probe's flags (its --dtype does not change the draws; --vs-sm80 checks two outputs a
case, which moves them).
"""
import argparse

import numpy as np

M = K = 8192


def whole_units(nnzb, blocks):
    return [(s, min(s + blocks, nnzb)) for s in range(0, nnzb, blocks)]


def split_units(nnzb, blocks, grid):
    """sm90_variants.cu's split_units: whole units for the full waves, the last wave spread."""
    whole = -(-nnzb // blocks)
    waves = -(-whole // grid)
    if waves < 2:
        return whole_units(nnzb, blocks)
    head = (waves - 1) * grid
    per_unit = -(-(nnzb - head * blocks) // grid)
    return whole_units(head * blocks, blocks) + [
        (s, min(s + per_unit, nnzb)) for s in range(head * blocks, nnzb, per_unit)]


def imbalance(units, nnzb, grid):
    """The busiest CTA's blocks over the mean, units taken round robin."""
    per_cta = np.zeros(grid)
    for i, (start, end) in enumerate(units):
        per_cta[i % grid] += end - start
    return per_cta.max() / (nnzb / grid)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vs-sm80", action="store_true")
    parser.add_argument("--all-shapes", action="store_true")
    parser.add_argument("--sms", type=int, default=132, help="the grid: SMs of the card (H100 SXM 132)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    shapes = [(128, 128), (64, 64)] + ([(128, 64), (64, 128)] if args.all_shapes else [])
    print(f"grid {args.sms}: busiest CTA's blocks / mean, first kernel's units -> current units")
    for bh, bw in shapes:
        first = 4 if (bh, bw) == (64, 64) else 2
        current = (256 if bh == 128 else 512) // bw  # sm90_config.cuh: kTileW / BlockW
        for density in (0.125, 0.25, 0.5):
            for layout in ("xr_yr", "xr_yc", "xc_yr", "xc_yc"):
                nnzb = int((rng.random((M // bh, K // bw)) < density).sum())
                for _ in range(2 if args.vs_sm80 else 1):  # the probe's check(), one per kernel run
                    rng.choice(nnzb, size=min(16, nnzb), replace=False)
                before = imbalance(whole_units(nnzb, first), nnzb, args.sms)
                after = imbalance(split_units(nnzb, current, args.sms), nnzb, args.sms)
                print(f"b{bh}x{bw}  d {density:<5}  {layout}  {nnzb:6d} blocks  {before:5.2f} -> {after:5.2f}")


if __name__ == "__main__":
    main()
