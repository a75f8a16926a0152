// matmul: C = alpha * op(A) * B + beta * C (+ per-row bias, activation), off the main thread
// (Promise) or on it (matmulSync).
import native, { type NativeMatmulOptions } from "./native.js";
import { bytes, checkOperand, toPublic, type DenseArray } from "./dtype.js";
import { fromNative, invalid, native as call } from "./errors.js";
import type { BsrMatrix } from "./matrix.js";
import { checkLayout, checkSize, type Layout } from "./shape.js";

export type Activation = "none" | "relu" | "gelu" | "silu";

/** A dense operand with its shape; a bare array is taken as row-major with op(A)'s column count as rows. */
export interface Dense {
  data: DenseArray;
  rows: number;
  cols: number;
  layout?: Layout;
}

export interface MatmulOptions {
  /** Multiply by A transposed. */
  transpose?: boolean;
  /** Scale of the product (default 1). */
  alpha?: number;
  /** Scale of the existing C (default 0); needs `c`. */
  beta?: number;
  /** The existing C (op(A).rows x B.cols, in `layout`), read when beta != 0. */
  c?: DenseArray;
  /** Per-row bias of C (op(A).rows values), added before the activation. */
  bias?: DenseArray;
  activation?: Activation;
  /** The result's layout (default row-major). */
  layout?: Layout;
}

const ACTIVATIONS: readonly Activation[] = ["none", "relu", "gelu", "silu"];

// NaN and +-Infinity are numbers: the core scales by them and IEEE propagates them, as in every
// other binding.
function scalar(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") throw invalid(`${what} = ${JSON.stringify(value)} must be a number`);
  return value;
}

interface Prepared {
  b: Uint8Array;
  bRows: number;
  bCols: number;
  options: NativeMatmulOptions;
}

function prepare(a: BsrMatrix, b: DenseArray | Dense, options: MatmulOptions = {}): Prepared {
  const transpose = options.transpose === true;
  const [rows, cols] = a.shape;
  const [m, k] = transpose ? [cols, rows] : [rows, cols];
  const dense: Dense = ArrayBuffer.isView(b) ? { data: b as DenseArray, rows: k, cols: k === 0 ? 0 : b.length / k } : (b as Dense);
  const data = checkOperand(dense.data, a.dtype, "B");
  const bRows = checkSize(dense.rows, "B rows");
  const bCols = checkSize(dense.cols, "B cols");
  if (bRows !== k) {
    throw invalid(`B has ${bRows} rows, op(A) (${rows}x${cols}${transpose ? ", transposed" : ""}) has ${k} columns`);
  }
  if (data.length !== bRows * bCols) throw invalid(`B has ${data.length} elements, a ${bRows}x${bCols} matrix needs ${bRows * bCols}`);
  const bLayout = checkLayout(dense.layout, "B layout");
  const outLayout = checkLayout(options.layout, "layout");
  const alpha = scalar(options.alpha, "alpha", 1);
  const beta = scalar(options.beta, "beta", 0);
  let c: Uint8Array | undefined;
  if (beta !== 0) {
    if (options.c === undefined) throw invalid(`beta = ${beta} needs the existing C in options.c`);
    const cArray = checkOperand(options.c, a.dtype, "c");
    if (cArray.length !== m * bCols) throw invalid(`c has ${cArray.length} elements, C is ${m}x${bCols} (${m * bCols})`);
    c = bytes(cArray);
  }
  let bias: Uint8Array | undefined;
  if (options.bias !== undefined) {
    const biasArray = checkOperand(options.bias, a.dtype, "bias");
    if (biasArray.length !== m) throw invalid(`bias has ${biasArray.length} elements, C has ${m} rows`);
    bias = bytes(biasArray);
  }
  const activation = options.activation ?? "none";
  if (!ACTIVATIONS.includes(activation)) {
    throw invalid(`activation = ${JSON.stringify(activation)}: expected one of ${ACTIVATIONS.map((x) => `"${x}"`).join(", ")}`);
  }
  return {
    b: bytes(data),
    bRows,
    bCols,
    options: {
      transpose,
      alpha,
      beta,
      bLayout,
      outLayout,
      activation,
      ...(c === undefined ? {} : { c }),
      ...(bias === undefined ? {} : { bias }),
    },
  };
}

/**
 * C = alpha * op(A) * B + beta * C (+ bias, activation) as a new array (in `options.layout`),
 * computed on a worker thread: the JS thread stays free. Operands are copied when the call is
 * made, so the caller may reuse its arrays at once.
 */
export async function matmul(a: BsrMatrix, b: DenseArray | Dense, options?: MatmulOptions): Promise<DenseArray> {
  const p = prepare(a, b, options);
  const result = await (call(() => native.matmul(a.native, p.b, p.bRows, p.bCols, p.options)) as Promise<
    Float32Array | Float64Array | Uint16Array
  >).catch((error: unknown) => {
    throw fromNative(error);
  });
  return toPublic(result, a.dtype);
}

/** The same multiply, blocking the calling thread. */
export function matmulSync(a: BsrMatrix, b: DenseArray | Dense, options?: MatmulOptions): DenseArray {
  const p = prepare(a, b, options);
  return toPublic(call(() => native.matmulSync(a.native, p.b, p.bRows, p.bCols, p.options)), a.dtype);
}
