// What an awaited `matmul` costs beyond `matmulSync`, by problem size: the data behind the
// inline limit of ts/inline.ts (perf-log 95). Run after a build: `node bench/async_handoff.mjs`.
// Prints us per call; over the limit the await includes the hand-off to a libuv worker and back.
import { BsrMatrix, matmul, matmulSync } from "../dist/esm/index.js";

const perCallUs = (f, calls) => {
  for (let i = 0; i < 200; i++) f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) f();
  return Number(process.hrtime.bigint() - t0) / calls / 1000;
};
const awaitedUs = async (f, calls) => {
  for (let i = 0; i < 100; i++) await f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await f();
  return Number(process.hrtime.bigint() - t0) / calls / 1000;
};

for (const [rows, block, dtype] of [[64, 16, "f32"], [256, 16, "f32"], [64, 4, "f64"], [1024, 32, "f32"]]) {
  const Array_ = dtype === "f32" ? Float32Array : Float64Array;
  const a = BsrMatrix.fromDense(Array_.from({ length: rows * rows }, () => Math.random() - 0.5), { rows, cols: rows, blockSize: block });
  for (const n of [1, 4, 16, 64]) {
    const b = Array_.from({ length: rows * n }, () => Math.random() - 0.5);
    const sync = perCallUs(() => matmulSync(a, b), 2000);
    const awaited = await awaitedUs(() => matmul(a, b), 1000);
    console.log(`${dtype} ${rows}x${rows} block ${block} N=${n} multiply-adds=${a.nnz * n}: matmulSync ${sync.toFixed(1)} us, await matmul ${awaited.toFixed(1)} us`);
  }
}
