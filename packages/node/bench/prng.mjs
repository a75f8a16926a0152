// The counter-based generator of packages/bench/cases/PRNG.md (sections cited as §n), in plain JS.
//
// 64-bit words are held as two unsigned 32-bit halves (hi, lo): BigInt is exact but ~50x slower,
// and a suite draws tens of millions of values. Products modulo 2^64 are built from 16-bit
// pieces so that every intermediate stays an exact double. BigInt appears only where a value is
// computed once (a stream's key) or must be exact beyond 2^53 (tests against vectors.json).

export const STREAM_PATTERN = 1;
export const STREAM_ROW_ORDER = 2;
export const STREAM_A = 3;
export const STREAM_B = 4;
export const STREAM_C = 5;
export const STREAM_BIAS = 6;
export const SET_STRIDE = 16;

const GOLDEN_HI = 0x9e3779b9;
const GOLDEN_LO = 0x7f4a7c15;
const TWO32 = 2 ** 32;

// The result of mul64/mix64/drawAt, returned through these two slots (no allocation per draw).
let outHi = 0;
let outLo = 0;

/** (ah, al) * (bh, bl) modulo 2^64 into (outHi, outLo). */
function mul64(ah, al, bh, bl) {
  const a0 = al & 0xffff;
  const a1 = al >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  outLo = ((mid << 16) | (p00 & 0xffff)) >>> 0;
  outHi = (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(al, bh) + Math.imul(ah, bl)) >>> 0;
}

/** SplitMix64's finaliser (§1) on (hi, lo), into (outHi, outLo). */
function mix(hi, lo) {
  lo = (lo ^ ((lo >>> 30) | (hi << 2))) >>> 0;
  hi = (hi ^ (hi >>> 30)) >>> 0;
  mul64(hi, lo, 0xbf58476d, 0x1ce4e5b9);
  lo = (outLo ^ ((outLo >>> 27) | (outHi << 5))) >>> 0;
  hi = (outHi ^ (outHi >>> 27)) >>> 0;
  mul64(hi, lo, 0x94d049bb, 0x133111eb);
  outLo = (outLo ^ ((outLo >>> 31) | (outHi << 1))) >>> 0;
  outHi = (outHi ^ (outHi >>> 31)) >>> 0;
}

const MASK64 = (1n << 64n) - 1n;

/** mix64 on a BigInt (§1). */
export function mix64(z) {
  mix(Number((z >> 32n) & 0xffffffffn), Number(z & 0xffffffffn));
  return (BigInt(outHi) << 32n) | BigInt(outLo);
}

/** A stream: key(seed, stream) = mix64(mix64(seed) ^ stream) (§2), as halves. */
export function stream(seed, streamId) {
  const s = BigInt(seed);
  const id = BigInt(streamId);
  if (s < 0n || s > MASK64 || id < 0n || id > MASK64) throw new RangeError(`seed ${seed} and stream ${streamId} must be in [0, 2^64)`);
  const key = mix64(mix64(s) ^ id);
  return { hi: Number(key >> 32n), lo: Number(key & 0xffffffffn), key };
}

/** draw(seed, stream, i) for counter `i` (a number below 2^53) into (outHi, outLo). */
function drawAt(s, i) {
  const c = i + 1;
  mul64(GOLDEN_HI, GOLDEN_LO, Math.floor(c / TWO32) >>> 0, c >>> 0);
  const lo = s.lo + outLo;
  mix((s.hi + outHi + (lo >= TWO32 ? 1 : 0)) >>> 0, lo >>> 0);
}

/** The draw at counter `i` as a BigInt (tests; the fast paths below never build one). */
export function draw(s, i) {
  drawAt(s, i);
  return (BigInt(outHi) << 32n) | BigInt(outLo);
}

/** bounded(u, n) = ((u >> 32) * n) >> 32 for the draw at counter i, 1 <= n <= 2^32 (§5). */
export function boundedAt(s, i, n) {
  drawAt(s, i);
  // (u >> 32) * n can reach 2^64: split u >> 32 in 16-bit halves so each product is exact.
  const x = (outHi >>> 16) * n; // < 2^48
  const y = (outHi & 0xffff) * n; // < 2^48
  const q = Math.floor(x / 65536);
  return q + Math.floor(((x - q * 65536) * 65536 + y) / TWO32);
}

/** coin(u, p) = (u >> 11) < floor(p * 2^53) for the draw at counter i (§5). */
export function coinAt(s, i, p) {
  drawAt(s, i);
  return outHi * 2 ** 21 + (outLo >>> 11) < Math.floor(p * 2 ** 53);
}

/**
 * Writes u >> 40 (24-bit integers) of counters start .. start + count - 1 into out[offset ..]:
 * SplitMix64 run sequentially (each counter adds GOLDEN to the state).
 */
export function tops(s, start, count, out, offset = 0) {
  const c = start + 1;
  mul64(GOLDEN_HI, GOLDEN_LO, Math.floor(c / TWO32) >>> 0, c >>> 0);
  let lo = s.lo + outLo;
  let hi = (s.hi + outHi + (lo >= TWO32 ? 1 : 0)) >>> 0;
  lo >>>= 0;
  for (let i = 0; i < count; i++) {
    mix(hi, lo);
    out[offset + i] = outHi >>> 8;
    lo += GOLDEN_LO;
    hi = (hi + GOLDEN_HI + (lo >= TWO32 ? 1 : 0)) >>> 0;
    lo >>>= 0;
  }
}

/** unit(u) = (u >> 40) * 2^-23 - 1 (§4: in [-1, 1), exact in float32) of counters start .., into out[offset ..]. */
export function units(s, start, count, out, offset = 0) {
  tops(s, start, count, out, offset);
  for (let i = offset; i < offset + count; i++) out[i] = out[i] * 2 ** -23 - 1;
}

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** IEEE half bits of a float32 value, round to nearest even, subnormals included (§4). */
export function float16Bits(x) {
  f32[0] = x;
  const b = f32Bits[0];
  const sign = (b >>> 16) & 0x8000;
  const e = ((b >>> 23) & 0xff) - 112; // the half exponent field, if the value is normal there
  const mant = b & 0x7fffff;
  if (e >= 31) return sign | 0x7c00; // beyond the half range (never for |x| < 1)
  if (e >= 1) {
    let half = (e << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++; // a carry into the exponent is right
    return sign | half;
  }
  // A half subnormal: m * 2^-24 with m = the 24-bit significand >> (14 - e), rounded.
  const shift = 14 - e;
  if (shift > 24) return sign; // below half of the smallest subnormal
  const full = mant | 0x800000;
  let m = full >>> shift;
  const rest = full - (m << shift) >>> 0;
  const halfway = 2 ** (shift - 1);
  if (rest > halfway || (rest === halfway && m & 1)) m++;
  return sign | m;
}

/** bfloat16 bits of a float32 value: (b + 0x7FFF + ((b >> 16) & 1)) >> 16, 32-bit unsigned (§4). */
export function bfloat16Bits(x) {
  f32[0] = x;
  const b = f32Bits[0];
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

export function float16Value(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >>> 10) & 0x1f;
  const m = bits & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

export function bfloat16Value(bits) {
  f32Bits[0] = bits << 16;
  return f32[0];
}
