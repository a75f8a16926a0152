// Tensors on "cpu": round trips, multiplies with tensor B, bias and out (every element against the
// float64 reference), the claims that keep concurrent async multiplies apart, and errors.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import * as bsrmm from "../dist/esm/index.js";
import native from "../dist/native/binding.cjs";
import { DTYPES, at, checkAccumulated, checkMatmul, randomBsr, rng } from "./helpers.mjs";

const { BsrMatrix, BsrmmError, Tensor, matmul, matmulSync, synchronize } = bsrmm;
const INVALID = "BSRMM_STATUS_INVALID_ARGUMENT";
const UNSUPPORTED = "BSRMM_STATUS_UNSUPPORTED";

function isError(code, pattern) {
  return (e) => {
    assert.ok(e instanceof BsrmmError, `expected a BsrmmError, got ${e}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  };
}

const random = (r, dtype, length) => DTYPES[dtype].make(Array.from({ length }, () => r.value()));

for (const dtype of ["f32", "f64", "f16", "bf16"]) {
  test(`${dtype}: Tensor.from -> getters and toArray in both layouts; zeros; empty`, () => {
    const r = rng(900 + dtype.length + dtype.charCodeAt(1));
    for (const layout of ["row-major", "col-major"]) {
      const data = random(r, dtype, 5 * 3);
      const t = Tensor.from(data, { rows: 5, cols: 3, layout, dtype });
      assert.equal(t.rows, 5);
      assert.equal(t.cols, 3);
      assert.deepEqual(t.shape, [5, 3]);
      assert.equal(t.layout, layout);
      assert.equal(t.dtype, dtype);
      assert.equal(t.device, "cpu");
      const back = t.toArray();
      assert.equal(back.length, data.length);
      for (let i = 0; i < data.length; i++) assert.equal(back[i], data[i], `${layout} element ${i}`);
      back[0] = back[1]; // a copy: the tensor keeps its own values
      assert.equal(t.toArray()[0], data[0]);
    }
    const { read } = DTYPES[dtype];
    const zeros = Tensor.zeros({ rows: 2, cols: 4, dtype });
    assert.ok(Array.from({ length: 8 }, (_, i) => read(zeros.toArray(), i)).every((x) => x === 0));
    // Unset host elements are NaN, so one that a multiply fails to write shows.
    const empty = Tensor.empty({ rows: 2, cols: 4, dtype, layout: "col-major" });
    assert.equal(empty.layout, "col-major");
    assert.ok(Array.from({ length: 8 }, (_, i) => read(empty.toArray(), i)).every(Number.isNaN));
  });

  test(`${dtype}: multiplies on tensors (B, bias, out) match the float64 reference`, async () => {
    const r = rng(910 + dtype.length + dtype.charCodeAt(1));
    let count = 0;
    for (const [blockRows, blockCols, block] of [[5, 4, [2, 3]], [3, 3, [4, 4]]]) {
      for (const transpose of [false, true]) {
        for (const [bLayout, layout] of [["row-major", "row-major"], ["col-major", "col-major"], ["col-major", "row-major"]]) {
          const a = randomBsr(r, dtype, blockRows, blockCols, block, 0.5);
          const A = BsrMatrix.fromBsr({ ...a, dtype });
          const [m, k] = transpose ? [a.cols, a.rows] : [a.rows, a.cols];
          const n = 3 + (count % 3);
          const b = random(r, dtype, k * n);
          const B = Tensor.from(b, { rows: k, cols: n, layout: bLayout, dtype });
          const opts = { transpose, alpha: count % 2 ? -0.5 : 1, activation: ["none", "relu", "gelu", "silu"][count % 4] };
          const bias = count % 2 ? random(r, dtype, m) : undefined;
          if (bias) opts.bias = count % 4 === 1 ? Tensor.from(bias, { rows: 1, cols: m, dtype }) : bias;
          const sync = count % 2 === 0;
          const run = (o) => (sync ? matmulSync(A, B, o) : matmul(A, B, o));

          // A new result tensor, in the requested layout.
          const fresh = await run({ ...opts, layout });
          assert.ok(fresh instanceof Tensor);
          assert.equal(fresh.device, "cpu");
          assert.equal(fresh.layout, layout);
          assert.deepEqual(fresh.shape, [m, n]);
          checkMatmul(assert, `${dtype} new tensor ${count}`, { a, transpose, b, bLayout, n, ...opts, bias, layout }, fresh.toArray());

          // Into an existing out: beta scales what it holds; the call returns out itself.
          const c0 = random(r, dtype, m * n);
          const out = Tensor.from(c0, { rows: m, cols: n, layout, dtype });
          assert.equal(await run({ ...opts, beta: 0.25, out }), out);
          checkMatmul(assert, `${dtype} into out ${count}`, { a, transpose, b, bLayout, n, ...opts, bias, beta: 0.25, c0, layout }, out.toArray());

          // A host array B with a tensor out, and a host C copied into a new tensor.
          const host = await run({ ...opts, beta: -1, c: c0, layout });
          checkMatmul(assert, `${dtype} host c ${count}`, { a, transpose, b, bLayout, n, ...opts, bias, beta: -1, c0, layout }, host.toArray());
          const viaArray = sync
            ? matmulSync(A, { data: b, rows: k, cols: n, layout: bLayout }, { ...opts, out })
            : await matmul(A, { data: b, rows: k, cols: n, layout: bLayout }, { ...opts, out });
          checkMatmul(assert, `${dtype} host B ${count}`, { a, transpose, b, bLayout, n, ...opts, bias, layout }, viaArray.toArray());
          count++;
        }
      }
    }
  });
}

test("a loop of 3 multiplies accumulates into one out (beta = 1), sync and async", async () => {
  const r = rng(920);
  for (const [dtype, layout] of [["f32", "row-major"], ["f16", "col-major"], ["bf16", "row-major"]]) {
    const a = randomBsr(r, dtype, 6, 5, [4, 4], 0.5);
    const A = BsrMatrix.fromBsr({ ...a, dtype });
    const n = 7;
    const c0 = random(r, dtype, a.rows * n);
    const out = Tensor.from(c0, { rows: a.rows, cols: n, layout, dtype });
    const bs = [];
    for (let step = 0; step < 3; step++) {
      const b = random(r, dtype, a.cols * n);
      bs.push(b);
      const B = Tensor.from(b, { rows: a.cols, cols: n, dtype });
      const result = step === 1 ? matmulSync(A, B, { beta: 1, out }) : await matmul(A, B, { beta: 1, out });
      assert.equal(result, out);
    }
    checkAccumulated(assert, `${dtype} loop`, { a, transpose: false, bs, bLayout: "row-major", n, c0, layout }, out.toArray());
  }
});

test("concurrent async multiplies: out is claimed until its multiply settles", async () => {
  const r = rng(930);
  const a = randomBsr(r, "f32", 8, 8, [8, 8], 1);
  const A = BsrMatrix.fromBsr(a);
  // nnz 4096 times N = 128 is over the 2^18 multiply-adds that `matmul` computes on the calling
  // thread (ts/inline.ts): each multiply goes to a worker and stays in flight until awaited.
  const n = 128;
  const b1 = random(r, "f32", a.cols * n);
  const b2 = random(r, "f32", a.cols * n);
  const B1 = Tensor.from(b1, { rows: a.cols, cols: n });
  const B2 = Tensor.from(b2, { rows: a.cols, cols: n });
  const out = Tensor.empty({ rows: a.rows, cols: n });
  const other = Tensor.empty({ rows: a.rows, cols: n });

  const first = matmul(A, B1, { out });
  // Submitted in the same tick, so the first is certainly still in flight.
  await assert.rejects(matmul(A, B2, { out }), isError(INVALID, /^out: the tensor is already the output of a multiply still in flight/));
  assert.throws(() => matmulSync(A, B2, { out }), isError(INVALID, /^out: the tensor is already the output of a multiply still in flight/));
  assert.throws(() => out.toArray(), isError(INVALID, /^toArray\(\): the tensor is the output of a multiply still in flight; await/));
  await assert.rejects(matmul(A, out, { out: other }), isError(INVALID, /^B: the tensor is the output of a multiply still in flight/));
  // Reading B meanwhile is fine; writing it is not.
  assert.deepEqual(B1.toArray(), b1);
  await assert.rejects(matmul(A, B2, { out: B1 }), isError(INVALID, /^out: the tensor is read by 1 multiply\(s\) still in flight/));
  // Two multiplies may read the same B at once.
  const second = matmul(A, B1, { out: other });
  assert.equal(await first, out);
  assert.equal(await second, other);
  checkMatmul(assert, "first", { a, transpose: false, b: b1, bLayout: "row-major", n }, out.toArray());
  checkMatmul(assert, "second", { a, transpose: false, b: b1, bLayout: "row-major", n }, other.toArray());

  // Settled: every tensor is free again.
  await matmul(A, B2, { out: B1 });
  checkMatmul(assert, "after", { a, transpose: false, b: b2, bLayout: "row-major", n }, B1.toArray());

  // A multiply that fails in the core releases its claims too (the core's own shape check,
  // reached by calling the addon directly past the TypeScript checks).
  const wrong = Tensor.empty({ rows: a.cols + 8, cols: n });
  const epilogue = { transpose: false, alpha: 1, beta: 0, activation: "none" };
  await assert.rejects(native.matmulInto(A.native, wrong.native, out.native, null, epilogue), /BSRMM_STATUS_INVALID_ARGUMENT: .*B.rows = 72 but op\(A\) = A has 64 columns/);
  assert.equal(matmulSync(A, B2, { out }), out);
});

test("an async multiply keeps its tensors alive when JS drops them", async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const r = rng(940);
  const a = randomBsr(r, "f64", 16, 16, [16, 16], 0.5);
  const A = BsrMatrix.fromBsr(a);
  const n = 64;
  const b = random(r, "f64", a.cols * n);
  // Only the pending multiply holds B and out once this function returns.
  const start = () => matmul(A, Tensor.from(b, { rows: a.cols, cols: n }), { out: Tensor.empty({ rows: a.rows, cols: n, dtype: "f64" }) });
  const pending = start();
  for (let i = 0; i < 3; i++) gc();
  const out = await pending;
  checkMatmul(assert, "after gc", { a, transpose: false, b, bLayout: "row-major", n }, out.toArray());
});

test("tensor errors name the argument and the rule, mostly before the native call", async () => {
  const A = BsrMatrix.fromBsr({ rows: 4, cols: 6, blockSize: 2, rowPtr: [0, 1, 2], colIdx: [0, 2], values: new Float32Array(8).fill(1) });
  const B = Tensor.zeros({ rows: 6, cols: 3 });
  const out = Tensor.zeros({ rows: 4, cols: 3 });
  const reject = (fn, code, pattern) => assert.throws(fn, isError(code, pattern));

  // Construction.
  reject(() => Tensor.from(new Float32Array(5), { rows: 2, cols: 3 }), INVALID, /data has 5 elements, a 2x3 tensor needs 6/);
  reject(() => Tensor.from(new Float64Array(6), { rows: 2, cols: 3, dtype: "f32" }), INVALID, /data must be a Float32Array for dtype f32/);
  reject(() => Tensor.from(new Uint16Array(6), { rows: 2, cols: 3 }), INVALID, /dtype is required/);
  reject(() => Tensor.from([1, 2], { rows: 1, cols: 2 }), INVALID, /data is a plain Array of length 2/);
  reject(() => Tensor.zeros({ rows: -1, cols: 2 }), INVALID, /rows = -1 must be a non-negative integer/);
  reject(() => Tensor.zeros({ rows: 1, cols: 2, layout: "diagonal" }), INVALID, /layout = "diagonal"/);
  reject(() => Tensor.zeros({ rows: 1, cols: 2, dtype: "f8" }), INVALID, /dtype = "f8"/);
  reject(() => Tensor.zeros({ rows: 1, cols: 2, device: "gpu" }), INVALID, /device = "gpu"/);
  reject(() => Tensor.zeros(), INVALID, /options must be an object/);

  // Multiplies.
  reject(() => matmulSync(A, Tensor.zeros({ rows: 6, cols: 3, dtype: "f64" })), UNSUPPORTED, /mixed dtypes are not supported: A is f32, B is a f64 tensor/);
  reject(() => matmulSync(A, B, { out: Tensor.zeros({ rows: 4, cols: 3, dtype: "f16" }) }), UNSUPPORTED, /A is f32, out is a f16 tensor/);
  reject(() => matmulSync(A, Tensor.zeros({ rows: 4, cols: 3 })), INVALID, /B has 4 rows, op\(A\) \(4x6\) has 6 columns/);
  reject(() => matmulSync(A, B, { transpose: true }), INVALID, /B has 6 rows, op\(A\) \(4x6, transposed\) has 4 columns/);
  reject(() => matmulSync(A, B, { out: Tensor.zeros({ rows: 4, cols: 2 }) }), INVALID, /out is 4x2, C = op\(A\) \(4x6\) \* B is 4x3/);
  reject(() => matmulSync(A, B, { out: new Float32Array(12) }), INVALID, /out must be a Tensor, got a Float32Array/);
  reject(() => matmulSync(A, B, { out, c: new Float32Array(12), beta: 1 }), INVALID, /c and out are exclusive/);
  reject(() => matmulSync(A, B, { out, layout: "col-major" }), INVALID, /layout = "col-major" but out is row-major/);
  reject(() => matmulSync(A, B, { beta: 1 }), INVALID, /beta = 1 needs the existing C in options.c \(or an options.out tensor\)/);
  reject(() => matmulSync(A, B, { bias: Tensor.zeros({ rows: 2, cols: 2 }) }), INVALID, /bias is a 2x2 tensor, C has 4 rows: it must be 4x1 or 1x4/);
  reject(() => matmulSync(A, B, { bias: new Float32Array(3) }), INVALID, /bias has 3 elements, C has 4 rows/);
  reject(() => matmulSync(A, B, { activation: "tanh" }), INVALID, /activation = "tanh"/);
  reject(() => matmulSync({}, B), INVALID, /A must be a BsrMatrix, got a object/);
  const square = BsrMatrix.fromBsr({ rows: 2, cols: 2, blockSize: 1, rowPtr: [0, 1, 2], colIdx: [0, 1], values: new Float32Array([1, 2]) });
  const sq = Tensor.zeros({ rows: 2, cols: 2 });
  reject(() => matmulSync(square, sq, { out: sq }), INVALID, /out is also B/);
  const v = Tensor.zeros({ rows: 2, cols: 1 });
  reject(() => matmulSync(square, Tensor.zeros({ rows: 2, cols: 1 }), { out: v, bias: v }), INVALID, /out is also the bias/);
  await assert.rejects(matmul(A, Tensor.zeros({ rows: 6, cols: 3, dtype: "f64" })), isError(UNSUPPORTED, /mixed dtypes/));

  // Device names; without a GPU, a CUDA tensor is NO_DEVICE.
  synchronize("cpu");
  reject(() => synchronize("gpu:0"), INVALID, /device = "gpu:0"/);
  if (bsrmm.cudaDeviceCount() === 0) {
    reject(() => Tensor.zeros({ rows: 2, cols: 2, device: "cuda:0" }), "BSRMM_STATUS_NO_DEVICE", /.+/);
    reject(() => Tensor.from(new Float32Array(4), { rows: 2, cols: 2, device: "cuda:0" }), "BSRMM_STATUS_NO_DEVICE", /.+/);
    reject(() => synchronize("cuda:0"), "BSRMM_STATUS_NO_DEVICE", /.+/);
  }

  // The addon refuses what the TypeScript layer would have caught, without crashing.
  const epilogue = { transpose: false, alpha: 1, beta: 0, activation: "none" };
  const nativeError = (pattern) => (e) => e instanceof Error && pattern.test(e.message);
  assert.throws(() => native.matmulIntoSync(square.native, sq.native, sq.native, null, epilogue), nativeError(/INVALID_ARGUMENT: out is also B/));
  assert.throws(
    () => native.matmulIntoSync(A.native, Tensor.zeros({ rows: 6, cols: 3, dtype: "bf16" }).native, out.native, null, epilogue),
    nativeError(/UNSUPPORTED: mixed dtypes are not supported: A is f32, B is a bf16 tensor/),
  );
  assert.throws(() => native.matmulIntoSync(A.native, B.native, out.native, null, { ...epilogue, activation: "tanh" }), nativeError(/INVALID_ARGUMENT: activation "tanh"/));
  assert.throws(() => native.NativeTensor.fromHost(new Uint8Array(7), 2, 1, "row-major", "f32", "cpu"), nativeError(/values: 7 bytes, a 2x1 f32 tensor needs 8/));
  assert.throws(() => native.NativeTensor.allocateNew(-1, 1, "row-major", "f32", "cpu", true), nativeError(/rows = -1/));
});

test("the col-major tensor B reads element (i, j) at j * rows + i", () => {
  // A is the 2x2 identity: C = B, so a wrong B layout shows as a transposed result.
  const I = BsrMatrix.fromBsr({ rows: 2, cols: 2, blockSize: 1, rowPtr: [0, 1, 2], colIdx: [0, 1], values: new Float64Array([1, 1]) });
  const B = Tensor.from(new Float64Array([1, 2, 3, 4, 5, 6]), { rows: 2, cols: 3, layout: "col-major" });
  const c = matmulSync(I, B).toArray();
  const cAt = at("row-major", 2, 3);
  assert.deepEqual([0, 1].map((i) => [0, 1, 2].map((j) => c[cAt(i, j)])), [[1, 3, 5], [2, 4, 6]]);
});
