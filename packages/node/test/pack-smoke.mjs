// Run by pack.test.mjs inside the directory where the packed tarballs were installed (outside the
// workspace): fresh random operands, every element of each product checked against a float64
// sum within a bound from the storage precision.  node pack-smoke.mjs <expected version>
import { BsrMatrix, matmul, version } from "bsrmm";

const expected = process.argv[2];
if (version() !== expected) throw new Error(`bsrmm reports version ${version()}, the packages are ${expected}`);

const uniform = () => Math.random() * 2 - 1;

async function check(what, { rows, cols, n, bh, bw, Array, eps }, transpose, alpha, beta) {
  const rowPtr = [0];
  const colIdx = [];
  for (let r = 0; r < rows / bh; r++) {
    for (let c = 0; c < cols / bw; c++) if ((r === 0 && c === 0) || Math.random() < 0.4) colIdx.push(c);
    rowPtr.push(colIdx.length);
  }
  const values = Array.from({ length: colIdx.length * bh * bw }, uniform);
  const a = BsrMatrix.fromBsr({ rows, cols, blockSize: [bh, bw], rowPtr, colIdx, values });
  const [m, k] = transpose ? [cols, rows] : [rows, cols];
  const b = Array.from({ length: k * n }, uniform);
  const c0 = Array.from({ length: m * n }, uniform);
  const got = await matmul(a, { data: b, rows: k, cols: n }, { transpose, alpha, beta, ...(beta !== 0 ? { c: c0 } : {}) });

  const want = new Float64Array(m * n);
  const magnitude = new Float64Array(m * n);
  for (let r = 0; r < rows / bh; r++) {
    for (let blk = rowPtr[r]; blk < rowPtr[r + 1]; blk++) {
      for (let i = 0; i < bh; i++) {
        for (let p = 0; p < bw; p++) {
          const av = values[(blk * bh + i) * bw + p];
          // A[r*bh+i][col*bw+p]; op(A)[x][y] with x the output row.
          const [x, y] = transpose ? [colIdx[blk] * bw + p, r * bh + i] : [r * bh + i, colIdx[blk] * bw + p];
          for (let j = 0; j < n; j++) {
            want[x * n + j] += alpha * av * b[y * n + j];
            magnitude[x * n + j] += Math.abs(alpha * av * b[y * n + j]);
          }
        }
      }
    }
  }
  let worst = 0;
  for (let e = 0; e < m * n; e++) {
    const w = want[e] + beta * c0[e];
    const bound = 2 * k * eps * (magnitude[e] + Math.abs(beta * c0[e])) + eps * Math.abs(w) + 1e-30;
    const error = Math.abs(got[e] - w);
    if (!(error <= bound)) throw new Error(`${what}: C[${Math.floor(e / n)}][${e % n}] = ${got[e]}, want ${w} (bound ${bound})`);
    worst = Math.max(worst, error);
  }
  console.log(`pack-smoke: ${what}: ${m * n} elements, max |error| ${worst.toExponential(2)}`);
}

await check("f32 A @ B, blocks 16x8", { rows: 96, cols: 80, n: 24, bh: 16, bw: 8, Array: Float32Array, eps: 2 ** -23 }, false, 1, 0);
await check("f64 0.5 A^T @ B + 2 C, blocks 4x4", { rows: 64, cols: 48, n: 20, bh: 4, bw: 4, Array: Float64Array, eps: 2 ** -52 }, true, 0.5, 2);
console.log("pack-smoke: ok");
