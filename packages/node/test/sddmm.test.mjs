// The SDDMM, values = alpha * (X Y)[the pattern's blocks] + beta * values, checked element by
// element against a float64 reference computed in JS on fresh random operands (values poisoned
// with NaN when beta = 0): every dtype, both layouts of X and Y, arrays and tensors, async and
// sync; then its errors, each a BsrmmError with the C status name as `code`.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as bsrmm from "../dist/esm/index.js";
import { BsrMatrix, BsrmmError, Tensor, sddmm, sddmmSync } from "../dist/esm/index.js";
import { DTYPES, at, cudaOrSkip, randomBsr, rng } from "./helpers.mjs";

/** alpha * (X Y)[block b] + beta * values0[b] in float64 for every stored block, with each element's magnitude. */
function reference(a, x, xLayout, y, yLayout, t, alpha, beta, values0) {
  const { read } = DTYPES[a.dtype];
  const [bh, bw] = a.blockSize;
  const xAt = at(xLayout, a.rows, t);
  const yAt = at(yLayout, t, a.cols);
  const want = [];
  const mag = [];
  for (let r = 0; r + 1 < a.rowPtr.length; r++) {
    for (let k = a.rowPtr[r]; k < a.rowPtr[r + 1]; k++) {
      for (let i = 0; i < bh; i++) {
        for (let j = 0; j < bw; j++) {
          const [row, col] = [r * bh + i, a.colIdx[k] * bw + j];
          let acc = 0;
          let sum = 0;
          for (let p = 0; p < t; p++) {
            const term = read(x, xAt(row, p)) * read(y, yAt(p, col));
            acc += term;
            sum += Math.abs(term);
          }
          let v = alpha * acc;
          let m = Math.abs(alpha) * sum;
          if (beta !== 0) {
            const old = read(values0, want.length);
            v += beta * old;
            m += Math.abs(beta * old);
          }
          want.push(v);
          mag.push(m + Math.abs(v));
        }
      }
    }
  }
  return { want, mag };
}

function check(what, dtype, got, { want, mag }) {
  const { read, tol } = DTYPES[dtype];
  assert.equal(got.length, want.length, `${what}: length`);
  for (let e = 0; e < want.length; e++) {
    const value = read(got, e);
    const bound = tol * mag[e] + 1e-30;
    if (!(Math.abs(value - want[e]) <= bound)) assert.fail(`${what}: values[${e}] = ${value}, reference ${want[e]} (bound ${bound})`);
  }
}

for (const dtype of ["f32", "f64", "f16", "bf16"]) {
  test(`${dtype}: arrays and tensors, both layouts, alpha and beta, match the float64 reference`, async () => {
    const r = rng(7000 + dtype.charCodeAt(1) + dtype.length);
    const make = DTYPES[dtype].make;
    let count = 0;
    for (const [blockRows, blockCols, block, density] of [[5, 4, [2, 3], 0.5], [3, 3, [4, 4], 0.6], [6, 7, [1, 1], 0.3], [2, 3, [16, 8], 0.7]]) {
      for (const xLayout of ["row-major", "col-major"]) {
        for (const yLayout of ["row-major", "col-major"]) {
          const a = randomBsr(r, dtype, blockRows, blockCols, block, density);
          const pattern = BsrMatrix.fromBsr({ ...a, dtype });
          const t = [1, 6, 19][count % 3];
          const x = make(Array.from({ length: a.rows * t }, () => r.value()));
          const y = make(Array.from({ length: t * a.cols }, () => r.value()));
          const alpha = count % 2 ? -0.75 : 1;
          const beta = count % 4 === 1 ? 0.5 : 0;
          const values0 = make(Array.from({ length: pattern.nnz }, () => (beta !== 0 ? r.value() : NaN)));
          const X = { data: x, rows: a.rows, cols: t, layout: xLayout };
          const Y = { data: y, rows: t, cols: a.cols, layout: yLayout };
          const want = reference(a, x, xLayout, y, yLayout, t, alpha, beta, values0);
          const what = `${dtype} case ${count}`;
          const options = { alpha, beta, ...(beta !== 0 ? { values: values0 } : {}) };
          check(`${what} arrays`, dtype, count % 2 ? sddmmSync(pattern, X, Y, options) : await sddmm(pattern, X, Y, options), want);
          // Tensors: out written in place (NaN-poisoned unless beta != 0) and returned.
          const out = Tensor.from(values0, { rows: pattern.nnzb, cols: block[0] * block[1], dtype });
          const xt = Tensor.from(x, { rows: a.rows, cols: t, layout: xLayout, dtype });
          const yt = Tensor.from(y, { rows: t, cols: a.cols, layout: yLayout, dtype });
          const result = count % 2 ? sddmmSync(pattern, xt, yt, { alpha, beta, out }) : await sddmm(pattern, xt, yt, { alpha, beta, out });
          assert.equal(result, out);
          check(`${what} tensors`, dtype, out.toArray(), want);
          count++;
        }
      }
    }
  });
}

// 2^18 multiply-adds (nnz * T) is the most `sddmm` computes on the calling thread (inline.ts);
// one over it goes to a worker, whose result arrives only when the event loop turns.
for (const [label, t, inline] of [["at the inline limit", 64, true], ["just over it", 65, false]]) {
  test(`an SDDMM ${label} (T = ${t}) ${inline ? "settles at once" : "goes to a worker"}, and is right either way`, async () => {
    const r = rng(7100 + t);
    const a = randomBsr(r, "f32", 4, 4, [16, 16], 1); // 64 x 64, every block stored: nnz = 4096
    const pattern = BsrMatrix.fromBsr({ ...a, dtype: "f32" });
    assert.equal(pattern.nnz * t > 2 ** 18, !inline);
    const x = Float32Array.from({ length: 64 * t }, () => r.value());
    const y = Float32Array.from({ length: t * 64 }, () => r.value());
    const pending = sddmm(pattern, { data: x, rows: 64, cols: t }, { data: y, rows: t, cols: 64 }, { alpha: -0.75 });
    let settled = false;
    pending.then(() => (settled = true));
    for (let turn = 0; turn < 20 && !settled; turn++) await Promise.resolve();
    assert.equal(settled, inline);
    check(`f32 T = ${t}`, "f32", await pending, reference(a, x, "row-major", y, "row-major", t, -0.75, 0, null));
  });
}

test("the weight gradient: dW = sddmm(W, dY, X^T) with X^T a col-major view of X, as a matrix of W's structure", async () => {
  const r = rng(7100);
  const a = randomBsr(r, "f32", 4, 5, [3, 2], 0.5);
  const w = BsrMatrix.fromBsr(a);
  const n = 9;
  const x = Float32Array.from({ length: a.cols * n }, () => r.value()); // K x N, row-major
  const dy = Float32Array.from({ length: a.rows * n }, () => r.value()); // M x N, row-major
  const dw = await sddmm(w, dy, { data: x, rows: n, cols: a.cols, layout: "col-major" });
  assert.ok(dw instanceof Float32Array);
  check("dW", "f32", dw, reference(a, dy, "row-major", x, "col-major", n, 1, 0, null));
  // The values in W's block order: a matrix with W's structure and the gradient as values.
  const grad = BsrMatrix.fromBsr({ rows: a.rows, cols: a.cols, blockSize: [3, 2], rowPtr: a.rowPtr, colIdx: a.colIdx, values: dw });
  assert.deepEqual(grad.export().values, dw);
});

test("bare arrays: X has the pattern's rows, Y its columns (row-major); T = 0 scales the values", async () => {
  const pattern = BsrMatrix.fromBsr({ rows: 4, cols: 4, blockSize: 2, rowPtr: [0, 1, 1], colIdx: [1], values: new Float64Array(4) });
  const x = Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8]); // 4 x 2
  const y = Float64Array.from([1, 0, 1, 0, 0, 1, 0, 1]); // 2 x 4
  // Block (0, 1): rows 0-1, columns 2-3 of X Y.
  assert.deepEqual(Array.from(await sddmm(pattern, x, y)), [1, 2, 3, 4]);
  const scaled = sddmmSync(pattern, new Float64Array(0), new Float64Array(0), { beta: 2, values: Float64Array.from([1, 2, 3, 4]) });
  assert.deepEqual(Array.from(scaled), [2, 4, 6, 8]);
});

function rejects(fn, code, needle) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof BsrmmError, `${error}`);
    assert.equal(error.code, code, error.message);
    assert.ok(error.message.includes(needle), `${error.message} should mention ${needle}`);
    return true;
  });
}

test("bad input is a BsrmmError with the C status name (checked before the native call; the addon and the core check again)", async () => {
  const pattern = BsrMatrix.fromBsr({ rows: 4, cols: 6, blockSize: [2, 3], rowPtr: [0, 1, 2], colIdx: [1, 0], values: new Float32Array(12) });
  const X = (rows, cols) => ({ data: new Float32Array(rows * cols), rows, cols });
  const INVALID = "BSRMM_STATUS_INVALID_ARGUMENT";
  rejects(() => sddmmSync(pattern, X(3, 5), X(5, 6)), INVALID, "X has 3 rows");
  rejects(() => sddmmSync(pattern, X(4, 5), X(5, 7)), INVALID, "Y has 7 columns");
  rejects(() => sddmmSync(pattern, X(4, 5), X(4, 6)), INVALID, "X's columns must be Y's rows");
  rejects(() => sddmmSync(pattern, new Float32Array(7), X(5, 6)), INVALID, "X has 7 elements");
  rejects(() => sddmmSync(pattern, X(4, 5), X(5, 6), { beta: 1 }), INVALID, "needs the existing values");
  rejects(() => sddmmSync(pattern, X(4, 5), X(5, 6), { beta: 1, values: new Float32Array(11) }), INVALID, "values has 11 elements");
  rejects(() => sddmmSync(pattern, X(4, 5), X(5, 6), { alpha: "2" }), INVALID, "alpha");
  rejects(() => sddmmSync(pattern, [1, 2], X(5, 6)), INVALID, "plain Array");
  rejects(() => sddmmSync("W", X(4, 5), X(5, 6)), INVALID, "pattern must be a BsrMatrix");
  const UNSUPPORTED = "BSRMM_STATUS_UNSUPPORTED";
  rejects(() => sddmmSync(pattern, { data: new Float64Array(20), rows: 4, cols: 5 }, X(5, 6)), UNSUPPORTED, "mixed dtypes");
  rejects(() => sddmmSync(pattern, X(4, 5), X(5, 6), { beta: 1, values: new Float64Array(12) }), UNSUPPORTED, "mixed dtypes");
  // Tensors: out's shape, layout and dtype, out also an operand.
  const xt = Tensor.zeros({ rows: 4, cols: 5 });
  const yt = Tensor.zeros({ rows: 5, cols: 6 });
  rejects(() => sddmmSync(pattern, xt, yt, { out: Tensor.zeros({ rows: 2, cols: 5 }) }), INVALID, "out is 2x5");
  rejects(() => sddmmSync(pattern, xt, yt, { out: Tensor.zeros({ rows: 2, cols: 6, layout: "col-major" }) }), INVALID, "col-major");
  rejects(() => sddmmSync(pattern, xt, yt, { out: Tensor.zeros({ rows: 2, cols: 6, dtype: "f64" }) }), UNSUPPORTED, "mixed dtypes");
  const square = Tensor.zeros({ rows: 2, cols: 6 });
  const wide = BsrMatrix.fromBsr({ rows: 2, cols: 6, blockSize: [2, 3], rowPtr: [0, 2], colIdx: [0, 1], values: new Float32Array(12) });
  rejects(() => sddmmSync(wide, square, Tensor.zeros({ rows: 6, cols: 6 }), { out: square }), INVALID, "out is also X");
  // The async form rejects the same way (its checks run before the Promise).
  await assert.rejects(sddmm(pattern, X(3, 5), X(5, 6)), (error) => error instanceof BsrmmError && error.code === INVALID);
  // A disposed pattern.
  pattern.dispose();
  rejects(() => sddmmSync(pattern, X(4, 5), X(5, 6)), INVALID, "disposed");
});

test("cuda:0: tensors in place and arrays staged, f32/f16/bf16, blocks 16 to 128, match the float64 reference", async (t) => {
  if (!cudaOrSkip(t, bsrmm)) return;
  const r = rng(7200);
  for (const dtype of ["f32", "f16", "bf16"]) {
    const make = DTYPES[dtype].make;
    for (const [block, tLen] of [[[16, 16], 40], [[64, 64], 96], [[128, 128], 64], [[32, 64], 72]]) {
      const a = randomBsr(r, dtype, 3, 2, block, 0.6);
      const pattern = BsrMatrix.fromBsr({ ...a, dtype, device: "cuda:0" });
      const x = make(Array.from({ length: a.rows * tLen }, () => r.value()));
      const y = make(Array.from({ length: tLen * a.cols }, () => r.value()));
      const want = reference(a, x, "row-major", y, "col-major", tLen, 1, 0, null);
      const Y = { data: y, rows: tLen, cols: a.cols, layout: "col-major" };
      check(`${dtype} ${block} arrays on cuda:0`, dtype, await sddmm(pattern, { data: x, rows: a.rows, cols: tLen }, Y), want);
      const device = "cuda:0";
      const xt = Tensor.from(x, { rows: a.rows, cols: tLen, dtype, device });
      const yt = Tensor.from(y, { rows: tLen, cols: a.cols, layout: "col-major", dtype, device });
      const out = Tensor.empty({ rows: pattern.nnzb, cols: block[0] * block[1], dtype, device });
      assert.equal(await sddmm(pattern, xt, yt, { out }), out);
      check(`${dtype} ${block} tensors on cuda:0`, dtype, out.toArray(), want);
    }
  }
  const pattern = BsrMatrix.fromBsr({ rows: 4, cols: 4, blockSize: 2, rowPtr: [0, 1, 1], colIdx: [1], values: new Float32Array(4), device: "cuda:0" });
  rejects(() => sddmmSync(pattern, Tensor.zeros({ rows: 4, cols: 2 }), Tensor.zeros({ rows: 2, cols: 4, device: "cuda:0" })), "BSRMM_STATUS_INVALID_ARGUMENT", "X is a tensor on cpu");
});
