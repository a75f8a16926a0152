// The CommonJS build loads through require() and works the same.
const assert = require("node:assert/strict");
const { test } = require("node:test");
const bsrmm = require("../dist/cjs/index.js");

test("require('bsrmm') multiplies", () => {
  const A = bsrmm.BsrMatrix.fromBsr({ rows: 2, cols: 2, blockSize: 1, rowPtr: [0, 1, 2], colIdx: [1, 0], values: Float64Array.of(2, 3) });
  const c = bsrmm.matmulSync(A, Float64Array.of(1, 10, 100, 1000));
  assert.deepEqual(Array.from(c), [200, 2000, 3, 30]);
  assert.match(bsrmm.version(), /^\d+\.\d+\.\d+/);
  assert.throws(() => bsrmm.matmulSync(A, Float32Array.of(1, 2)), bsrmm.BsrmmError);
});
