// BsrMatrix: a block-sparse matrix owned by the native core (validated once, reused by every
// multiply).
import { inspect, type InspectOptionsStylized } from "node:util";
import native, { type NativeBsrMatrix } from "./native.js";
import { bytes, checkArray, describe, isFp8, resolveDType, toPublic, type ArrayOf, type DType, type DenseArray, type Fp8DType } from "./dtype.js";
import { checkMatrixScales, type MatrixScales, type ScaleKind } from "./fp8.js";
import { invalid, native as call } from "./errors.js";
import { checkBlockSize, checkDevice, checkLayout, checkSize, type Device, type Layout } from "./shape.js";

export interface BsrArrays {
  /** Rows of the matrix. */
  rows: number;
  /** Columns of the matrix. */
  cols: number;
  /** Block size: a number for square blocks, or [height, width]. */
  blockSize: number | [number, number];
  /** rows / blockHeight + 1 offsets into colIdx. */
  rowPtr: Int32Array | readonly number[];
  /** The block column of each stored block. */
  colIdx: Int32Array | readonly number[];
  /** Each block's values, row-major inside the block, block after block. */
  values: DenseArray;
  /** Required for Uint16Array values (f16 or bf16); otherwise implied by the array type. */
  dtype?: DType;
  /** Where the matrix lives: "cpu" (default), "cuda" (device 0) or "cuda:<n>". */
  device?: Device;
  /** Sort column indices within each row instead of rejecting unsorted input. */
  sortIndices?: boolean;
}

/**
 * An fp8 matrix's arrays: `values` are fp8 bytes (encodeFp8), `scales` its fp32 scales: a
 * number (one for the tensor) or `{ kind: "per-block" | "per-block-row" | "per-tensor", values }`
 * (one per stored block in colIdx's order, one per block row, or one). Element i stands for
 * its fp8 value times its scale; a block moved by `sortIndices` keeps its scale.
 */
export interface Fp8BsrArrays extends Omit<BsrArrays, "values" | "dtype"> {
  values: Uint8Array;
  dtype: Fp8DType;
  scales: MatrixScales;
}

export interface FromDenseOptions {
  rows: number;
  cols: number;
  blockSize: number | [number, number];
  layout?: Layout;
  dtype?: DType;
  device?: Device;
}

export interface BsrParts<D extends DType | Fp8DType = DType> {
  rowPtr: Int32Array;
  colIdx: Int32Array;
  values: ArrayOf[D];
}

function indices(value: unknown, what: string): Int32Array {
  if (value instanceof Int32Array) return value;
  if (Array.isArray(value) && value.every((v) => Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31)) {
    return Int32Array.from(value as number[]);
  }
  throw invalid(`${what} must be an Int32Array or an array of 32-bit integers, got ${describe(value)}`);
}

/**
 * A validated block-sparse matrix of `D` elements. Its memory is freed when JS collects it, or
 * by `dispose()` once the multiplies in flight that use it settle (`using a = ...` disposes at
 * scope end).
 */
export class BsrMatrix<D extends DType | Fp8DType = DType> implements Disposable {
  /** @internal */
  readonly native: NativeBsrMatrix;

  private constructor(handle: NativeBsrMatrix) {
    this.native = handle;
  }

  /**
   * From CSR-of-blocks arrays (the scipy / torch sparse_bsr convention); an fp8 dtype takes its
   * `scales` (Fp8BsrArrays).
   */
  static fromBsr<D extends Fp8DType>(init: Fp8BsrArrays & { dtype: D }): BsrMatrix<D>;
  static fromBsr(init: BsrArrays & { values: Float32Array; dtype?: "f32" }): BsrMatrix<"f32">;
  static fromBsr(init: BsrArrays & { values: Float64Array; dtype?: "f64" }): BsrMatrix<"f64">;
  static fromBsr<D extends DType>(init: BsrArrays & { values: ArrayOf[D]; dtype: D }): BsrMatrix<D>;
  static fromBsr(init: BsrArrays): BsrMatrix;
  static fromBsr(init: BsrArrays | Fp8BsrArrays): BsrMatrix<DType | Fp8DType> {
    const rows = checkSize(init.rows, "rows");
    const cols = checkSize(init.cols, "cols");
    const [bh, bw] = checkBlockSize(init.blockSize);
    const dtype = isFp8(init.dtype) ? init.dtype : resolveDType(init.values, init.dtype, "values");
    const values = checkArray(init.values, dtype, "values");
    const rowPtr = indices(init.rowPtr, "rowPtr");
    const colIdx = indices(init.colIdx, "colIdx");
    if (bh > 0 && rows % bh === 0 && rowPtr.length !== rows / bh + 1) {
      throw invalid(`rowPtr has ${rowPtr.length} entries, a ${rows}-row matrix with block height ${bh} needs ${rows / bh + 1}`);
    }
    if (values.length !== colIdx.length * bh * bw) {
      throw invalid(`values has ${values.length} elements, ${colIdx.length} blocks of ${bh}x${bw} need ${colIdx.length * bh * bw}`);
    }
    const device = checkDevice(init.device);
    const sort = init.sortIndices === true;
    if (isFp8(dtype)) {
      const scales = checkMatrixScales((init as Partial<Fp8BsrArrays>).scales, dtype);
      return new BsrMatrix(
        call(() =>
          native.NativeBsrMatrix.fromBsrScaled(rows, cols, bh, bw, rowPtr, colIdx, bytes(values), dtype, scales.kind, scales.values, device, sort),
        ),
      );
    }
    if ((init as { scales?: unknown }).scales !== undefined) {
      throw invalid(`scales are for an fp8 dtype ("float8_e4m3" / "float8_e5m2"); values are ${dtype}`);
    }
    return new BsrMatrix(call(() => native.NativeBsrMatrix.fromBsr(rows, cols, bh, bw, rowPtr, colIdx, bytes(values), dtype, device, sort)));
  }

  /** Keeps every block of a dense matrix that holds a non-zero (NaN counts as non-zero). */
  static fromDense(data: Float32Array, options: FromDenseOptions & { dtype?: "f32" }): BsrMatrix<"f32">;
  static fromDense(data: Float64Array, options: FromDenseOptions & { dtype?: "f64" }): BsrMatrix<"f64">;
  static fromDense<D extends DType>(data: ArrayOf[D], options: FromDenseOptions & { dtype: D }): BsrMatrix<D>;
  static fromDense(data: DenseArray, options: FromDenseOptions): BsrMatrix;
  static fromDense(data: DenseArray, options: FromDenseOptions): BsrMatrix {
    const rows = checkSize(options.rows, "rows");
    const cols = checkSize(options.cols, "cols");
    const [bh, bw] = checkBlockSize(options.blockSize);
    const dtype = resolveDType(data, options.dtype, "data");
    checkArray(data, dtype, "data");
    if (data.length !== rows * cols) throw invalid(`data has ${data.length} elements, a ${rows}x${cols} matrix needs ${rows * cols}`);
    const layout = checkLayout(options.layout, "layout");
    const device = checkDevice(options.device);
    return new BsrMatrix(call(() => native.NativeBsrMatrix.fromDense(bytes(data), rows, cols, layout, dtype, bh, bw, device)));
  }

  /** [rows, cols]. */
  get shape(): [number, number] {
    return [this.native.rows, this.native.cols];
  }

  /** [blockHeight, blockWidth]. */
  get blockSize(): [number, number] {
    return [this.native.blockHeight, this.native.blockWidth];
  }

  /** Stored blocks. */
  get nnzb(): number {
    return this.native.nnzb;
  }

  /** Stored values: nnzb * blockHeight * blockWidth. */
  get nnz(): number {
    return this.native.nnzb * this.native.blockHeight * this.native.blockWidth;
  }

  get dtype(): D {
    return this.native.dtype as D;
  }

  /** "cpu" or "cuda:<n>". */
  get device(): Device {
    return this.native.device as Device;
  }

  /** Whether dispose() has been called. */
  get disposed(): boolean {
    return this.native.disposed;
  }

  /**
   * The matrix as a dense array (row-major unless asked otherwise). A dense form too large to
   * allocate is BSRMM_STATUS_OUT_OF_MEMORY.
   */
  toDense(layout?: Layout): ArrayOf[D] {
    const l = checkLayout(layout, "layout");
    return toPublic(call(() => this.native.toDense(l)), this.dtype);
  }

  /** The three BSR arrays, copied out. */
  export(): BsrParts<D> {
    const parts = call(() => this.native.export());
    return { rowPtr: parts.rowPtr, colIdx: parts.colIdx, values: toPublic(parts.values, this.dtype) };
  }

  /** An fp8 matrix's scales, copied out (another dtype's matrix has none: INVALID_ARGUMENT). */
  scales(): { kind: ScaleKind; values: Float32Array } {
    const s = call(() => this.native.scales());
    return { kind: s.kind as ScaleKind, values: s.values };
  }

  /**
   * Frees the matrix (a GPU copy included) once the multiplies in flight that use it settle,
   * rather than when JS collects it. Any later use is an error; disposing twice is a no-op.
   */
  dispose(): void {
    this.native.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** `BsrMatrix<f32> 512x512 on cuda:0 { blockSize: [ 32, 32 ], nnzb: 1024, density: 0.25 }`. */
  [inspect.custom](depth: number, options: InspectOptionsStylized, inspectFn: typeof inspect): string {
    const [rows, cols] = this.shape;
    const title = `BsrMatrix<${this.dtype}> ${rows}x${cols} on ${this.device}`;
    if (this.disposed) return `${title} (disposed)`;
    if (depth < 0) return title;
    const [bh, bw] = this.blockSize;
    const blocks = bh === 0 || bw === 0 ? 0 : (rows / bh) * (cols / bw);
    const body = { blockSize: this.blockSize, nnzb: this.nnzb, density: blocks === 0 ? 0 : this.nnzb / blocks };
    return `${title} ${inspectFn(body, options)}`;
  }
}
