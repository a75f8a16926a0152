// The array form (B a TypedArray, a new result) against the tensor form (no copies) of one
// multiply, 4096^2, blocks 64, a quarter stored, f32, by N: what the copies cost (perf-log 98).
// Run after a build: `node bench/array_copies.mjs`.
import { BsrMatrix, Tensor, matmulSync } from "../dist/esm/index.js";
const size = 4096, block = 64;
const blocks = size / block;
const rowPtr = [0], colIdx = [];
for (let r = 0; r < blocks; r++) { for (let c = 0; c < blocks; c++) if ((r * 7 + c * 13) % 4 === 0) colIdx.push(c); rowPtr.push(colIdx.length); }
const values = Float32Array.from({ length: colIdx.length * block * block }, (_, i) => ((i * 37) % 101 - 50) / 50);
const A = BsrMatrix.fromBsr({ rows: size, cols: size, blockSize: block, rowPtr, colIdx, values });
const med = (f, reps) => { f(); const t = []; for (let i = 0; i < reps; i++) { const t0 = process.hrtime.bigint(); f(); t.push(Number(process.hrtime.bigint() - t0) / 1000); } t.sort((a, b) => a - b); return t[t.length >> 1]; };
for (const n of [1, 16, 256]) {
  const b = Float32Array.from({ length: size * n }, (_, i) => ((i * 53) % 97 - 48) / 48);
  const bt = Tensor.from(b, { rows: size, cols: n });
  const out = Tensor.empty({ rows: size, cols: n });
  const arrays = med(() => matmulSync(A, b), n > 16 ? 15 : 60);
  const tensors = med(() => matmulSync(A, bt, { out }), n > 16 ? 15 : 60);
  console.log(`N=${n}: arrays ${arrays.toFixed(0)} us, tensors ${tensors.toFixed(0)} us (${(arrays / tensors).toFixed(2)}x)`);
}
