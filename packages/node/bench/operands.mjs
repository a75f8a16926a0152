// The operands of one case regenerated from its seed (PRNG.md §3): the pattern, A's block values
// and B per operand set, in the case dtype's storage (what bsrmm is given) and as float64 (what
// the reference multiplies), and the float64 reference of op(A) @ B on chosen rows.
import { storedShape } from "./cases.mjs";
import { generate } from "./patterns.mjs";
import { SET_STRIDE, STREAM_A, STREAM_B, bfloat16Bits, bfloat16Value, float16Bits, float16Value, stream, units } from "./prng.mjs";

/** Rows of op(A) checked when the full reference costs too much (as the Python runner). */
export const SAMPLED_ROWS = 1024;
/** Full reference up to 2^32 flops of sparse float64 product in JS (a few seconds on one core). */
export const FULL_REFERENCE_FLOPS = 2 ** 32;

const STORAGE = {
  float32: { name: "f32", array: Float32Array, bits: (x) => x, value: (x) => x, nan: NaN },
  float64: { name: "f64", array: Float64Array, bits: (x) => x, value: (x) => x, nan: NaN },
  float16: { name: "f16", array: Uint16Array, bits: float16Bits, value: float16Value, nan: 0x7e00 },
  bfloat16: { name: "bf16", array: Uint16Array, bits: bfloat16Bits, value: bfloat16Value, nan: 0x7fc0 },
};

/** The bsrmm dtype name and storage conversions of a case dtype. */
export const storage = (dtype) => STORAGE[dtype];

/** Rounds exact unit values in place to `dtype` and returns its storage array of them (§4). */
function toStorage(values, dtype) {
  const s = STORAGE[dtype];
  const out = new s.array(values.length);
  for (let i = 0; i < values.length; i++) {
    out[i] = s.bits(values[i]);
    values[i] = s.value(out[i]);
  }
  return out;
}

/** A's block values of one set: block after block in storage order, row-major inside (§3). */
function blockValues(c, pattern, set) {
  const [bh, bw] = c.block;
  const cols = storedShape(c)[1];
  const s = stream(c.seed, STREAM_A + SET_STRIDE * set);
  const values = new Float64Array(pattern.indices.length * bh * bw);
  const R = pattern.indptr.length - 1;
  for (let r = 0; r < R; r++) {
    for (let b = pattern.indptr[r]; b < pattern.indptr[r + 1]; b++) {
      for (let y = 0; y < bh; y++) units(s, (r * bh + y) * cols + pattern.indices[b] * bw, bw, values, (b * bh + y) * bw);
    }
  }
  return { stored: toStorage(values, c.dtype), values };
}

/** B (k x n, element (i, j) from counter i * n + j) of one set, stored in the case's layout. */
function bValues(c, set) {
  const { k, n } = c;
  const values = new Float64Array(k * n);
  units(stream(c.seed, STREAM_B + SET_STRIDE * set), 0, k * n, values);
  const rowMajor = toStorage(values, c.dtype);
  if (c.layout_b === "row") return { stored: rowMajor, values };
  const stored = new rowMajor.constructor(k * n);
  for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) stored[j * k + i] = rowMajor[i * n + j];
  return { stored, values };
}

/** The case's block pattern (§6) on the stored A's block grid. */
export function patternOf(c) {
  const [rows, cols] = storedShape(c);
  return generate(c.pattern, rows / c.block[0], cols / c.block[1], c.seed, c.block);
}

/** A values + indices + B + C of one set in the case dtype: what must leave the cache. */
export function bytesPerSet(c, pattern) {
  const [bh, bw] = c.block;
  const item = c.dtype === "float64" ? 8 : c.dtype === "float32" ? 4 : 2;
  const nnzb = pattern.indices.length;
  return item * (nnzb * bh * bw + c.k * c.n + c.m * c.n) + 4 * (nnzb + pattern.indptr.length);
}

/**
 * The case's `sets` operand sets on `pattern`. `bCache` (a Map kept by the caller) reuses B across
 * cases with the same (seed, k, n, dtype, layout, set): a suite's cases share a few Bs.
 */
export function build(c, sets, bCache, pattern = patternOf(c)) {
  const out = { case: c, pattern, sets: [] };
  for (let set = 0; set < sets; set++) {
    const key = JSON.stringify([c.seed, c.k, c.n, c.dtype, c.layout_b, set]);
    let b = bCache?.get(key);
    if (b === undefined) {
      b = bValues(c, set);
      if (bCache) {
        if (bCache.size >= 4) bCache.clear(); // bounded: the big Bs are hundreds of MB
        bCache.set(key, b);
      }
    }
    out.sets.push({ a: blockValues(c, pattern, set), b });
  }
  return out;
}

/** What the result JSON says about the operands (RESULTS.md, "operands"). */
export function summary(ops) {
  const c = ops.case;
  const [bh, bw] = c.block;
  const { indptr, indices } = ops.pattern;
  const R = indptr.length - 1;
  const perRow = Array.from({ length: R }, (_, r) => indptr[r + 1] - indptr[r]);
  const nnzb = indices.length;
  return {
    nnzb,
    density: nnzb / (R * (storedShape(c)[1] / bw)),
    row_blocks_min: Math.min(...perRow),
    row_blocks_max: Math.max(...perRow),
    flops: 2 * nnzb * bh * bw * c.n,
    dense_flops: 2 * c.m * c.k * c.n,
    bytes_per_set: bytesPerSet(c, ops.pattern),
    rotation_sets: ops.sets.length,
  };
}

/** Operand sets to cycle through on a GPU so a case that fits in L2 is not timed from it (as Python). */
export function rotationSets(bytesPerSet, cacheBytes, maxSets = 8) {
  if (cacheBytes <= 0 || bytesPerSet >= 2 * cacheBytes) return 1;
  return Math.min(maxSets, Math.max(2, Math.ceil((3 * cacheBytes) / bytesPerSet)));
}

/**
 * Rows of op(A) checked against float64: all when the product costs at most FULL_REFERENCE_FLOPS,
 * else whole op-block-rows without randomness: first, last, longest, shortest, then evenly spaced
 * ones, at least SAMPLED_ROWS rows (the Python runner's rule, with a limit for JS speed).
 */
export function referenceRows(ops) {
  const c = ops.case;
  const [bh, bw] = c.block;
  const { indptr, indices } = ops.pattern;
  if (2 * indices.length * bh * bw * c.n <= FULL_REFERENCE_FLOPS) return Int32Array.from({ length: c.m }, (_, i) => i);
  const height = c.transpose_a ? bw : bh;
  const groups = c.m / height;
  const counts = new Int32Array(groups);
  if (c.transpose_a) for (const col of indices) counts[col]++;
  else for (let r = 0; r < groups; r++) counts[r] = indptr[r + 1] - indptr[r];
  const first = (better) => counts.reduce((best, v, i) => (better(v, counts[best]) ? i : best), 0);
  const picked = new Set([0, groups - 1, first((v, b) => v > b), first((v, b) => v < b)]);
  const want = Math.min(groups, Math.max(1, Math.ceil(SAMPLED_ROWS / height)));
  for (let i = 0; i < want; i++) picked.add(want === 1 ? 0 : Math.trunc((i * (groups - 1)) / (want - 1)));
  const rows = [];
  for (const g of [...picked].sort((x, y) => x - y)) for (let y = 0; y < height; y++) rows.push(g * height + y);
  return Int32Array.from(rows);
}

/** float64 op(A)[rows] @ B of set 0: rows.length x n, row-major. */
export function reference(ops, rows) {
  const c = ops.case;
  const { n } = c;
  const [bh, bw] = c.block;
  const { indptr, indices } = ops.pattern;
  const { a, b } = ops.sets[0];
  const slot = new Int32Array(c.m).fill(-1); // op(A) row -> its row in the reference
  rows.forEach((row, i) => (slot[row] = i));
  const ref = new Float64Array(rows.length * n);
  const B = b.values;
  const R = indptr.length - 1;
  for (let r = 0; r < R; r++) {
    for (let blk = indptr[r]; blk < indptr[r + 1]; blk++) {
      const col = indices[blk];
      for (let y = 0; y < bh; y++) {
        for (let x = 0; x < bw; x++) {
          // A[r*bh + y][col*bw + x] is op(A)[r*bh + y][col*bw + x], or [col*bw + x][r*bh + y] transposed.
          const opRow = c.transpose_a ? col * bw + x : r * bh + y;
          const opCol = c.transpose_a ? r * bh + y : col * bw + x;
          const target = slot[opRow];
          if (target < 0) continue;
          const v = a.values[(blk * bh + y) * bw + x];
          const out = target * n;
          const from = opCol * n;
          for (let j = 0; j < n; j++) ref[out + j] += v * B[from + j];
        }
      }
    }
  }
  return ref;
}

/**
 * Checks an output (m x n storage array in layout_c): NaN/Inf anywhere (the poison left in an
 * element never written shows here), then ||out - ref||_F / ||ref||_F over the checked rows.
 */
export function check(ops, out, rows, ref) {
  const c = ops.case;
  const { m, n } = c;
  const value = STORAGE[c.dtype].value;
  const at = c.layout_c === "row" ? (i, j) => i * n + j : (i, j) => j * m + i;
  let nonFinite = 0;
  for (let x = 0; x < out.length; x++) if (!Number.isFinite(value(out[x]))) nonFinite++;
  if (nonFinite > 0) return { error: Infinity, non_finite: nonFinite };
  let diff = 0;
  let norm = 0;
  rows.forEach((row, i) => {
    for (let j = 0; j < n; j++) {
      const want = ref[i * n + j];
      const d = value(out[at(row, j)]) - want;
      diff += d * d;
      norm += want * want;
    }
  });
  return { error: norm > 0 ? Math.sqrt(diff) / Math.sqrt(norm) : Math.sqrt(diff), non_finite: 0 };
}
