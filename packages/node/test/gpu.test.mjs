// The GPU path ("cuda:0" matrices): host TypedArrays in and out, staged through device buffers,
// every element checked against the float64 reference; GPU-resident matrices read back; a
// large GPU multiply leaves the event loop free; errors. Skipped (with the reason) without a
// CUDA device; BSRMM_TEST_REQUIRE_CUDA=1 turns that skip into a failure.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as bsrmm from "../dist/esm/index.js";
import { DTYPES, at, checkMatmul, cudaOrSkip, randomBsr, rng } from "./helpers.mjs";

const { BsrMatrix, BsrmmError, matmul, matmulSync } = bsrmm;

for (const dtype of ["f32", "f16", "bf16", "f64"]) {
  test(`cuda:0 ${dtype}: layouts, op(A) and the epilogue match the float64 reference`, async (t) => {
    if (!cudaOrSkip(t, bsrmm)) return;
    const r = rng(500 + dtype.charCodeAt(1) + dtype.length);
    const make = DTYPES[dtype].make;
    let count = 0;
    for (const [blockRows, blockCols, block] of [[6, 5, [16, 16]], [4, 3, [32, 32]], [2, 3, [64, 64]], [5, 4, [16, 32]]]) {
      for (const transpose of [false, true]) {
        for (const [bLayout, layout] of [["row-major", "row-major"], ["col-major", "col-major"], ["row-major", "col-major"]]) {
          const a = randomBsr(r, dtype, blockRows, blockCols, block, 0.4);
          const A = BsrMatrix.fromBsr({ ...a, dtype, device: "cuda:0" });
          assert.equal(A.device, "cuda:0");
          const [m, k] = transpose ? [a.cols, a.rows] : [a.rows, a.cols];
          const n = 17 + (count % 3) * 8;
          const b = make(Array.from({ length: k * n }, () => r.value()));
          const opts = {
            transpose,
            layout,
            alpha: count % 2 ? -0.5 : 1,
            activation: ["none", "relu", "gelu", "silu"][count % 4],
          };
          if (count % 3 === 1) {
            opts.beta = 0.25;
            opts.c = make(Array.from({ length: m * n }, () => r.value()));
          }
          if (count % 3 === 2) opts.bias = make(Array.from({ length: m }, () => r.value()));
          const B = { data: b, rows: k, cols: n, layout: bLayout };
          const got = count % 2 ? matmulSync(A, B, opts) : await matmul(A, B, opts);
          checkMatmul(assert, `cuda ${dtype} case ${count}`, { a, transpose, b, bLayout, n, c0: opts.c, ...opts }, got);
          count++;
        }
      }
    }
  });
}

test("cuda:0 matrices from dense arrays, read back to the host", (t) => {
  if (!cudaOrSkip(t, bsrmm)) return;
  const r = rng(520);
  for (const dtype of ["f32", "f16", "bf16"]) {
    const a = randomBsr(r, dtype, 4, 6, [16, 16], 0.5);
    const A = BsrMatrix.fromBsr({ ...a, dtype, device: "cuda:0" });
    const parts = A.export();
    assert.deepEqual(Array.from(parts.rowPtr), Array.from(a.rowPtr));
    assert.deepEqual(Array.from(parts.colIdx), Array.from(a.colIdx));
    assert.deepEqual(Array.from(parts.values), Array.from(a.values));
    // From a dense row-major copy on the GPU: the same matrix.
    const dense = A.toDense("row-major");
    const D = BsrMatrix.fromDense(dense, { rows: a.rows, cols: a.cols, blockSize: 16, dtype, device: "cuda:0" });
    assert.equal(D.device, "cuda:0");
    assert.equal(D.nnzb, a.colIdx.length);
    const { read } = DTYPES[dtype];
    const back = D.toDense("col-major");
    const colMajor = at("col-major", a.rows, a.cols);
    for (let i = 0; i < a.rows; i++) {
      for (let j = 0; j < a.cols; j++) {
        assert.equal(read(back, colMajor(i, j)), a.dense[i * a.cols + j], `${dtype} toDense (${i}, ${j})`);
      }
    }
  }
});

test("a timer keeps firing during a large async GPU multiply", async (t) => {
  if (!cudaOrSkip(t, bsrmm)) return;
  // 4096 x 4096 with 64x64 blocks, half of them stored, times 4096 x 8192, f16: 64 MiB in and
  // out through device buffers and ~140 GFLOP, all on the worker thread.
  const [blocks, block, n] = [64, 64, 8192];
  const r = rng(530);
  const a = { rows: blocks * block, cols: blocks * block, blockSize: block, dtype: "f16", device: "cuda:0" };
  const rowPtr = [0];
  const colIdx = [];
  for (let i = 0; i < blocks; i++) {
    for (let j = 0; j < blocks; j++) if (r.unit() < 0.5) colIdx.push(j);
    rowPtr.push(colIdx.length);
  }
  // Random halves in [-1, 1) from a table of 4096 (drawing 100 M values one by one takes seconds).
  const table = Uint16Array.from({ length: 4096 }, () => DTYPES.f16.make([r.value()])[0]);
  const fill = (length) => {
    const out = new Uint16Array(length);
    for (let i = 0; i < length; i++) out[i] = table[Math.imul(i, 2654435761) >>> 20];
    return out;
  };
  const A = BsrMatrix.fromBsr({ ...a, rowPtr, colIdx, values: fill(colIdx.length * block * block) });
  const b = fill(a.cols * n);

  // First call tunes; the second shows how long one multiply takes when it blocks this thread.
  matmulSync(A, b);
  const t0 = performance.now();
  const syncResult = matmulSync(A, b);
  const syncMs = performance.now() - t0;

  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const start = performance.now();
  const c = await matmul(A, b);
  const elapsed = performance.now() - start;
  clearInterval(timer);
  assert.equal(c.length, a.rows * n);
  // The async result is the sync one (same operands, same variant).
  for (let i = 0; i < c.length; i += 9973) assert.equal(c[i], syncResult[i], `C[${i}]`);
  const expected = Math.floor(elapsed / 5);
  console.log(`# GPU: sync ${syncMs.toFixed(0)} ms, async ${elapsed.toFixed(0)} ms, ${ticks} timer ticks while pending (~${expected} possible)`);
  assert.ok(elapsed > 25, `the multiply took only ${elapsed.toFixed(1)} ms: too small to show anything`);
  // A blocked event loop would see no tick at all until the multiply ends.
  assert.ok(ticks >= Math.max(3, expected / 10), `only ${ticks} ticks in ${elapsed.toFixed(0)} ms`);
});

test("GPU errors are BsrmmErrors naming the rule", (t) => {
  if (!cudaOrSkip(t, bsrmm)) return;
  const r = rng(540);
  const a = randomBsr(r, "f32", 2, 2, [16, 16], 1);
  const A = BsrMatrix.fromBsr({ ...a, device: "cuda:0" });
  assert.throws(() => matmulSync(A, new Float32Array(5)), (e) => e instanceof BsrmmError && e.code === "BSRMM_STATUS_INVALID_ARGUMENT");
  assert.throws(() => matmulSync(A, new Float64Array(32 * 2)), (e) => e instanceof BsrmmError && /dtype|f64|f32/.test(e.message));
  const count = bsrmm.cudaDeviceCount();
  assert.throws(() => BsrMatrix.fromBsr({ ...a, device: `cuda:${count}` }), (e) => e instanceof BsrmmError && /NO_DEVICE|CUDA_ERROR|INVALID/.test(e.code));
});
