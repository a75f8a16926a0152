"""The tiny-block tensor-core kernels (sm80_{f16,bf16}_tinyblock_mma16816) forced against
float64: tiny block shapes, N from 1 past a warp's 64 tokens, padded B rows, both layouts of C,
beta, bias; output NaN-poisoned first; refused where B is column-major or misaligned. Then
forced-variant timings against the narrow kernels on the coverage suite's worst tiny-block
shapes. --quick: a few cases (for compute-sanitizer). Needs a CUDA build of bsrmm and torch:

    python3 packages/bench/experiments/tiny_block_probe.py [--quick]
"""
import sys, numpy as np, torch, bsrmm
quick = "--quick" in sys.argv
DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}
TOL = {"f32": 1e-5, "f16": 4e-3, "bf16": 3e-2, "f64": 1e-12}
TINY = "sm80_{}_tinyblock_mma16816"
rng = np.random.default_rng(5)

def make(bh, bw, brows, bcols, per_row, dtype):
    mask = rng.random((brows, bcols)) < per_row / bcols
    if brows > 2:
        mask[brows // 2] = False  # an empty block row
    ptr = np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(np.int32)
    col = np.nonzero(mask)[1].astype(np.int32)
    vals64 = rng.uniform(-1, 1, (len(col), bh, bw))
    vals = torch.from_numpy(vals64).to(DT[dtype])
    A = bsrmm.BsrMatrix.from_arrays(ptr, col, vals, (brows * bh, bcols * bw), device="cuda")
    dense = np.zeros((brows * bh, bcols * bw))
    v = vals.double().numpy()
    for r in range(brows):
        for j in range(ptr[r], ptr[r + 1]):
            dense[r * bh:(r + 1) * bh, col[j] * bw:(col[j] + 1) * bw] = v[j]
    return A, dense

def check(dtype, bh, bw, n, variant, case):
    brows, bcols = 9, 13
    A, dense = make(bh, bw, brows, bcols, 5, dtype)
    M, K = dense.shape
    x = torch.from_numpy(rng.uniform(-1, 1, (K, n))).to(DT[dtype])
    if case % 4 == 1:
        b = x.cuda().t().contiguous().t()                      # column-major B
    elif case % 4 == 2:
        b = torch.zeros(K, (n + 7) // 8 * 8 + 8, dtype=DT[dtype], device="cuda")[:, :n]; b.copy_(x)  # padded, aligned rows
    elif case % 4 == 3:
        flat = torch.zeros(K * n + 1, dtype=DT[dtype], device="cuda")
        b = flat[1:].view(K, n); b.copy_(x)                    # offset by one element
    else:
        b = x.cuda()
    beta = 0.5 if case % 3 == 1 else 0.0
    c0 = torch.from_numpy(rng.uniform(-1, 1, (M, n))).to(DT[dtype])
    out = c0.cuda().clone() if beta else torch.full((M, n), float("nan"), dtype=DT[dtype], device="cuda")
    if case % 5 == 2:
        out = out.t().contiguous().t()                         # column-major C
    bias = torch.from_numpy(rng.uniform(-1, 1, M)).to(DT[dtype]) if case % 2 == 0 else None
    ref = dense @ x.double().numpy() + beta * c0.double().numpy()
    if bias is not None:
        ref += bias.double().numpy()[:, None]
    ctx = bsrmm.Context("cuda", variant=variant, tuning="off", f32_mode="exact")
    # column-major or misaligned B, or contiguous rows of N % 8 elements: not 16-byte aligned
    refused = "tinyblock" in variant and (case % 4 in (1, 3) or (case % 4 == 0 and n % 8 != 0))
    try:
        bsrmm.matmul(A, b, out=out, beta=beta, bias=None if bias is None else bias.cuda(), context=ctx)
    except bsrmm.Error as error:
        return refused, 0.0, "refused: " + str(error).splitlines()[0][:100]
    if refused:
        return False, 0.0, "ran where it should refuse"
    got = out.double().cpu().numpy()
    err = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300)
    ok = np.isfinite(got).all() and err <= TOL[dtype] and ctx.last_variant == variant
    return ok, err, ctx.last_variant

shapes = [(1, 1), (2, 2), (3, 3), (4, 4), (5, 3), (6, 6), (8, 8), (3, 8), (2, 16), (7, 5), (12, 12), (16, 8), (8, 40), (1, 64)]
ns = [1, 7, 16, 17, 32, 40, 64, 130, 256, 300, 1030]
if quick:
    shapes, ns = [(1, 1), (3, 3), (8, 8), (12, 12), (2, 16)], [7, 17, 300]
fails = total = 0
case = 0
for dtype in ("f16", "bf16"):
    for variant in (TINY.format(dtype),):
        worst = 0.0
        for bh, bw in shapes:
            for n in ns:
                ok, err, ran = check(dtype, bh, bw, n, variant, case)
                case += 1; total += 1; worst = max(worst, err)
                if not ok:
                    fails += 1
                    print(f"FAIL {variant} {bh}x{bw} N={n} case {case}: err {err:.2e} ran {ran}")
        print(f"{variant}: worst relative error {worst:.2e}")
print(f"checked {total} products, {fails} failed")
if quick:
    sys.exit(1 if fails else 0)

# ---- timings: forced variants on the coverage suite's worst tiny-block shapes ----
def time_ms(A, b, out, ctx, reps=50):
    bsrmm.matmul(A, b, out=out, context=ctx)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        bsrmm.matmul(A, b, out=out, context=ctx)
    end.record(); torch.cuda.synchronize()
    return start.elapsed_time(end) / reps

def banded(brows, offsets):
    rows, cols = [], []
    for r in range(brows):
        c = sorted({r + o for o in offsets if 0 <= r + o < brows})
        rows.append(len(c)); cols += c
    return np.concatenate([[0], np.cumsum(rows)]).astype(np.int32), np.array(cols, np.int32)

cells = [("bf16", 8, 8, 1024, (0, -1, 1, -16, 16, -256, 256), [16, 64, 256, 1024]),
         ("bf16", 1, 1, 16384, (0, -1, 1, -127, -128, -129, 127, 128, 129), [64, 256, 1024]),
         ("f16", 3, 3, 21845, (0, -1, 1, -28, 28, -784, 784), [32, 256]),
         ("bf16", 6, 6, 5461, tuple(dx + 18 * dy + 324 * dz for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1)), [16, 128]),
         ("bf16", 4, 4, 65536, (0, -1, 1, -64, 64, -4096, 4096), [16, 64])]
for dtype, bh, bw, brows, offsets, widths in cells:
    ptr, col = banded(brows, offsets)
    vals = torch.from_numpy(rng.uniform(-1, 1, (len(col), bh, bw))).to(DT[dtype])
    A = bsrmm.BsrMatrix.from_arrays(ptr, col, vals, (brows * bh, brows * bw), device="cuda")
    for n in widths:
        b = torch.from_numpy(rng.uniform(-1, 1, (brows * bw, n))).to(DT[dtype]).cuda()
        out = torch.empty(brows * bh, n, dtype=DT[dtype], device="cuda")
        flops = 2.0 * len(col) * bh * bw * n
        line = f"{dtype} {bh}x{bw} {brows} block rows nnzb {len(col)} N={n}:"
        names = [f"narrow_{dtype}_simt_{suffix}" for suffix in ("warprows", "nlanes")]
        names += [TINY.format(dtype)] if dtype in ("f16", "bf16") else []
        for name in names:
            suffix = name.split("_")[-1]
            ctx = bsrmm.Context("cuda", variant=name, tuning="off", f32_mode="exact")
            ms = time_ms(A, b, out, ctx)
            line += f" {suffix} {ms * 1e3:.1f} us ({flops / ms / 1e9:.2f} TF)"
        ctx = bsrmm.Context("cuda", f32_mode="exact")
        for _ in range(3):
            bsrmm.matmul(A, b, out=out, context=ctx)
        ms = time_ms(A, b, out, ctx)
        line += f" | tuned {ctx.last_variant} {ms * 1e3:.1f} us"
        print(line, flush=True)
