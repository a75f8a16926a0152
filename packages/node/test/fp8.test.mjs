// fp8 (issue 27): A's values and B in float8_e4m3 / float8_e5m2 with fp32 scales, C in f32 /
// f16 / bf16, every element against float64 of the dequantised operands (tight: the CPU
// reference is exact in f64, so C's rounding and the summation order remain) and of the
// unquantised ones (within the bound fp8 rounding of both operands allows); the refusals.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BsrMatrix, BsrmmError, decodeFp8, encodeFp8, matmul, matmulSync } from "../dist/esm/index.js";
import { fromBF16, fromF16, randomBsr, rng, toBF16, toF16 } from "./helpers.mjs";

const MAX_FINITE = { float8_e4m3: 448, float8_e5m2: 57344 };
const UNIT_ROUNDOFF = { float8_e4m3: 2 ** -4, float8_e5m2: 2 ** -3 };
const OUT = {
  f32: { u: 2 ** -24, read: (c) => Array.from(c), make: (v) => Float32Array.from(v) },
  f16: { u: 2 ** -11, read: (c) => Array.from(c, fromF16), make: (v) => Uint16Array.from(v, toF16) },
  bf16: { u: 2 ** -8, read: (c) => Array.from(c, fromBF16), make: (v) => Uint16Array.from(v, toBF16) },
};

/** Scales mapping each group's largest magnitude onto the format's largest finite value. */
function scalesFor(groups, dtype) {
  return Float32Array.from(groups, (g) => {
    const amax = g.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    return amax === 0 ? 1 : amax / MAX_FINITE[dtype];
  });
}

/** A random matrix quantised with scales of `kind`: the arrays, scales and f64 dense forms. */
function quantiseA(r, dtype, kind) {
  const exact = randomBsr(r, "f64", 5, 4, [4, 3], 0.5);
  const blockLen = 12;
  const nnzb = exact.colIdx.length;
  const blockRow = [];
  for (let row = 0; row < 5; row++) for (let k = exact.rowPtr[row]; k < exact.rowPtr[row + 1]; k++) blockRow.push(row);
  const groupOf = (k) => (kind === "per-tensor" ? 0 : kind === "per-block" ? k : blockRow[k]);
  const groups = Array.from({ length: kind === "per-tensor" ? 1 : kind === "per-block" ? nnzb : 5 }, () => []);
  for (let e = 0; e < exact.values.length; e++) groups[groupOf(Math.floor(e / blockLen))].push(exact.values[e]);
  const scales = scalesFor(groups, dtype);
  const scaleOf = (e) => scales[groupOf(Math.floor(e / blockLen))];
  const values = encodeFp8(Float64Array.from(exact.values, (v, e) => v / scaleOf(e)), dtype);
  const decoded = decodeFp8(values, dtype);
  const dense = (vals) => {
    const out = new Float64Array(exact.rows * exact.cols);
    for (let row = 0; row < 5; row++) {
      for (let k = exact.rowPtr[row]; k < exact.rowPtr[row + 1]; k++) {
        for (let i = 0; i < 4; i++) for (let j = 0; j < 3; j++) out[(row * 4 + i) * exact.cols + exact.colIdx[k] * 3 + j] = vals[k * blockLen + i * 3 + j];
      }
    }
    return out;
  };
  return {
    arrays: { rows: exact.rows, cols: exact.cols, blockSize: [4, 3], rowPtr: exact.rowPtr, colIdx: exact.colIdx, values, dtype },
    scales: kind === "per-tensor" ? scales[0] : { kind, values: scales },
    dequantised: dense(Array.from(decoded, (v, e) => v * scaleOf(e))),
    original: dense(exact.values),
  };
}

/** B (k x n, row-major) quantised per tensor or per column. */
function quantiseB(r, dtype, k, n, perColumn) {
  const original = Array.from({ length: k * n }, () => r.value() * 3);
  const col = (e) => (perColumn ? e % n : 0);
  const groups = perColumn ? Array.from({ length: n }, (_, j) => original.filter((_, e) => e % n === j)) : [original];
  const scales = scalesFor(groups, dtype);
  const values = encodeFp8(Float64Array.from(original, (v, e) => v / scales[col(e)]), dtype);
  const dequantised = Array.from(decodeFp8(values, dtype), (v, e) => v * scales[col(e)]);
  return { values, bScales: perColumn ? scales : scales[0], dequantised, original };
}

function product(a, b, m, k, n) {
  const values = new Float64Array(m * n);
  const magnitude = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      for (let p = 0; p < k; p++) {
        const prod = a[i * k + p] * b[p * n + j];
        values[i * n + j] += prod;
        magnitude[i * n + j] += Math.abs(prod);
      }
    }
  }
  return { values, magnitude };
}

function checkCase(aDtype, bDtype, outDtype, aKind, perColumn, seed, sync) {
  const what = `${aDtype} x ${bDtype} -> ${outDtype}, A ${aKind}, B ${perColumn ? "per-column" : "per-tensor"}`;
  const r = rng(seed);
  const qa = quantiseA(r, aDtype, aKind);
  const [m, k, n] = [qa.arrays.rows, qa.arrays.cols, 7];
  const qb = quantiseB(r, bDtype, k, n, perColumn);
  const A = BsrMatrix.fromBsr({ ...qa.arrays, scales: qa.scales });
  assert.equal(A.dtype, aDtype);
  const options = { bScales: qb.bScales, bDtype, outDtype };
  const run = sync ? matmulSync(A, { data: qb.values, rows: k, cols: n }, options) : null;
  const check = (c) => {
    const got = OUT[outDtype].read(c);
    const exact = product(qa.dequantised, qb.dequantised, m, k, n);
    const unq = product(qa.original, qb.original, m, k, n);
    const fp8 = UNIT_ROUNDOFF[aDtype] + UNIT_ROUNDOFF[bDtype] + UNIT_ROUNDOFF[aDtype] * UNIT_ROUNDOFF[bDtype];
    for (let e = 0; e < m * n; e++) {
      const tight = OUT[outDtype].u * Math.abs(exact.values[e]) + (k + 2) * 2 ** -24 * exact.magnitude[e];
      assert.ok(Math.abs(got[e] - exact.values[e]) <= tight, `${what}: C[${e}] = ${got[e]}, dequantised ${exact.values[e]} (bound ${tight})`);
      const loose = tight + fp8 * unq.magnitude[e] + OUT[outDtype].u * Math.abs(got[e] - unq.values[e]);
      assert.ok(Math.abs(got[e] - unq.values[e]) <= loose, `${what}: C[${e}] = ${got[e]}, unquantised ${unq.values[e]} (bound ${loose})`);
    }
  };
  if (sync) return check(run);
  return matmul(A, qb.values, options).then(check);
}

for (const [aDtype, bDtype] of [["float8_e4m3", "float8_e4m3"], ["float8_e4m3", "float8_e5m2"], ["float8_e5m2", "float8_e4m3"]]) {
  test(`${aDtype} x ${bDtype}: every scale kind and output dtype against float64`, async () => {
    let seed = aDtype.length * 100 + bDtype.charCodeAt(9);
    for (const outDtype of ["f32", "f16", "bf16"]) {
      for (const aKind of ["per-tensor", "per-block", "per-block-row"]) {
        for (const perColumn of [false, true]) {
          seed += 1;
          await checkCase(aDtype, bDtype, outDtype, aKind, perColumn, seed, seed % 2 === 0);
        }
      }
    }
  });
}

test("transposed fp8 A: each block keeps its scale", () => {
  let seed = 900;
  for (const aKind of ["per-tensor", "per-block", "per-block-row"]) {
    const r = rng(++seed);
    const qa = quantiseA(r, "float8_e4m3", aKind);
    const [m, k, n] = [qa.arrays.rows, qa.arrays.cols, 5];
    const qb = quantiseB(r, "float8_e5m2", m, n, true);
    const A = BsrMatrix.fromBsr({ ...qa.arrays, scales: qa.scales });
    const c = matmulSync(A, { data: qb.values, rows: m, cols: n }, { bScales: qb.bScales, bDtype: "float8_e5m2", transpose: true });
    const at = Float64Array.from({ length: k * m }, (_, e) => qa.dequantised[(e % m) * k + Math.floor(e / m)]);
    const exact = product(at, qb.dequantised, k, m, n);
    for (let e = 0; e < k * n; e++) {
      const bound = 2 ** -24 * Math.abs(exact.values[e]) + (m + 2) * 2 ** -24 * exact.magnitude[e];
      assert.ok(Math.abs(c[e] - exact.values[e]) <= bound, `${aKind}: C[${e}] = ${c[e]}, dequantised ${exact.values[e]}`);
    }
  }
});

test("encodeFp8 rounds to nearest even and saturates; decodeFp8 is exact", () => {
  assert.deepEqual(Array.from(decodeFp8(encodeFp8([1e9, -1e9, 1 + 2 ** -4, 0.5], "float8_e4m3"), "float8_e4m3")), [448, -448, 1, 0.5]);
  assert.deepEqual(Array.from(decodeFp8(encodeFp8([1e9, 1 + 2 ** -3, 3], "float8_e5m2"), "float8_e5m2")), [57344, 1, 3]);
});

test("scales export, follow sorted blocks, and the epilogue applies", () => {
  const values = encodeFp8([1, 2, 3, 4, 5, 6], "float8_e4m3");
  const A = BsrMatrix.fromBsr({
    rows: 1, cols: 6, blockSize: [1, 2], rowPtr: [0, 3], colIdx: [2, 0, 1], values, dtype: "float8_e4m3",
    scales: { kind: "per-block", values: Float32Array.of(0.5, 2, 4) }, sortIndices: true,
  });
  assert.deepEqual(A.scales(), { kind: "per-block", values: Float32Array.of(2, 4, 0.5) });
  const parts = A.export();
  assert.ok(parts.values instanceof Uint8Array);
  assert.deepEqual(Array.from(decodeFp8(parts.values, "float8_e4m3")), [3, 4, 5, 6, 1, 2]);
  // A = [6 8 20 24 0.5 1] (dequantised); B = 1 everywhere (6 x 1), scale 0.5; C = 0.5 * 59.5.
  const b = encodeFp8(new Array(6).fill(1), "float8_e5m2");
  const c = matmulSync(A, b, { bScales: 0.5, bDtype: "float8_e5m2", alpha: 2, beta: 1, c: Float32Array.of(1), bias: Float32Array.of(-0.5), activation: "relu" });
  assert.deepEqual(Array.from(c), [2 * 0.5 * 59.5 + 1 - 0.5]);
});

function code(fn) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof BsrmmError, `${e}`);
    return e.code;
  }
  assert.fail("bad input must throw");
}

test("bad fp8 input throws BsrmmErrors with codes", async () => {
  const values = encodeFp8(new Array(8).fill(1), "float8_e4m3");
  const base = { rows: 4, cols: 4, blockSize: 2, rowPtr: [0, 1, 2], colIdx: [0, 1], values, dtype: "float8_e4m3" };
  assert.equal(code(() => BsrMatrix.fromBsr(base)), "BSRMM_STATUS_INVALID_ARGUMENT", "no scales");
  assert.equal(code(() => BsrMatrix.fromBsr({ ...base, scales: { kind: "per-block", values: Float32Array.of(1) } })), "BSRMM_STATUS_INVALID_ARGUMENT");
  assert.equal(code(() => BsrMatrix.fromBsr({ ...base, scales: NaN })), "BSRMM_STATUS_INVALID_ARGUMENT");
  assert.equal(code(() => BsrMatrix.fromBsr({ ...base, scales: { kind: "per-column", values: Float32Array.of(1) } })), "BSRMM_STATUS_INVALID_ARGUMENT");
  assert.equal(code(() => BsrMatrix.fromBsr({ ...base, values: new Float32Array(8), scales: 1 })), "BSRMM_STATUS_INVALID_ARGUMENT");
  assert.equal(code(() => BsrMatrix.fromBsr({ ...base, dtype: "f32", values: new Float32Array(8), scales: 1 })), "BSRMM_STATUS_INVALID_ARGUMENT");
  assert.equal(code(() => encodeFp8([1], "float8_e3m4")), "BSRMM_STATUS_INVALID_ARGUMENT");

  const A = BsrMatrix.fromBsr({ ...base, scales: 1 });
  const b = encodeFp8(new Array(12).fill(1), "float8_e4m3");
  assert.equal(code(() => A.toDense()), "BSRMM_STATUS_UNSUPPORTED");
  assert.equal(code(() => matmulSync(A, b, {})), "BSRMM_STATUS_INVALID_ARGUMENT", "no bScales");
  assert.equal(code(() => matmulSync(A, b, { bScales: Float32Array.of(1, 1) })), "BSRMM_STATUS_INVALID_ARGUMENT", "per-column, one short");
  assert.equal(code(() => matmulSync(A, b, { bScales: "1" })), "BSRMM_STATUS_INVALID_ARGUMENT");
  assert.equal(code(() => matmulSync(A, b, { bScales: 1, outDtype: "f64" })), "BSRMM_STATUS_UNSUPPORTED", "C in f64");
  assert.equal(code(() => matmulSync(A, new Float32Array(12), { bScales: 1 })), "BSRMM_STATUS_UNSUPPORTED", "an f32 B");
  await assert.rejects(matmul(A, b, { bScales: Infinity }), (e) => e instanceof BsrmmError && e.code === "BSRMM_STATUS_INVALID_ARGUMENT");
  const plain = BsrMatrix.fromBsr({ ...base, dtype: "f32", values: new Float32Array(8).fill(1) });
  assert.equal(code(() => plain.scales()), "BSRMM_STATUS_INVALID_ARGUMENT");
  assert.equal(code(() => matmulSync(plain, new Float32Array(12), { bScales: 1 })), "BSRMM_STATUS_INVALID_ARGUMENT");
});
