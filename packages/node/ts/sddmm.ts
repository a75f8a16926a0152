// sddmm: the sampled dense-dense multiply, values[b] = alpha * (X Y)[block b of the pattern] +
// beta * values[b], for every stored block b (the weight gradient of a block-sparse layer Y = W X
// is sddmm(W, dY, X^T)). The values are the pattern's: nnzb blocks of bh x bw, each row-major, in
// the pattern's order (as export().values lists them).
//   arrays   X and Y TypedArrays (or Dense): resolves to a new TypedArray of nnzb * bh * bw values.
//   tensors  X, Y or options.out a Tensor: runs on tensors on the pattern's device, in place, and
//            resolves to a Tensor (options.out, or a new nnzb x bh*bw row-major one).
// Array operands are copied into tensors on the pattern's device (one native path for both forms).
import native from "./native.js";
import { checkOperand, describe, type ArrayOf, type DType, type DenseArray } from "./dtype.js";
import { fromNative, invalid, native as call, unsupported } from "./errors.js";
import { runsInline } from "./inline.js";
import type { Dense } from "./matmul.js";
import { BsrMatrix } from "./matrix.js";
import { checkLayout, checkSize } from "./shape.js";
import { Tensor } from "./tensor.js";

export interface SddmmOptions {
  /** Scale of the product (default 1). */
  alpha?: number;
  /** Scale of the existing values (default 0): `values`, or `out`'s current contents. */
  beta?: number;
  /** The existing values (nnzb * bh * bw, the pattern's block order), read when beta != 0; not with `out`. */
  values?: DenseArray;
  /** Write the values into this tensor (nnzb x bh * bw, row-major, on the pattern's device) and return it. */
  out?: Tensor;
}

/** Options of the array form: no tensor anywhere. */
export type ArraySddmmOptions = SddmmOptions & { out?: undefined };

function scalar(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") throw invalid(`${what} = ${JSON.stringify(value)} must be a number`);
  return value;
}

interface Problem {
  pattern: BsrMatrix;
  rows: number;
  cols: number;
  nnzb: number;
  blockValues: number;
  alpha: number;
  beta: number;
}

function problem(pattern: unknown, options: SddmmOptions): Problem {
  if (!(pattern instanceof BsrMatrix)) throw invalid(`pattern must be a BsrMatrix, got ${describe(pattern)}`);
  if (pattern.disposed) throw invalid("pattern: the matrix was disposed (dispose() freed its memory)");
  if (typeof options !== "object" || options === null) throw invalid(`options must be an object, got ${describe(options)}`);
  const [rows, cols] = pattern.shape;
  const [bh, bw] = pattern.blockSize;
  return {
    pattern, rows, cols, nnzb: pattern.nnzb, blockValues: bh * bw,
    alpha: scalar(options.alpha, "alpha", 1), beta: scalar(options.beta, "beta", 0),
  };
}

/**
 * X (rows x T) or Y (T x cols) as a tensor on the pattern's device: a Tensor as is (checked), an
 * array copied. A bare array has the pattern's rows (X) or columns (Y) as its known side.
 */
function operand(p: Problem, value: DenseArray | Dense | Tensor, what: "X" | "Y"): Tensor {
  const { pattern } = p;
  const known = what === "X" ? p.rows : p.cols;
  if (value instanceof Tensor) return checkTensor(value, pattern, what);
  let dense: Dense;
  if (ArrayBuffer.isView(value) || Array.isArray(value)) {
    const data = checkOperand(value, pattern.dtype, what);
    if (known === 0 ? data.length !== 0 : data.length % known !== 0) {
      throw invalid(
        `${what} has ${data.length} elements, not a whole number of ${what === "X" ? "rows" : "columns"} of ${known} ` +
          `(the pattern is ${p.rows}x${p.cols}); pass {data, rows, cols} for another shape`,
      );
    }
    const other = known === 0 ? 0 : data.length / known;
    dense = what === "X" ? { data, rows: known, cols: other } : { data, rows: other, cols: known };
  } else {
    dense = value;
  }
  if (typeof dense !== "object" || dense === null) throw invalid(`${what} must be a TypedArray, a Dense {data, rows, cols} or a Tensor, got ${describe(value)}`);
  const data = checkOperand(dense.data, pattern.dtype, what);
  const rows = checkSize(dense.rows, `${what} rows`);
  const cols = checkSize(dense.cols, `${what} cols`);
  if (data.length !== rows * cols) throw invalid(`${what} has ${data.length} elements, a ${rows}x${cols} matrix needs ${rows * cols}`);
  const layout = checkLayout(dense.layout, `${what} layout`);
  return Tensor.from(data, { rows, cols, layout, dtype: pattern.dtype, device: pattern.device });
}

/** A tensor operand: not disposed, on the pattern's device, of its dtype. */
function checkTensor(t: Tensor, pattern: BsrMatrix, what: string): Tensor {
  if (t.disposed) throw invalid(`${what}: the tensor was disposed (dispose() freed its memory)`);
  if (t.device !== pattern.device) {
    throw invalid(`${what} is a tensor on ${t.device} but the pattern is on ${pattern.device}: every tensor operand must be on the pattern's device`);
  }
  if (t.dtype !== pattern.dtype) throw unsupported(`mixed dtypes are not supported: the pattern is ${pattern.dtype}, ${what} is a ${t.dtype} tensor`);
  return t;
}

/** The shapes of X and Y against the pattern: X is rows x T, Y is T x cols. */
function checkShapes(p: Problem, x: Tensor, y: Tensor): void {
  const pattern = `the pattern (${p.rows}x${p.cols})`;
  if (x.rows !== p.rows) throw invalid(`X has ${x.rows} rows, ${pattern} has ${p.rows}`);
  if (y.cols !== p.cols) throw invalid(`Y has ${y.cols} columns, ${pattern} has ${p.cols}`);
  if (x.cols !== y.rows) throw invalid(`X is ${x.rows}x${x.cols} and Y is ${y.rows}x${y.cols}: X's columns must be Y's rows`);
}

/** Where the values go: options.out (checked), or a new tensor (the existing values when beta != 0). */
function output(p: Problem, options: SddmmOptions, x: Tensor, y: Tensor): Tensor {
  const shape = `nnzb x bh*bw = ${p.nnzb}x${p.blockValues}`;
  const { out } = options;
  if (out !== undefined) {
    if (!(out instanceof Tensor)) throw invalid(`out must be a Tensor, got ${describe(out)}`);
    checkTensor(out, p.pattern, "out");
    if (out.rows !== p.nnzb || out.cols !== p.blockValues) throw invalid(`out is ${out.rows}x${out.cols}, the values are ${shape}`);
    if (out.layout !== "row-major") throw invalid("out is col-major: the values are row-major (one row per stored block)");
    if (options.values !== undefined) throw invalid("values and out are exclusive: with out, beta scales out's current contents");
    if (out === x || out === y) throw invalid(`out is also ${out === x ? "X" : "Y"}: the SDDMM would overwrite it while reading it`);
    return out;
  }
  const where = { rows: p.nnzb, cols: p.blockValues, dtype: p.pattern.dtype, device: p.pattern.device };
  if (p.beta === 0) return Tensor.empty(where);
  if (options.values === undefined) throw invalid(`beta = ${p.beta} needs the existing values in options.values (or an options.out tensor)`);
  const values = checkOperand(options.values, p.pattern.dtype, "values");
  if (values.length !== p.nnzb * p.blockValues) {
    throw invalid(`values has ${values.length} elements, the pattern's values are ${shape} (${p.nnzb * p.blockValues})`);
  }
  return Tensor.from(values, where);
}

interface Prepared {
  x: Tensor;
  y: Tensor;
  out: Tensor;
  alpha: number;
  beta: number;
  /** Tensors made here from arrays: disposed once the SDDMM has settled. */
  made: Tensor[];
}

function prepare(pattern: BsrMatrix, x: DenseArray | Dense | Tensor, y: DenseArray | Dense | Tensor, options: SddmmOptions): Prepared {
  const p = problem(pattern, options);
  const made: Tensor[] = [];
  const keep = (t: Tensor, given: unknown) => {
    if (t !== given) made.push(t);
    return t;
  };
  try {
    const xt = keep(operand(p, x, "X"), x);
    const yt = keep(operand(p, y, "Y"), y);
    checkShapes(p, xt, yt);
    const out = keep(output(p, options, xt, yt), options.out);
    return { x: xt, y: yt, out, alpha: p.alpha, beta: p.beta, made };
  } catch (error) {
    made.forEach((t) => t.dispose());
    throw error;
  }
}

function usesTensors(x: unknown, y: unknown, options: SddmmOptions | undefined): boolean {
  return x instanceof Tensor || y instanceof Tensor || (typeof options === "object" && options !== null && options.out !== undefined);
}

/** The array form's result: out's values as a TypedArray, every tensor made for the call freed. */
function settle<D extends DType>(p: Prepared, tensors: boolean): ArrayOf[D] | Tensor<D> {
  if (tensors) {
    p.made.filter((t) => t !== p.out).forEach((t) => t.dispose());
    return p.out as Tensor<D>;
  }
  const values = p.out.toArray() as ArrayOf[D];
  p.made.forEach((t) => t.dispose());
  return values;
}

/**
 * values[b] = alpha * (X Y)[block b of `pattern`] + beta * values[b] for every stored block b,
 * on a worker thread (one of at most 2^18 multiply-adds, nnz * T, on the CPU runs on the calling
 * thread instead: inline.ts). `pattern` (rows x cols) gives the blocks (its own values are not read); X
 * is rows x T and Y is T x cols, in either layout (a bare array is row-major, X with `rows` rows,
 * Y with `cols` columns; X^T of a row-major X is `{ data: x, rows: T, cols, layout: "col-major" }`).
 *
 * Arrays: resolves to a new array of nnzb * bh * bw values of the pattern's dtype, blocks in the
 * pattern's order (what `BsrMatrix.fromBsr` takes as `values` with the pattern's rowPtr and colIdx).
 * Tensors (X, Y or `out` a Tensor): every tensor on the pattern's device; resolves to `out` (or a new
 * nnzb x bh*bw tensor) once it holds the values.
 */
export function sddmm<D extends DType>(pattern: BsrMatrix<D>, x: DenseArray | Dense | NoInfer<Tensor<D>>, y: DenseArray | Dense | NoInfer<Tensor<D>>, options: SddmmOptions & { out: NoInfer<Tensor<D>> }): Promise<Tensor<D>>;
export function sddmm<D extends DType>(pattern: BsrMatrix<D>, x: NoInfer<Tensor<D>>, y: DenseArray | Dense | NoInfer<Tensor<D>>, options?: SddmmOptions): Promise<Tensor<D>>;
export function sddmm<D extends DType>(pattern: BsrMatrix<D>, x: DenseArray | Dense, y: NoInfer<Tensor<D>>, options?: SddmmOptions): Promise<Tensor<D>>;
export function sddmm<D extends DType>(pattern: BsrMatrix<D>, x: DenseArray | Dense, y: DenseArray | Dense, options?: ArraySddmmOptions): Promise<ArrayOf[D]>;
export async function sddmm(pattern: BsrMatrix, x: DenseArray | Dense | Tensor, y: DenseArray | Dense | Tensor, options: SddmmOptions = {}): Promise<DenseArray | Tensor> {
  const tensors = usesTensors(x, y, options);
  const p = prepare(pattern, x, y, options);
  try {
    if (runsInline(pattern.device, pattern.nnz * p.x.cols)) {
      call(() => native.sddmmIntoSync(pattern.native, p.x.native, p.y.native, p.out.native, p.alpha, p.beta));
    } else {
      await (call(() => native.sddmmInto(pattern.native, p.x.native, p.y.native, p.out.native, p.alpha, p.beta)) as Promise<void>).catch(
        (error: unknown) => {
          throw fromNative(error);
        },
      );
    }
  } catch (error) {
    p.made.forEach((t) => t.dispose());
    throw error;
  }
  return settle(p, tensors);
}

/**
 * The same SDDMM on the calling thread. With tensors on a GPU the work is only queued on the
 * device's stream: `toArray()` waits for it, `synchronize(device)` too.
 */
export function sddmmSync<D extends DType>(pattern: BsrMatrix<D>, x: DenseArray | Dense | NoInfer<Tensor<D>>, y: DenseArray | Dense | NoInfer<Tensor<D>>, options: SddmmOptions & { out: NoInfer<Tensor<D>> }): Tensor<D>;
export function sddmmSync<D extends DType>(pattern: BsrMatrix<D>, x: NoInfer<Tensor<D>>, y: DenseArray | Dense | NoInfer<Tensor<D>>, options?: SddmmOptions): Tensor<D>;
export function sddmmSync<D extends DType>(pattern: BsrMatrix<D>, x: DenseArray | Dense, y: NoInfer<Tensor<D>>, options?: SddmmOptions): Tensor<D>;
export function sddmmSync<D extends DType>(pattern: BsrMatrix<D>, x: DenseArray | Dense, y: DenseArray | Dense, options?: ArraySddmmOptions): ArrayOf[D];
export function sddmmSync(pattern: BsrMatrix, x: DenseArray | Dense | Tensor, y: DenseArray | Dense | Tensor, options: SddmmOptions = {}): DenseArray | Tensor {
  const tensors = usesTensors(x, y, options);
  const p = prepare(pattern, x, y, options);
  try {
    call(() => native.sddmmIntoSync(pattern.native, p.x.native, p.y.native, p.out.native, p.alpha, p.beta));
  } catch (error) {
    p.made.forEach((t) => t.dispose());
    throw error;
  }
  return settle(p, tensors);
}
