// Every multiply checked element by element against a float64 reference computed in JS, on
// fresh random operands, for every dtype, layout, op(A), alpha/beta, bias and activation.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BsrMatrix, matmul, matmulSync } from "../dist/esm/index.js";
import { DTYPES, at, checkMatmul, randomBsr, rng } from "./helpers.mjs";

function operands(r, dtype, m, k, n, bLayout, layout) {
  const make = DTYPES[dtype].make;
  const b = make(Array.from({ length: k * n }, () => r.value()));
  const c0 = make(Array.from({ length: m * n }, () => r.value()));
  const bias = make(Array.from({ length: m }, () => r.value()));
  return { b, c0, bias, bAt: at(bLayout, k, n), cAt: at(layout, m, n) };
}

for (const dtype of ["f32", "f64", "f16", "bf16"]) {
  test(`${dtype}: every option combination matches the float64 reference`, async () => {
    const r = rng(dtype.length * 1000 + dtype.charCodeAt(1));
    let count = 0;
    for (const [blockRows, blockCols, block, density] of [[5, 4, [2, 3], 0.5], [3, 3, [4, 4], 0.6], [6, 7, [1, 1], 0.3]]) {
      for (const transpose of [false, true]) {
        for (const bLayout of ["row-major", "col-major"]) {
          for (const layout of ["row-major", "col-major"]) {
            const a = randomBsr(r, dtype, blockRows, blockCols, block, density);
            const A = BsrMatrix.fromBsr({ ...a, dtype });
            const [m, k] = transpose ? [a.cols, a.rows] : [a.rows, a.cols];
            const n = 3 + (count % 4);
            const { b, c0, bias } = operands(r, dtype, m, k, n, bLayout, layout);
            const opts = {
              transpose,
              layout,
              alpha: count % 2 ? -0.5 : 1,
              beta: count % 3 === 1 ? 0.25 : 0,
              activation: ["none", "relu", "gelu", "silu"][count % 4],
              ...(count % 3 === 2 ? { bias } : {}),
            };
            if (opts.beta !== 0) opts.c = c0;
            const B = { data: b, rows: k, cols: n, layout: bLayout };
            const got = count % 2 ? matmulSync(A, B, opts) : await matmul(A, B, opts);
            checkMatmul(assert, `${dtype} case ${count}`, { a, transpose, b, bLayout, n, c0, ...opts }, got);
            count++;
          }
        }
      }
    }
  });
}

test("a bare TypedArray is B in row-major with op(A)'s column count as rows", async () => {
  const r = rng(7);
  const a = randomBsr(r, "f64", 4, 3, [2, 2], 0.5);
  const A = BsrMatrix.fromBsr(a);
  const b = Float64Array.from({ length: a.cols * 5 }, () => r.value());
  const got = await matmul(A, b);
  assert.ok(got instanceof Float64Array);
  checkMatmul(assert, "bare B", { a, transpose: false, b, bLayout: "row-major", n: 5 }, got);
});

test("the caller's arrays are never written", async () => {
  const r = rng(8);
  const a = randomBsr(r, "f32", 3, 3, [2, 2], 0.7);
  const A = BsrMatrix.fromBsr(a);
  const b = Float32Array.from({ length: a.cols * 4 }, () => r.value());
  const c = Float32Array.from({ length: a.rows * 4 }, () => r.value());
  const [bCopy, cCopy] = [b.slice(), c.slice()];
  const got = await matmul(A, b, { beta: 1, c });
  assert.deepEqual(b, bCopy);
  assert.deepEqual(c, cCopy);
  assert.notEqual(got, c);
});
