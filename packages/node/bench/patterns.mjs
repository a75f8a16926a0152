// The block-sparsity patterns of packages/bench/cases/PRNG.md §6, one function per kind. Each
// returns BSR structure over a block grid: indptr (R + 1 entries) and indices (column indices,
// ascending within each block row), as Int32Arrays (what BsrMatrix.fromBsr takes).
import { STREAM_A, STREAM_PATTERN, STREAM_ROW_ORDER, boundedAt, coinAt, stream, tops } from "./prng.mjs";

export const PATTERN_KINDS = ["uniform", "bernoulli", "power_law", "banded", "causal", "block_diagonal", "topk"];

/** count(x, lo, hi) = min(max(floor(x + 0.5), lo), hi) (§6). */
export function count(x, lo, hi) {
  return Math.min(Math.max(Math.floor(x + 0.5), lo), hi);
}

/** The pattern `spec` ({kind, ...params}) of an R x C block grid; topk needs the block shape. */
export function generate(spec, R, C, seed, blockShape) {
  if (!(R >= 1 && C >= 1)) throw new Error(`block grid must be at least 1 x 1, got ${R} x ${C}`);
  switch (spec.kind) {
    case "uniform":
      return columnsPerRow(new Array(R).fill(count(density(spec) * C, 1, C)), C, seed);
    case "bernoulli":
      return fromMask(R, C, (r, c, s) => coinAt(s, r * C + c, density(spec)), stream(seed, STREAM_PATTERN));
    case "power_law":
      return columnsPerRow(powerLawCounts(R, C, density(spec), alpha(spec), seed), C, seed);
    case "banded":
      return banded(R, C, nonNegativeInt(spec, "lower"), nonNegativeInt(spec, "upper"));
    case "causal":
      return banded(R, C, spec.window === undefined ? C : positiveInt(spec, "window") - 1, 0);
    case "block_diagonal": {
      const g = positiveInt(spec, "groups");
      if (g > Math.min(R, C)) throw new Error(`pattern.groups = ${g} exceeds the block grid ${R} x ${C}`);
      return fromMask(R, C, (r, c) => Math.floor((r * g) / R) === Math.floor((c * g) / C));
    }
    case "topk":
      return topk(R, C, blockShape, density(spec), seed);
    default:
      throw new Error(`pattern.kind must be one of ${PATTERN_KINDS.join(", ")}; got ${JSON.stringify(spec.kind)}`);
  }
}

/** Row r keeps counts[r] columns: a partial Fisher-Yates shuffle of 0..C-1 (§6.1 steps 2-3). */
function columnsPerRow(counts, C, seed) {
  const s = stream(seed, STREAM_PATTERN);
  const indptr = new Int32Array(counts.length + 1);
  counts.forEach((k, r) => (indptr[r + 1] = indptr[r] + k));
  const indices = new Int32Array(indptr[counts.length]);
  const perm = new Int32Array(C);
  counts.forEach((k, r) => {
    for (let j = 0; j < C; j++) perm[j] = j;
    for (let j = 0; j < k; j++) {
      const t = j + boundedAt(s, r * C + j, C - j);
      [perm[j], perm[t]] = [perm[t], perm[j]];
    }
    indices.set(perm.subarray(0, k).sort(), indptr[r]);
  });
  return { indptr, indices };
}

/** W_i = floor(2^32 / (i + 1)^alpha), the power from correctly rounded steps only (§6.3 step 2). */
export function powerLawWeights(R, alpha) {
  const whole = Math.floor(Math.round(alpha * 2) / 2);
  const half = Math.round(alpha * 2) % 2 === 1;
  return Array.from({ length: R }, (_, i) => {
    const x = i + 1;
    let p = 1;
    for (let w = 0; w < whole; w++) p *= x;
    if (half) p *= Math.sqrt(x);
    return Math.floor(2 ** 32 / p);
  });
}

/** Largest-remainder split of `total` by `weights`, none above `cap` (§6.3 step 3; BigInt: exact). */
export function apportion(total, weights, cap) {
  const n = weights.length;
  if (total > n * cap) throw new Error(`cannot place ${total} blocks in ${n} rows of at most ${cap}`);
  const W = weights.map(BigInt);
  const counts = new Array(n).fill(0);
  const capped = new Array(n).fill(false);
  let remaining = BigInt(total);
  while (remaining > 0n) {
    let active = [...Array(n).keys()].filter((i) => !capped[i] && W[i] > 0n);
    let w = W;
    if (active.length === 0) {
      active = [...Array(n).keys()].filter((i) => !capped[i]);
      w = new Array(n).fill(1n);
    }
    const S = active.reduce((sum, i) => sum + w[i], 0n);
    const quota = new Map(active.map((i) => [i, (remaining * w[i]) / S]));
    const over = active.filter((i) => quota.get(i) >= BigInt(cap));
    if (over.length > 0) {
      for (const i of over) {
        counts[i] = cap;
        capped[i] = true;
      }
      remaining -= BigInt(cap * over.length);
      continue;
    }
    for (const i of active) counts[i] = Number(quota.get(i));
    let left = Number(remaining - [...quota.values()].reduce((a, b) => a + b, 0n));
    const rest = (i) => (remaining * w[i]) % S;
    const byRemainder = [...active].sort((i, j) => (rest(i) === rest(j) ? i - j : rest(i) > rest(j) ? -1 : 1));
    for (const i of byRemainder) {
      if (left-- <= 0) break;
      counts[i] += 1;
    }
    remaining = 0n;
  }
  return counts;
}

/** Blocks per block row: the apportioned counts by rank, ranks shuffled onto rows (§6.3). */
function powerLawCounts(R, C, d, a, seed) {
  const k = count(d * C, 1, C);
  const total = k * R;
  if (total >= 2 ** 31) throw new Error(`power_law needs fewer than 2^31 blocks, got ${total}`);
  const byRank = apportion(total, powerLawWeights(R, a), C);
  const s = stream(seed, STREAM_ROW_ORDER);
  const perm = Array.from({ length: R }, (_, i) => i);
  for (let j = 0; j < R - 1; j++) {
    const t = j + boundedAt(s, j, R - j);
    [perm[j], perm[t]] = [perm[t], perm[j]];
  }
  const counts = new Array(R).fill(0);
  perm.forEach((row, rank) => (counts[row] = byRank[rank]));
  return counts;
}

function banded(R, C, lower, upper) {
  return fromMask(R, C, (r, c) => c - r >= -lower && c - r <= upper);
}

/** The n blocks of A's dense value stream with the largest L1 norm, ties to the lower index (§6.7). */
function topk(R, C, [bh, bw], d, seed) {
  const s = stream(seed, STREAM_A);
  const cols = C * bw;
  const scores = new Float64Array(R * C); // integers below 2^53
  const row = new Float64Array(cols);
  for (let i = 0; i < R * bh; i++) {
    tops(s, i * cols, cols, row);
    const blockRow = Math.floor(i / bh) * C;
    for (let j = 0; j < cols; j++) scores[blockRow + Math.floor(j / bw)] += Math.abs(row[j] - 2 ** 23);
  }
  const total = R * C;
  const n = count(d * total, 1, total);
  const order = Array.from({ length: total }, (_, i) => i).sort((x, y) => scores[y] - scores[x] || x - y);
  const keep = new Uint8Array(total);
  for (const i of order.slice(0, n)) keep[i] = 1;
  return fromMask(R, C, (r, c) => keep[r * C + c] === 1);
}

function fromMask(R, C, kept, s) {
  const indptr = new Int32Array(R + 1);
  const indices = [];
  for (let r = 0; r < R; r++) {
    for (let c = 0; c < C; c++) if (kept(r, c, s)) indices.push(c);
    indptr[r + 1] = indices.length;
  }
  return { indptr, indices: Int32Array.from(indices) };
}

function density(spec) {
  const d = spec.density;
  if (typeof d !== "number" || !(d > 0 && d <= 1)) throw new Error(`pattern.density must be a number in (0, 1], got ${JSON.stringify(d)}`);
  return d;
}

function alpha(spec) {
  const a = spec.alpha ?? 1;
  if (typeof a !== "number" || !(a > 0) || a * 2 !== Math.round(a * 2)) {
    throw new Error(`pattern.alpha must be a positive multiple of 0.5, got ${JSON.stringify(a)}`);
  }
  return a;
}

function nonNegativeInt(spec, name) {
  const v = spec[name];
  if (!Number.isInteger(v) || v < 0) throw new Error(`pattern.${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return v;
}

function positiveInt(spec, name) {
  const v = spec[name];
  if (!Number.isInteger(v) || v < 1) throw new Error(`pattern.${name} must be a positive integer, got ${JSON.stringify(v)}`);
  return v;
}
