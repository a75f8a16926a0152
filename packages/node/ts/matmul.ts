// matmul: C = alpha * op(A) * B + beta * C (+ per-row bias, activation), off the main thread
// (Promise) or on it (matmulSync). Two forms, chosen by the operands:
//   arrays   B a TypedArray (or a Dense): returns a new TypedArray; a GPU matrix's B, C and
//            bias are staged through device buffers on every call.
//   tensors  B, options.out or options.bias a Tensor: runs on tensors on A's device, in place,
//            and returns a Tensor (options.out, or a new one); host arrays given alongside
//            (B, c, bias) are copied into tensors on A's device first.
import native, { type NativeEpilogue, type NativeMatmulOptions } from "./native.js";
import { bytes, checkDType, checkFp8DType, checkOperand, describe, isFp8, toPublic, type ArrayOf, type DType, type DenseArray, type Fp8DType } from "./dtype.js";
import { checkBScales, type BScales } from "./fp8.js";
import { fromNative, invalid, native as call, unsupported } from "./errors.js";
import { runsInline } from "./inline.js";
import { BsrMatrix } from "./matrix.js";
import { checkDevice, checkLayout, checkSize, type Device, type Layout } from "./shape.js";
import { Tensor } from "./tensor.js";

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
  /** Scale of the existing C (default 0): `c`, or `out`'s current contents. */
  beta?: number;
  /** The existing C (op(A).rows x B.cols, in `layout`), read when beta != 0; not with `out`. */
  c?: DenseArray;
  /** Per-row bias of C (op(A).rows values), added before the activation. */
  bias?: DenseArray | Tensor;
  activation?: Activation;
  /** The result's layout (default row-major; with `out`, out's layout). */
  layout?: Layout;
  /** Write the result into this tensor (op(A).rows x B.cols, on A's device) and return it. */
  out?: Tensor;
  /** An fp8 A's B: its dtype (default A's); B is a Uint8Array of fp8 bytes. */
  bDtype?: Fp8DType;
  /** An fp8 B's scales (required): a number (per tensor) or one per column of B. */
  bScales?: BScales;
  /** An fp8 multiply's C (and `c`, `bias`) dtype: "f32" (default), "f16" or "bf16". */
  outDtype?: "f32" | "f16" | "bf16";
}

/** The options of an fp8 multiply (A a float8 matrix): arrays only. */
export type Fp8MatmulOptions = ArrayMatmulOptions & { bScales: BScales };

/** Options of the array form: no tensor anywhere. */
export type ArrayMatmulOptions = MatmulOptions & { out?: undefined; bias?: DenseArray };

const ACTIVATIONS: readonly Activation[] = ["none", "relu", "gelu", "silu"];

// NaN and +-Infinity are numbers: the core scales by them and IEEE propagates them, as in every
// other binding.
function scalar(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") throw invalid(`${what} = ${JSON.stringify(value)} must be a number`);
  return value;
}

/** What both forms check first: A, op(A)'s shape and the epilogue. */
function common(a: unknown, options: MatmulOptions) {
  if (!(a instanceof BsrMatrix)) throw invalid(`A must be a BsrMatrix, got ${describe(a)}`);
  if (a.disposed) throw invalid("A: the matrix was disposed (dispose() freed its memory)");
  if (typeof options !== "object" || options === null) throw invalid(`options must be an object, got ${describe(options)}`);
  const transpose = options.transpose === true;
  const [rows, cols] = a.shape;
  const [m, k] = transpose ? [cols, rows] : [rows, cols];
  const activation = options.activation ?? "none";
  if (!ACTIVATIONS.includes(activation)) {
    throw invalid(`activation = ${JSON.stringify(activation)}: expected one of ${ACTIVATIONS.map((x) => `"${x}"`).join(", ")}`);
  }
  const epilogue: NativeEpilogue = { transpose, alpha: scalar(options.alpha, "alpha", 1), beta: scalar(options.beta, "beta", 0), activation };
  return { a, m, k, opA: `${rows}x${cols}${transpose ? ", transposed" : ""}`, epilogue };
}

/** B as a host array with its shape, checked against op(A). */
function hostB(a: BsrMatrix<DType | Fp8DType>, b: DenseArray | Dense, k: number, opA: string, dtype: DType | Fp8DType = a.dtype) {
  let dense: Dense;
  if (ArrayBuffer.isView(b) || Array.isArray(b)) {
    // A bare array is B with op(A)'s K rows: its length must be a whole number of rows.
    const data = checkOperand(b, dtype, "B");
    if (k === 0 ? data.length !== 0 : data.length % k !== 0) {
      throw invalid(
        `B has ${data.length} elements, not a whole number of rows of op(A) (${opA}), which has ${k} columns: ` +
          `a bare array B needs a multiple of ${k} elements; pass {data, rows, cols} for another shape`,
      );
    }
    dense = { data, rows: k, cols: k === 0 ? 0 : data.length / k };
  } else {
    dense = b;
  }
  if (typeof dense !== "object" || dense === null) throw invalid(`B must be a TypedArray, a Dense {data, rows, cols} or a Tensor, got ${describe(b)}`);
  const data = checkOperand(dense.data, dtype, "B");
  const rows = checkSize(dense.rows, "B rows");
  const cols = checkSize(dense.cols, "B cols");
  if (rows !== k) throw invalid(`B has ${rows} rows, op(A) (${opA}) has ${k} columns`);
  if (data.length !== rows * cols) throw invalid(`B has ${data.length} elements, a ${rows}x${cols} matrix needs ${rows * cols}`);
  return { data, rows, cols, layout: checkLayout(dense.layout, "B layout") };
}

/** The existing C for beta != 0, checked. */
function hostC(a: BsrMatrix<DType | Fp8DType>, c: DenseArray | undefined, beta: number, m: number, n: number, dtype: DType | Fp8DType = a.dtype): DenseArray {
  if (c === undefined) throw invalid(`beta = ${beta} needs the existing C in options.c (or an options.out tensor)`);
  const array = checkOperand(c, dtype, "c");
  if (array.length !== m * n) throw invalid(`c has ${array.length} elements, C is ${m}x${n} (${m * n})`);
  return array;
}

function hostBias(a: BsrMatrix<DType | Fp8DType>, bias: DenseArray, m: number, dtype: DType | Fp8DType = a.dtype): DenseArray {
  const array = checkOperand(bias, dtype, "bias");
  if (array.length !== m) throw invalid(`bias has ${array.length} elements, C has ${m} rows`);
  return array;
}

interface Prepared {
  b: Uint8Array;
  bRows: number;
  bCols: number;
  options: NativeMatmulOptions;
}

/**
 * The dtypes of an fp8 multiply's B and C and B's scales; none for another A. The core checks
 * the scales' count and values and the dtype combination.
 */
function fp8Operands(a: BsrMatrix<DType | Fp8DType>, options: MatmulOptions) {
  if (!isFp8(a.dtype)) {
    if (options.bScales !== undefined || options.bDtype !== undefined || options.outDtype !== undefined) {
      throw invalid(`bScales, bDtype and outDtype are for an fp8 A; A is ${a.dtype}`);
    }
    return undefined;
  }
  const bDtype = options.bDtype === undefined ? a.dtype : checkFp8DType(options.bDtype, "bDtype");
  const outDtype = options.outDtype === undefined ? "f32" : checkDType(options.outDtype, "outDtype");
  return { bDtype, outDtype, scales: checkBScales(options.bScales) };
}

function prepare(a: BsrMatrix<DType | Fp8DType>, b: DenseArray | Dense, options: MatmulOptions): Prepared & { outDtype: DType | Fp8DType } {
  const { m, k, opA, epilogue } = common(a, options);
  const fp8 = fp8Operands(a, options);
  const outDtype = fp8?.outDtype ?? a.dtype;
  const dense = hostB(a, b, k, opA, fp8?.bDtype);
  const outLayout = checkLayout(options.layout, "layout");
  const c = epilogue.beta !== 0 ? bytes(hostC(a, options.c, epilogue.beta, m, dense.cols, outDtype)) : undefined;
  const bias = options.bias !== undefined ? bytes(hostBias(a, options.bias as DenseArray, m, outDtype)) : undefined;
  return {
    outDtype,
    b: bytes(dense.data),
    bRows: dense.rows,
    bCols: dense.cols,
    options: {
      ...epilogue,
      bLayout: dense.layout,
      outLayout,
      ...(c === undefined ? {} : { c }),
      ...(bias === undefined ? {} : { bias }),
      ...(fp8 === undefined ? {} : { bDtype: fp8.bDtype, outDtype: fp8.outDtype, ...fp8.scales }),
    },
  };
}

/** Tensors hold the compute dtypes only: an fp8 multiply takes host arrays. */
function refuseFp8Tensors(a: BsrMatrix<DType | Fp8DType>): void {
  if (isFp8(a.dtype)) throw unsupported(`A is ${a.dtype}: an fp8 multiply takes B (and c, bias) as arrays, not tensors or out`);
}

/** A tensor operand: not disposed, on A's device, of A's dtype. */
function checkTensor(t: Tensor, a: BsrMatrix, what: string): Tensor {
  if (t.disposed) throw invalid(`${what}: the tensor was disposed (dispose() freed its memory)`);
  if (t.device !== a.device) {
    throw invalid(`${what} is a tensor on ${t.device} but A is on ${a.device}: every tensor operand must be on A's device`);
  }
  if (t.dtype !== a.dtype) throw unsupported(`mixed dtypes are not supported: A is ${a.dtype}, ${what} is a ${t.dtype} tensor`);
  return t;
}

interface PreparedTensors {
  b: Tensor;
  out: Tensor;
  bias: Tensor | undefined;
  epilogue: NativeEpilogue;
}

function usesTensors(b: unknown, options: MatmulOptions | undefined): boolean {
  return b instanceof Tensor || (typeof options === "object" && options !== null && (options.out !== undefined || options.bias instanceof Tensor));
}

function prepareTensors(a: BsrMatrix, b: DenseArray | Dense | Tensor, options: MatmulOptions): PreparedTensors {
  const { m, k, opA, epilogue } = common(a, options);
  const { dtype, device } = a;
  let bTensor: Tensor;
  if (b instanceof Tensor) {
    bTensor = checkTensor(b, a, "B");
    if (b.rows !== k) throw invalid(`B has ${b.rows} rows, op(A) (${opA}) has ${k} columns`);
  } else {
    const dense = hostB(a, b, k, opA);
    bTensor = Tensor.from(dense.data, { rows: dense.rows, cols: dense.cols, layout: dense.layout, dtype, device });
  }
  const n = bTensor.cols;

  let out: Tensor;
  if (options.out !== undefined) {
    if (!(options.out instanceof Tensor)) throw invalid(`out must be a Tensor, got ${describe(options.out)}`);
    out = checkTensor(options.out, a, "out");
    if (out.rows !== m || out.cols !== n) throw invalid(`out is ${out.rows}x${out.cols}, C = op(A) (${opA}) * B is ${m}x${n}`);
    if (options.c !== undefined) throw invalid("c and out are exclusive: with out, beta scales out's current contents");
    if (options.layout !== undefined && checkLayout(options.layout, "layout") !== out.layout) {
      throw invalid(`layout = "${options.layout}" but out is ${out.layout}: the result takes out's layout`);
    }
    if (out === bTensor) throw invalid("out is also B: the multiply would overwrite B while reading it");
  } else {
    const layout = checkLayout(options.layout, "layout");
    const shape = { rows: m, cols: n, layout, dtype, device };
    out = epilogue.beta !== 0 ? Tensor.from(hostC(a, options.c, epilogue.beta, m, n), shape) : Tensor.empty(shape);
  }

  let bias: Tensor | undefined;
  if (options.bias instanceof Tensor) {
    bias = checkTensor(options.bias, a, "bias");
    if (bias.rows * bias.cols !== m || (bias.rows !== 1 && bias.cols !== 1)) {
      throw invalid(`bias is a ${bias.rows}x${bias.cols} tensor, C has ${m} rows: it must be ${m}x1 or 1x${m}`);
    }
    if (bias === out) throw invalid("out is also the bias: the multiply would overwrite the bias while reading it");
  } else if (options.bias !== undefined) {
    bias = Tensor.from(hostBias(a, options.bias, m), { rows: m, cols: 1, dtype, device });
  }
  return { b: bTensor, out, bias, epilogue };
}

// The overloads take the dtype D from A alone (NoInfer): a tensor of another dtype is a type
// error, as it is UNSUPPORTED at run time.

/**
 * C = alpha * op(A) * B + beta * C (+ bias, activation), computed on a worker thread: the JS
 * thread stays free. (A CPU multiply of at most 2^18 multiply-adds, nnz(A) * N, which finishes in
 * less time than the hand-off to a worker takes, runs on the calling thread instead: inline.ts.)
 *
 * Arrays: returns a new array of A's dtype (Float32Array for an f32 A, ...; in `options.layout`);
 * operands are copied when the call is made, so the caller may reuse its arrays at once. A
 * result too large to allocate is BSRMM_STATUS_OUT_OF_MEMORY.
 *
 * Tensors (B, `out` or `bias` a Tensor): every tensor must be on A's device; returns `out` (or a
 * new tensor on A's device) once it holds the result. Until then the tensors are in use: a
 * second multiply writing the same `out`, or one that writes a tensor this one reads, is refused
 * with BSRMM_STATUS_INVALID_ARGUMENT (await the first).
 */
export function matmul(a: BsrMatrix<Fp8DType>, b: Uint8Array | Dense, options: Fp8MatmulOptions & { outDtype: "f16" | "bf16" }): Promise<Uint16Array>;
export function matmul(a: BsrMatrix<Fp8DType>, b: Uint8Array | Dense, options: Fp8MatmulOptions): Promise<Float32Array>;
export function matmul<D extends DType>(a: BsrMatrix<D>, b: NoInfer<Tensor<D>>, options?: MatmulOptions): Promise<Tensor<D>>;
export function matmul<D extends DType>(
  a: BsrMatrix<D>,
  b: DenseArray | Dense | NoInfer<Tensor<D>>,
  options: Omit<MatmulOptions, "out" | "bias"> & ({ out: NoInfer<Tensor<D>>; bias?: DenseArray | Tensor } | { bias: NoInfer<Tensor<D>> }),
): Promise<Tensor<D>>;
export function matmul<D extends DType>(a: BsrMatrix<D>, b: DenseArray | Dense, options?: ArrayMatmulOptions): Promise<ArrayOf[D]>;
export function matmul<D extends DType>(a: BsrMatrix<D>, b: DenseArray | Dense | NoInfer<Tensor<D>>, options?: MatmulOptions): Promise<ArrayOf[D] | Tensor<D>>;
export async function matmul(a: BsrMatrix<DType | Fp8DType>, b: DenseArray | Dense | Tensor, options: MatmulOptions = {}): Promise<DenseArray | Tensor> {
  if (usesTensors(b, options)) {
    refuseFp8Tensors(a);
    const p = prepareTensors(a as BsrMatrix, b, options);
    if (runsInline(a.device, a.nnz * p.b.cols)) {
      call(() => native.matmulIntoSync(a.native, p.b.native, p.out.native, p.bias?.native, p.epilogue));
      return p.out;
    }
    await (call(() => native.matmulInto(a.native, p.b.native, p.out.native, p.bias?.native, p.epilogue)) as Promise<void>).catch(
      (error: unknown) => {
        throw fromNative(error);
      },
    );
    return p.out;
  }
  const p = prepare(a, b as DenseArray | Dense, options);
  if (runsInline(a.device, a.nnz * p.bCols)) return toPublic(call(() => native.matmulSync(a.native, p.b, p.bRows, p.bCols, p.options)), p.outDtype);
  const result = await (call(() => native.matmul(a.native, p.b, p.bRows, p.bCols, p.options)) as Promise<
    Float32Array | Float64Array | Uint16Array
  >).catch((error: unknown) => {
    throw fromNative(error);
  });
  return toPublic(result, p.outDtype);
}

/**
 * The same multiply, on the calling thread. With tensors on a GPU the work is only queued on
 * the device's stream (as a CUDA call is): `toArray()` waits for it, `synchronize(device)` too.
 */
export function matmulSync(a: BsrMatrix<Fp8DType>, b: Uint8Array | Dense, options: Fp8MatmulOptions & { outDtype: "f16" | "bf16" }): Uint16Array;
export function matmulSync(a: BsrMatrix<Fp8DType>, b: Uint8Array | Dense, options: Fp8MatmulOptions): Float32Array;
export function matmulSync<D extends DType>(a: BsrMatrix<D>, b: NoInfer<Tensor<D>>, options?: MatmulOptions): Tensor<D>;
export function matmulSync<D extends DType>(
  a: BsrMatrix<D>,
  b: DenseArray | Dense | NoInfer<Tensor<D>>,
  options: Omit<MatmulOptions, "out" | "bias"> & ({ out: NoInfer<Tensor<D>>; bias?: DenseArray | Tensor } | { bias: NoInfer<Tensor<D>> }),
): Tensor<D>;
export function matmulSync<D extends DType>(a: BsrMatrix<D>, b: DenseArray | Dense, options?: ArrayMatmulOptions): ArrayOf[D];
export function matmulSync<D extends DType>(a: BsrMatrix<D>, b: DenseArray | Dense | NoInfer<Tensor<D>>, options?: MatmulOptions): ArrayOf[D] | Tensor<D>;
export function matmulSync(a: BsrMatrix<DType | Fp8DType>, b: DenseArray | Dense | Tensor, options: MatmulOptions = {}): DenseArray | Tensor {
  if (usesTensors(b, options)) {
    refuseFp8Tensors(a);
    const p = prepareTensors(a as BsrMatrix, b, options);
    call(() => native.matmulIntoSync(a.native, p.b.native, p.out.native, p.bias?.native, p.epilogue));
    return p.out;
  }
  const p = prepare(a, b as DenseArray | Dense, options);
  return toPublic(call(() => native.matmulSync(a.native, p.b, p.bRows, p.bCols, p.options)), p.outDtype);
}

/** Waits for the work queued on `device` (a GPU; nothing to wait for on "cpu"). */
export function synchronize(device: Device): void {
  const d = checkDevice(device);
  call(() => native.synchronize(d));
}
