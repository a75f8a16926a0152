// matmul runs off the JS thread: a timer keeps firing while a large multiply is in flight.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BsrMatrix, matmul, matmulSync } from "../dist/esm/index.js";
import { rng } from "./helpers.mjs";

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
