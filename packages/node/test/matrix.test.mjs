// BsrMatrix construction, properties and read-back.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BsrMatrix } from "../dist/esm/index.js";
import { DTYPES, randomBsr, rng } from "./helpers.mjs";

for (const dtype of ["f32", "f64", "f16", "bf16"]) {
  test(`${dtype}: fromBsr -> shape, blockSize, nnz, export, toDense`, () => {
    const a = randomBsr(rng(21), dtype, 4, 5, [2, 3], 0.5);
    const A = BsrMatrix.fromBsr({ ...a, dtype });
    assert.deepEqual(A.shape, [8, 15]);
    assert.deepEqual(A.blockSize, [2, 3]);
    assert.equal(A.nnzb, a.colIdx.length);
    assert.equal(A.nnz, a.values.length);
    assert.equal(A.dtype, dtype);
    assert.equal(A.device, "cpu");
    const parts = A.export();
    assert.deepEqual(parts.rowPtr, a.rowPtr);
    assert.deepEqual(parts.colIdx, a.colIdx);
    const read = DTYPES[dtype].read;
    assert.deepEqual(Array.from(parts.values, (_, i) => read(parts.values, i)), Array.from(a.values, (_, i) => read(a.values, i)));
    for (const layout of ["row-major", "col-major"]) {
      const d = A.toDense(layout);
      for (let i = 0; i < a.rows; i++) {
        for (let j = 0; j < a.cols; j++) {
          const idx = layout === "row-major" ? i * a.cols + j : j * a.rows + i;
          assert.equal(read(d, idx), a.dense[i * a.cols + j], `${layout} (${i}, ${j})`);
        }
      }
    }
  });
}

test("fromDense keeps only blocks with a non-zero", () => {
  const a = randomBsr(rng(22), "f32", 3, 4, [2, 2], 0.4);
  const A = BsrMatrix.fromDense(Float32Array.from(a.dense), { rows: a.rows, cols: a.cols, blockSize: 2 });
  const parts = A.export();
  assert.deepEqual(parts.rowPtr, a.rowPtr);
  assert.deepEqual(parts.colIdx, a.colIdx);
  assert.deepEqual(parts.values, a.values);
});

test("plain arrays of indices and unsorted columns on request", () => {
  const values = Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const A = BsrMatrix.fromBsr({ rows: 2, cols: 8, blockSize: 2, rowPtr: [0, 2], colIdx: [3, 1], values, sortIndices: true });
  const parts = A.export();
  assert.deepEqual(Array.from(parts.colIdx), [1, 3]);
  assert.deepEqual(Array.from(parts.values), [5, 6, 7, 8, 1, 2, 3, 4]);
});

test("f16 results come back as Float16Array where the runtime has one, else Uint16Array bits", () => {
  const A = BsrMatrix.fromBsr({ rows: 1, cols: 1, blockSize: 1, rowPtr: [0, 1], colIdx: [0], values: Uint16Array.of(0x3c00), dtype: "f16" });
  const d = A.toDense();
  if (typeof globalThis.Float16Array === "function") assert.equal(d[0], 1);
  else {
    assert.ok(d instanceof Uint16Array);
    assert.equal(d[0], 0x3c00);
  }
});
