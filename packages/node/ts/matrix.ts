// BsrMatrix: a block-sparse matrix owned by the native core (validated once, reused by every
// multiply).
import native, { type NativeBsrMatrix } from "./native.js";
import { bytes, checkArray, describe, resolveDType, toPublic, type DType, type DenseArray } from "./dtype.js";
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
  /** Where the matrix lives: "cpu" (default) or "cuda:<n>". */
  device?: Device;
  /** Sort column indices within each row instead of rejecting unsorted input. */
  sortIndices?: boolean;
}

export interface FromDenseOptions {
  rows: number;
  cols: number;
  blockSize: number | [number, number];
  layout?: Layout;
  dtype?: DType;
  device?: Device;
}

export interface BsrParts {
  rowPtr: Int32Array;
  colIdx: Int32Array;
  values: DenseArray;
}

function indices(value: unknown, what: string): Int32Array {
  if (value instanceof Int32Array) return value;
  if (Array.isArray(value) && value.every((v) => Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31)) {
    return Int32Array.from(value as number[]);
  }
  throw invalid(`${what} must be an Int32Array or an array of 32-bit integers, got ${describe(value)}`);
}

export class BsrMatrix {
  /** @internal */
  readonly native: NativeBsrMatrix;

  private constructor(handle: NativeBsrMatrix) {
    this.native = handle;
  }

  /** From CSR-of-blocks arrays (the scipy / torch sparse_bsr convention). */
  static fromBsr(init: BsrArrays): BsrMatrix {
    const rows = checkSize(init.rows, "rows");
    const cols = checkSize(init.cols, "cols");
    const [bh, bw] = checkBlockSize(init.blockSize);
    const dtype = resolveDType(init.values, init.dtype, "values");
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
    return new BsrMatrix(
      call(() =>
        native.NativeBsrMatrix.fromBsr(rows, cols, bh, bw, rowPtr, colIdx, bytes(values), dtype, device, init.sortIndices === true),
      ),
    );
  }

  /** Keeps every block of a dense matrix that holds a non-zero (NaN counts as non-zero). */
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

  get dtype(): DType {
    return this.native.dtype as DType;
  }

  get device(): Device {
    return this.native.device as Device;
  }

  /** The matrix as a dense array (row-major unless asked otherwise). */
  toDense(layout?: Layout): DenseArray {
    const l = checkLayout(layout, "layout");
    return toPublic(call(() => this.native.toDense(l)), this.dtype);
  }

  /** The three BSR arrays, copied out. */
  export(): BsrParts {
    const parts = call(() => this.native.export());
    return { rowPtr: parts.rowPtr, colIdx: parts.colIdx, values: toPublic(parts.values, this.dtype) };
  }
}
