// A 512x512 block-sparse matrix (32x32 blocks, a quarter stored) times a 512x64 dense one,
// checked against a plain JS multiply. Run: node examples/example.mjs
import { BsrMatrix, matmul, version } from "bsrmm";

const [n, block, cols] = [512, 32, 64];
const blocks = n / block;
const rowPtr = [0];
const colIdx = [];
for (let r = 0; r < blocks; r++) {
  for (let c = 0; c < blocks; c++) if ((r + 3 * c) % 4 === 0) colIdx.push(c);
  rowPtr.push(colIdx.length);
}
const values = Float32Array.from({ length: colIdx.length * block * block }, (_, i) => Math.sin(i));
const a = BsrMatrix.fromBsr({ rows: n, cols: n, blockSize: block, rowPtr, colIdx, values });
const b = Float32Array.from({ length: n * cols }, (_, i) => Math.cos(i));

const start = performance.now();
const c = await matmul(a, b);
const ms = performance.now() - start;

const dense = a.toDense();
let worst = 0;
for (let i = 0; i < n; i += 37) {
  for (let j = 0; j < cols; j += 5) {
    let want = 0;
    for (let p = 0; p < n; p++) want += dense[i * n + p] * b[p * cols + j];
    worst = Math.max(worst, Math.abs(c[i * cols + j] - want));
  }
}
console.log(`bsrmm ${version()}: ${a.shape.join("x")} (${a.nnzb} blocks of ${a.blockSize.join("x")}) x ${n}x${cols} in ${ms.toFixed(1)} ms; max |error| ${worst.toExponential(2)}`);
if (!(worst < 1e-3)) process.exit(1);
