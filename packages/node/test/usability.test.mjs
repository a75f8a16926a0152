// What trips new users up: plain JS arrays and a B whose length is not a whole number of rows
// (clear errors with a code), dispose() / Symbol.dispose, util.inspect, and "cuda" as a device.
import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";
import { BsrMatrix, BsrmmError, Tensor, cudaDeviceCount, matmul, matmulSync, synchronize } from "../dist/esm/index.js";
import native from "../dist/native/binding.cjs";

const INVALID = "BSRMM_STATUS_INVALID_ARGUMENT";

function isError(code, pattern) {
  return (e) => {
    assert.ok(e instanceof BsrmmError, `expected a BsrmmError, got ${e}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  };
}

// Enough columns of B that a multiply by diagonal() (nnz 8) is over the 2^18 multiply-adds that
// `matmul` computes on the calling thread (ts/inline.ts): it goes to a worker and stays in flight.
const WORKER_N = 2 ** 15 + 1;

/** 4x4 of 2x2 blocks on the diagonal, A = 2 I. */
const diagonal = (device) =>
  BsrMatrix.fromBsr({ rows: 4, cols: 4, blockSize: 2, rowPtr: [0, 1, 2], colIdx: [0, 1], values: new Float32Array([2, 0, 0, 2, 2, 0, 0, 2]), device });

test("plain JS arrays are an error that names the TypedArray to pass", () => {
  const A = diagonal();
  const plain = (what, length, wanted) => isError(INVALID, new RegExp(`^${what} is a plain Array of length ${length}: bsrmm takes TypedArrays \\(${wanted}`));
  assert.throws(() => matmulSync(A, [1, 2, 3, 4]), plain("B", 4, "new Float32Array"));
  assert.throws(() => matmulSync(A, { data: [1, 2, 3, 4], rows: 4, cols: 1 }), plain("B", 4, "new Float32Array"));
  assert.throws(() => matmulSync(A, new Float32Array(4), { bias: [1, 2, 3, 4] }), plain("bias", 4, "new Float32Array"));
  assert.throws(() => matmulSync(A, new Float32Array(4), { beta: 1, c: [1, 2, 3, 4] }), plain("c", 4, "new Float32Array"));
  assert.throws(() => Tensor.from([1, 2], { rows: 1, cols: 2, dtype: "f64" }), plain("data", 2, "new Float64Array"));
  assert.throws(() => BsrMatrix.fromDense([1, 0, 0, 1], { rows: 2, cols: 2, blockSize: 1 }), plain("data", 4, "new Float32Array"));
  assert.throws(() => BsrMatrix.fromBsr({ rows: 2, cols: 2, blockSize: 2, rowPtr: [0, 1], colIdx: [0], values: [1, 2, 3, 4], dtype: "bf16" }), plain("values", 4, "a Uint16Array of bfloat16 bits"));
});

test("a bare B whose length is not a whole number of op(A)'s rows says so", async () => {
  const A = diagonal();
  const pattern = /^B has 7 elements, not a whole number of rows of op\(A\) \(4x4\), which has 4 columns: a bare array B needs a multiple of 4 elements; pass \{data, rows, cols\} for another shape$/;
  assert.throws(() => matmulSync(A, new Float32Array(7)), isError(INVALID, pattern));
  await assert.rejects(matmul(A, new Float32Array(7)), isError(INVALID, pattern));
  assert.throws(() => matmulSync(A, Tensor.zeros({ rows: 1, cols: 1 }).toArray().subarray(0, 1)), isError(INVALID, /B has 1 elements, not a whole number/));
  // A whole number of rows is B with that many columns.
  assert.deepEqual(Array.from(matmulSync(A, new Float32Array(8).fill(1))), [2, 2, 2, 2, 2, 2, 2, 2]);
});

test("dispose() frees a tensor now; later use is an error naming it", async () => {
  const A = diagonal();
  const b = Tensor.from(new Float32Array(4 * WORKER_N).fill(1), { rows: 4, cols: WORKER_N });
  const out = Tensor.empty({ rows: 4, cols: WORKER_N });
  // While a multiply is in flight its tensors cannot be freed under it.
  const pending = matmul(A, b, { out });
  assert.throws(() => out.dispose(), isError(INVALID, /^dispose\(\): the tensor is already the output of a multiply still in flight/));
  assert.throws(() => b.dispose(), isError(INVALID, /^dispose\(\): the tensor is read by 1 multiply\(s\) still in flight/));
  await pending;
  assert.ok(out.toArray().every((v) => v === 2));

  b.dispose();
  assert.equal(b.disposed, true);
  assert.deepEqual(b.shape, [4, WORKER_N]); // what it was stays readable
  b.dispose(); // a no-op
  assert.throws(() => b.toArray(), isError(INVALID, /^toArray\(\): the tensor was disposed/));
  assert.throws(() => matmulSync(A, b), isError(INVALID, /^B: the tensor was disposed/));
  await assert.rejects(matmul(A, new Float32Array(8), { out: b }), isError(INVALID, /^out: the tensor was disposed/));
  // The addon refuses a disposed tensor by itself too.
  const epilogue = { transpose: false, alpha: 1, beta: 0, activation: "none" };
  assert.throws(() => native.matmulIntoSync(A.native, b.native, out.native, null, epilogue), /INVALID_ARGUMENT: B: the tensor was disposed/);

  // Symbol.dispose is what `using t = Tensor.zeros(...)` calls at the end of its scope.
  const scoped = Tensor.zeros({ rows: 2, cols: 2 });
  scoped[Symbol.dispose]();
  assert.equal(scoped.disposed, true);
});

test("dispose() frees a matrix once the multiplies in flight settle", async () => {
  const A = diagonal();
  const pending = matmul(A, new Float32Array(4 * WORKER_N).fill(1));
  A[Symbol.dispose]();
  assert.equal(A.disposed, true);
  const c = await pending;
  assert.ok(c.length === 4 * WORKER_N && c.every((v) => v === 2)); // the multiply kept its matrix
  assert.deepEqual(A.shape, [4, 4]);
  assert.throws(() => matmulSync(A, new Float32Array(4)), isError(INVALID, /^A: the matrix was disposed/));
  assert.throws(() => A.toDense(), isError(INVALID, /^A: the matrix was disposed/));
  const options = { transpose: false, alpha: 1, beta: 0, bLayout: "row-major", outLayout: "row-major", activation: "none" };
  assert.throws(() => native.matmulSync(A.native, new Uint8Array(16), 4, 1, options), /INVALID_ARGUMENT: A: the matrix was disposed/);
});

test("util.inspect shows what a matrix and a tensor are", () => {
  const A = diagonal();
  assert.equal(inspect(A), "BsrMatrix<f32> 4x4 on cpu { blockSize: [ 2, 2 ], nnzb: 2, density: 0.5 }");
  const t = Tensor.from(new Float64Array([1, 2, 3, 4, 5, 6]), { rows: 2, cols: 3, layout: "col-major" });
  assert.equal(inspect(t), "Tensor<f64> 2x3 col-major on cpu Float64Array(6) [ 1, 2, 3, 4, 5, 6 ]");
  // Large host tensors and device tensors show no values (inspect would copy them).
  assert.equal(inspect(Tensor.zeros({ rows: 100, cols: 100 })), "Tensor<f32> 100x100 row-major on cpu");
  assert.match(inspect({ weight: A }, { depth: 0 }), /^\{ weight: BsrMatrix<f32> 4x4 on cpu \}$/);
  t.dispose();
  A.dispose();
  assert.equal(inspect(t), "Tensor<f64> 2x3 col-major on cpu (disposed)");
  assert.equal(inspect(A), "BsrMatrix<f32> 4x4 on cpu (disposed)");
});

test('"cuda" is CUDA device 0, as in Python', (t) => {
  if (cudaDeviceCount() === 0) {
    // Without a GPU "cuda" gets as far as the device: NO_DEVICE, not an unknown device name.
    const noDevice = isError("BSRMM_STATUS_NO_DEVICE", /.+/);
    assert.throws(() => diagonal("cuda"), noDevice);
    assert.throws(() => Tensor.zeros({ rows: 1, cols: 1, device: "cuda" }), noDevice);
    assert.throws(() => synchronize("cuda"), noDevice);
    assert.throws(() => native.synchronize("cuda"), /BSRMM_STATUS_NO_DEVICE/);
    t.diagnostic("no CUDA device: checked that \"cuda\" is parsed (NO_DEVICE)");
    return;
  }
  const A = diagonal("cuda");
  assert.equal(A.device, "cuda:0");
  const x = Tensor.from(new Float32Array(4).fill(1), { rows: 4, cols: 1, device: "cuda" });
  assert.equal(x.device, "cuda:0");
  synchronize("cuda");
});
