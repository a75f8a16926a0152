"""cpu_rowwise_simd against cpu_blocked_simd, both forced, on the CPU this runs on (docs/perf-log.md
entry 80): tall blocks 16x16-128x128 at N 4-64 and tiny blocks 1x1-8x8 (8 a block row) at N
2-256, f32 and f64; each pair timed three times interleaved, the min of medians, so a noisy
machine's drift hits both alike. Needs bsrmm, numpy and scipy:

    python3 packages/bench/experiments/cpu_rowwise_sweep.py
"""
import sys, time, numpy as np, scipy.sparse as sp, bsrmm
def case(n_rows, n, bh, bw, density, dtype, seed=1):
    rng = np.random.default_rng(seed)
    mb, kb = n_rows // bh, n_rows // bw
    mask = sp.random(mb, kb, density=density, format="csr", random_state=seed); mask.data[:] = 1
    A = sp.kron(mask, np.ones((bh, bw)), format="bsr").tobsr(blocksize=(bh, bw))
    A.data = rng.standard_normal(A.data.shape).astype(dtype)
    B = rng.standard_normal((kb*bw, n)).astype(dtype)
    return A, B
def t(f, reps):
    ts=[]
    for _ in range(reps):
        s=time.perf_counter(); f(); ts.append(time.perf_counter()-s)
    return np.median(ts)*1e3
shapes=[]
for bh,bw in [(16,16),(32,32),(64,64),(128,128),(16,64),(64,32)]:
    for n in [4,16,64]:
        for dt in [np.float32,np.float64]:
            shapes.append((4096 if bh>=64 else 8192, n, bh, bw, 0.03 if bh<64 else 0.06, dt))
for b in [1,2,3,4,8]:
    for n in [2,16,128,256]:
        shapes.append((16384, n, b, b, 8.0/(16384//b), np.float32))
        shapes.append((16384, n, b, b, 8.0/(16384//b), np.float64))
for (m,n,bh,bw,d,dt) in shapes:
    A,B = case(m,n,bh,bw,d,dt)
    M = bsrmm.BsrMatrix.from_scipy(A); C = np.empty((A.shape[0],n),dtype=dt)
    work = A.nnz*n
    reps = max(3, min(30, int(3e8/ (work*20+1))))
    ctxs = {v: bsrmm.Context(variant=v) for v in ["cpu_blocked_simd","cpu_rowwise_simd"]}
    res={v:[] for v in ctxs}
    for v,c in ctxs.items(): bsrmm.matmul(M,B,out=C,context=c)
    for _ in range(3):
        for v,c in ctxs.items(): res[v].append(t(lambda: bsrmm.matmul(M,B,out=C,context=c), reps))
    bl, rw = min(res["cpu_blocked_simd"]), min(res["cpu_rowwise_simd"])
    print(f"{np.dtype(dt).name:7s} {bh:3d}x{bw:<3d} N={n:<4d} nnzb={A.data.shape[0]:6d} blocked {bl:8.3f} rowwise {rw:8.3f}  rw/bl {rw/bl:5.2f}", flush=True)
