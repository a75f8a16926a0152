// matmul runs off the JS thread: a timer keeps firing while a large multiply is in flight.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BsrMatrix, Tensor, matmul, matmulSync } from "../dist/esm/index.js";
import { checkMatmul, randomBsr, rng } from "./helpers.mjs";

test("a timer keeps firing during a large async multiply", async () => {
  const r = rng(31);
  const [blocks, block, n] = [64, 32, 512]; // 2048 x 2048, half the blocks, N = 512: ~2 GFLOP
  const rowPtr = [0];
  const colIdx = [];
  for (let i = 0; i < blocks; i++) {
    for (let j = 0; j < blocks; j++) if (r.unit() < 0.5) colIdx.push(j);
    rowPtr.push(colIdx.length);
  }
  const values = Float32Array.from({ length: colIdx.length * block * block }, () => r.value());
  const A = BsrMatrix.fromBsr({ rows: blocks * block, cols: blocks * block, blockSize: block, rowPtr, colIdx, values });
  const randomB = (columns) => Float32Array.from({ length: blocks * block * columns }, () => r.value());
  let b = randomB(n);

  // How long the multiply takes here, measured on this thread first; a machine with many cores
  // gets a wider B, so the multiply lasts long enough (~150 ms) for the timer to show anything.
  const timeSync = () => {
    const t0 = performance.now();
    matmulSync(A, b);
    return performance.now() - t0;
  };
  timeSync(); // the first multiply may tune
  let syncMs = timeSync();
  if (syncMs < 100) {
    b = randomB(n * Math.min(16, Math.ceil(150 / Math.max(syncMs, 1))));
    syncMs = timeSync();
  }

  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const start = performance.now();
  const c = await matmul(A, b);
  const elapsed = performance.now() - start;
  clearInterval(timer);
  assert.equal(c.length, b.length);
  // A blocked event loop would see no ticks at all until the multiply ends.
  const expected = Math.floor(elapsed / 10);
  console.log(`# sync ${syncMs.toFixed(0)} ms, async ${elapsed.toFixed(0)} ms, ${ticks} timer ticks (~${expected} possible)`);
  assert.ok(elapsed > 50, `the multiply took only ${elapsed} ms: too small to show anything`);
  assert.ok(ticks >= Math.max(3, expected / 10), `only ${ticks} ticks in ${elapsed.toFixed(0)} ms`);
});

// Whether `promise` settles within a few microtask turns, that is, without the event loop
// running once: a worker's result arrives only through the loop, so it never does.
async function settlesWithoutTheLoop(promise) {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  for (let turn = 0; turn < 20 && !settled; turn++) await Promise.resolve();
  return settled;
}

// 2^18 multiply-adds (nnz * N) is the most `matmul` computes on the calling thread.
for (const [label, n, inline] of [["at the inline limit", 64, true], ["just over it", 65, false]]) {
  test(`a CPU multiply ${label} (N = ${n}) ${inline ? "settles at once" : "goes to a worker"}, and is right either way`, async () => {
    const r = rng(n);
    const a = randomBsr(r, "f32", 4, 4, [16, 16], 1); // 64 x 64, every block stored: nnz = 4096
    const A = BsrMatrix.fromBsr({ ...a, dtype: "f32" });
    assert.equal(A.nnz * n > 2 ** 18, !inline);
    const b = Float32Array.from({ length: 64 * n }, () => r.value());
    const bias = Float32Array.from({ length: 64 }, () => r.value());
    const pending = matmul(A, b, { bias, activation: "relu" });
    assert.equal(await settlesWithoutTheLoop(pending), inline);
    checkMatmul(assert, `arrays, ${label}`, { a, transpose: false, b, bLayout: "row-major", n, bias, activation: "relu" }, await pending);

    const out = Tensor.empty({ rows: 64, cols: n, dtype: "f32" });
    const tensors = matmul(A, Tensor.from(b, { rows: 64, cols: n, dtype: "f32" }), { out });
    assert.equal(await settlesWithoutTheLoop(tensors), inline);
    assert.equal(await tensors, out);
    checkMatmul(assert, `tensors, ${label}`, { a, transpose: false, b, bLayout: "row-major", n }, out.toArray());
  });
}

test("an inline multiply's bad input still rejects its Promise rather than throwing", async () => {
  const A = BsrMatrix.fromDense(new Float32Array(16).fill(1), { rows: 4, cols: 4, blockSize: 2 });
  let pending;
  assert.doesNotThrow(() => (pending = matmul(A, new Float32Array(4 * 2), { activation: "tanh" })));
  await assert.rejects(pending, (error) => error.code === "BSRMM_STATUS_INVALID_ARGUMENT");
});
