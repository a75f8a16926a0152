// Bad input is a BsrmmError with a stable code and a message naming the argument; wrong types,
// lengths and shapes are caught in TypeScript before the native call.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BsrMatrix, BsrmmError, cudaDeviceCount, matmul, matmulSync } from "../dist/esm/index.js";

function rejects(fn, code, pattern) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof BsrmmError, `expected a BsrmmError, got ${e}`);
    assert.ok(e instanceof Error);
    assert.equal(e.code, code);
    assert.match(e.message, pattern);
    return true;
  });
}

const good = () => ({ rows: 4, cols: 4, blockSize: 2, rowPtr: [0, 1, 2], colIdx: [0, 1], values: new Float32Array(8).fill(1) });
const INVALID = "BSRMM_STATUS_INVALID_ARGUMENT";
const UNSUPPORTED = "BSRMM_STATUS_UNSUPPORTED";

test("wrong TypedArray types and lengths are caught in TypeScript", () => {
  rejects(() => BsrMatrix.fromBsr({ ...good(), values: [1, 2, 3] }), INVALID, /values is a plain Array of length 3: bsrmm takes TypedArrays/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), values: new Float64Array(8), dtype: "f32" }), INVALID, /values must be a Float32Array/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), values: new Uint16Array(8) }), INVALID, /dtype is required/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), values: new Float32Array(7) }), INVALID, /values has 7 elements/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), rowPtr: [0, 1] }), INVALID, /rowPtr has 2 entries/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), colIdx: [0, 1.5] }), INVALID, /colIdx must be/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), rows: -4 }), INVALID, /rows = -4/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), blockSize: [2] }), INVALID, /blockSize/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), dtype: "f8" }), INVALID, /dtype = "f8"/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), device: "gpu" }), INVALID, /device = "gpu"/);
  rejects(() => BsrMatrix.fromDense(new Float32Array(5), { rows: 2, cols: 3, blockSize: 1 }), INVALID, /data has 5 elements/);
});

test("structure rules come from the core, with its message", () => {
  rejects(() => BsrMatrix.fromBsr({ ...good(), colIdx: [0, 2] }), INVALID, /col_idx/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), rowPtr: [0, 2, 1] }), INVALID, /row_ptr/);
  rejects(() => BsrMatrix.fromBsr({ ...good(), rows: 5 }), INVALID, /.+/);
});

test("multiply operands are checked before the native call", async () => {
  const A = BsrMatrix.fromBsr(good());
  // An array of another dtype is what the core calls mixed dtypes (UNSUPPORTED in every binding).
  rejects(() => matmulSync(A, new Float64Array(8)), UNSUPPORTED, /mixed dtypes are not supported: A is f32, B is a Float64Array/);
  rejects(() => matmulSync(A, new Float32Array(8), { beta: 1, c: new Uint16Array(8) }), UNSUPPORTED, /c is a Uint16Array/);
  rejects(() => matmulSync(A, new Float32Array(8), { bias: new Float64Array(4) }), UNSUPPORTED, /bias is a Float64Array/);
  rejects(() => matmulSync(A, [1, 2, 3, 4, 5, 6, 7, 8]), INVALID, /B is a plain Array of length 8: bsrmm takes TypedArrays \(new Float32Array\(array\)\)/);
  rejects(() => matmulSync(A, { data: new Float32Array(6), rows: 3, cols: 2 }), INVALID, /B has 3 rows, op\(A\) \(4x4\) has 4 columns/);
  rejects(() => matmulSync(A, { data: new Float32Array(7), rows: 4, cols: 2 }), INVALID, /B has 7 elements/);
  rejects(() => matmulSync(A, new Float32Array(8), { beta: 1 }), INVALID, /needs the existing C/);
  rejects(() => matmulSync(A, new Float32Array(8), { beta: 1, c: new Float32Array(3) }), INVALID, /c has 3 elements/);
  rejects(() => matmulSync(A, new Float32Array(8), { bias: new Float32Array(3) }), INVALID, /bias has 3 elements/);
  rejects(() => matmulSync(A, new Float32Array(8), { alpha: "2" }), INVALID, /alpha = "2" must be a number/);
  // NaN is a number: it propagates (IEEE), as through the core and every other binding.
  assert.ok(Array.from(matmulSync(A, new Float32Array(8).fill(1), { alpha: NaN })).every(Number.isNaN));
  rejects(() => matmulSync(A, new Float32Array(8), { activation: "tanh" }), INVALID, /activation = "tanh"/);
  rejects(() => matmulSync(A, new Float32Array(8), { layout: "diagonal" }), INVALID, /layout = "diagonal"/);
  // The Promise form rejects rather than throwing synchronously.
  await assert.rejects(matmul(A, new Float64Array(8)), (e) => e instanceof BsrmmError && e.code === UNSUPPORTED);
});

test("a CUDA device without a GPU is NO_DEVICE", (t) => {
  if (cudaDeviceCount() > 0) {
    t.skip(`${cudaDeviceCount()} CUDA device(s) present`);
    return;
  }
  rejects(() => BsrMatrix.fromBsr({ ...good(), device: "cuda:0" }), "BSRMM_STATUS_NO_DEVICE", /.+/);
});
