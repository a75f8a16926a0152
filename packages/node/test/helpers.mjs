// Test helpers: a seeded PRNG, half/bfloat16 bit conversions, random BSR operands and a float64
// reference multiply.

/** Mulberry32: a small seeded 32-bit generator. */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    unit: next,
    /** Uniform in [-1, 1), away from zero (a zero would hide a skipped element). */
    value() {
      for (;;) {
        const v = next() * 2 - 1;
        if (Math.abs(v) > 1e-3) return v;
      }
    },
  };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float -> IEEE half bits, round to nearest even (normal and subnormal range). */
export function toF16(x) {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00;
  if (a < 2 ** -24 / 2) return sign;
  let e = Math.floor(Math.log2(a));
  if (e < -14) e = -14; // subnormal: fixed exponent
  let m = a / 2 ** e; // in [1, 2) for normals, < 1 for subnormals
  let mant = m * 1024;
  let r = Math.round(mant);
  if (Math.abs(mant - Math.trunc(mant) - 0.5) < 1e-12 && r % 2 === 1) r -= 1; // ties to even
  if (r === 2048) {
    r = 1024;
    e += 1;
  }
  if (r < 1024) return sign | r; // subnormal (e == -14)
  return sign | ((e + 15) << 10) | (r - 1024);
}

export function fromF16(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** float -> bfloat16 bits, round to nearest even. */
export function toBF16(x) {
  f32[0] = x;
  const bits = u32[0];
  if (Number.isNaN(x)) return 0x7fc0;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

export function fromBF16(bits) {
  u32[0] = bits << 16;
  return f32[0];
}

/** Per-dtype array construction from doubles, and reading elements back as doubles. */
export const DTYPES = {
  f32: { make: (xs) => Float32Array.from(xs), read: (a, i) => a[i], tol: 1e-5 },
  f64: { make: (xs) => Float64Array.from(xs), read: (a, i) => a[i], tol: 1e-12 },
  f16: { make: (xs) => Uint16Array.from(xs, toF16), read: (a, i) => (a instanceof Uint16Array ? fromF16(a[i]) : a[i]), tol: 2e-3 },
  bf16: { make: (xs) => Uint16Array.from(xs, toBF16), read: (a, i) => fromBF16(a[i]), tol: 1.6e-2 },
};

/** A random BSR matrix: arrays, values in `dtype`, and the dense float64 matrix they make. */
export function randomBsr(r, dtype, blockRows, blockCols, [bh, bw], density) {
  const rowPtr = [0];
  const colIdx = [];
  for (let i = 0; i < blockRows; i++) {
    for (let j = 0; j < blockCols; j++) if (r.unit() < density) colIdx.push(j);
    rowPtr.push(colIdx.length);
  }
  const values = DTYPES[dtype].make(Array.from({ length: colIdx.length * bh * bw }, () => r.value()));
  const rows = blockRows * bh;
  const cols = blockCols * bw;
  const dense = new Float64Array(rows * cols);
  for (let br = 0; br < blockRows; br++) {
    for (let k = rowPtr[br]; k < rowPtr[br + 1]; k++) {
      for (let i = 0; i < bh; i++) {
        for (let j = 0; j < bw; j++) {
          dense[(br * bh + i) * cols + colIdx[k] * bw + j] = DTYPES[dtype].read(values, (k * bh + i) * bw + j);
        }
      }
    }
  }
  return { rows, cols, blockSize: [bh, bw], rowPtr: Int32Array.from(rowPtr), colIdx: Int32Array.from(colIdx), values, dense, dtype };
}

export function activate(x, activation) {
  switch (activation) {
    case "relu":
      return Math.max(x, 0);
    case "gelu":
      return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
    case "silu":
      return x / (1 + Math.exp(-x));
    default:
      return x;
  }
}

/** Element (i, j) of a `rows x cols` array in `layout`. */
export const at = (layout, rows, cols) => (i, j) => (layout === "col-major" ? j * rows + i : i * cols + j);

/**
 * op(A) * B in float64 (m x n, row-major), and the sum of |terms| of each element (the scale of
 * its rounding error).
 */
export function product64({ a, transpose, b, bLayout, n }) {
  const { read } = DTYPES[a.dtype];
  const [m, k] = transpose ? [a.cols, a.rows] : [a.rows, a.cols];
  const A = (i, p) => (transpose ? a.dense[p * a.cols + i] : a.dense[i * a.cols + p]);
  const bAt = at(bLayout, k, n);
  const value = new Float64Array(m * n);
  const mag = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      let sum = 0;
      for (let p = 0; p < k; p++) {
        const t = A(i, p) * read(b, bAt(p, j));
        acc += t;
        sum += Math.abs(t);
      }
      value[i * n + j] = acc;
      mag[i * n + j] = sum;
    }
  }
  return { m, value, mag };
}

/** Checks element (i, j) of `got` against `want`, allowing the dtype's tolerance times `scale`. */
function checkElement(assert, what, dtype, got, gotAt, i, j, want, scale) {
  const value = DTYPES[dtype].read(got, gotAt);
  const bound = DTYPES[dtype].tol * scale + 1e-30;
  if (!(Math.abs(value - want) <= bound)) assert.fail(`${what}: C[${i}][${j}] = ${value}, reference ${want} (bound ${bound})`);
}

/**
 * Checks every element of `got` (m x n in `layout`) against the float64 reference of
 * act(alpha * op(A) * B + beta * C0 + bias).
 */
export function checkMatmul(assert, what, { a, transpose, b, bLayout, n, alpha = 1, beta = 0, c0, bias, activation = "none", layout = "row-major" }, got) {
  const { read } = DTYPES[a.dtype];
  const { m, value: ab, mag: abMag } = product64({ a, transpose, b, bLayout, n });
  const cAt = at(layout, m, n);
  assert.equal(got.length, m * n, `${what}: result length`);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let v = alpha * ab[i * n + j];
      let mag = Math.abs(alpha) * abMag[i * n + j];
      if (beta !== 0) {
        v += beta * read(c0, cAt(i, j));
        mag += Math.abs(beta * read(c0, cAt(i, j)));
      }
      if (bias) {
        v += read(bias, i);
        mag += Math.abs(read(bias, i));
      }
      checkElement(assert, what, a.dtype, got, cAt(i, j), i, j, activate(v, activation), mag + Math.abs(v));
    }
  }
}

/**
 * Checks `got` (m x n in `layout`) against C0 + op(A) * B_1 + ... + op(A) * B_t in float64: what
 * t multiplies with beta = 1 leave in one output that started as C0.
 */
export function checkAccumulated(assert, what, { a, transpose, bs, bLayout, n, c0, layout = "row-major" }, got) {
  const { read } = DTYPES[a.dtype];
  const m = transpose ? a.cols : a.rows;
  const cAt = at(layout, m, n);
  const want = new Float64Array(m * n);
  const mag = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      want[i * n + j] = read(c0, cAt(i, j));
      mag[i * n + j] = Math.abs(want[i * n + j]);
    }
  }
  for (const b of bs) {
    const p = product64({ a, transpose, b, bLayout, n });
    for (let x = 0; x < m * n; x++) {
      want[x] += p.value[x];
      mag[x] += p.mag[x];
    }
  }
  assert.equal(got.length, m * n, `${what}: result length`);
  // Each of the t roundings of the output to its dtype adds up to one unit of |partial sum|.
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) checkElement(assert, what, a.dtype, got, cAt(i, j), i, j, want[i * n + j], bs.length * mag[i * n + j] + Math.abs(want[i * n + j]));
  }
}

/**
 * Whether a GPU test may run: true with a CUDA device; otherwise the test is skipped with the
 * reason, or fails when BSRMM_TEST_REQUIRE_CUDA=1 (the GPU machine's run script sets it, so a
 * missing GPU cannot pass as a skip there).
 */
export function cudaOrSkip(t, { cudaCompiled, cudaDeviceCount }) {
  if (cudaDeviceCount() > 0) return true;
  const reason = cudaCompiled() ? "no CUDA device" : "a CPU-only build of the core";
  if (process.env.BSRMM_TEST_REQUIRE_CUDA === "1") throw new Error(`BSRMM_TEST_REQUIRE_CUDA=1 but ${reason}`);
  t.skip(reason);
  return false;
}
