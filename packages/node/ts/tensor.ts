// Tensor: a dense matrix owned by the addon, in host memory ("cpu") or on a GPU ("cuda:<n>").
// A loop of multiplies that takes B from tensors and writes into an `out` tensor on the GPU never
// copies a dense operand across the bus; only toArray() brings values back.
import native, { type NativeTensor } from "./native.js";
import { bytes, checkArray, checkDType, resolveDType, toPublic, type DType, type DenseArray } from "./dtype.js";
import { invalid, native as call } from "./errors.js";
import { checkDevice, checkLayout, checkSize, type Device, type Layout } from "./shape.js";

export interface TensorOptions {
  rows: number;
  cols: number;
  /** Storage order (default row-major). */
  layout?: Layout;
  /**
   * Element type. Tensor.from: required for Uint16Array data, otherwise implied by the array
   * type. Tensor.zeros / Tensor.empty: default "f32".
   */
  dtype?: DType;
  /** Where the elements live: "cpu" (default) or "cuda:<n>". */
  device?: Device;
}

function checkShape(options: TensorOptions): { rows: number; cols: number; layout: Layout; device: Device } {
  if (typeof options !== "object" || options === null) throw invalid(`options must be an object with rows and cols, got ${String(options)}`);
  return {
    rows: checkSize(options.rows, "rows"),
    cols: checkSize(options.cols, "cols"),
    layout: checkLayout(options.layout, "layout"),
    device: checkDevice(options.device),
  };
}

export class Tensor {
  /** @internal */
  readonly native: NativeTensor;

  private constructor(handle: NativeTensor) {
    this.native = handle;
  }

  /** A copy of `data` (rows * cols elements in `layout` order) on `device`. */
  static from(data: DenseArray, options: TensorOptions): Tensor {
    const { rows, cols, layout, device } = checkShape(options);
    const dtype = resolveDType(data, options.dtype, "data");
    checkArray(data, dtype, "data");
    if (data.length !== rows * cols) throw invalid(`data has ${data.length} elements, a ${rows}x${cols} tensor needs ${rows * cols}`);
    return new Tensor(call(() => native.NativeTensor.fromHost(bytes(data), rows, cols, layout, dtype, device)));
  }

  /** A tensor of zeros. */
  static zeros(options: TensorOptions): Tensor {
    const { rows, cols, layout, device } = checkShape(options);
    const dtype = checkDType(options.dtype ?? "f32");
    return new Tensor(call(() => native.NativeTensor.allocateNew(rows, cols, layout, dtype, device, true)));
  }

  /**
   * A tensor whose elements are not set (NaN on the host, whatever the allocation held on a
   * GPU): for an `out` that a multiply with beta = 0 overwrites entirely.
   */
  static empty(options: TensorOptions): Tensor {
    const { rows, cols, layout, device } = checkShape(options);
    const dtype = checkDType(options.dtype ?? "f32");
    return new Tensor(call(() => native.NativeTensor.allocateNew(rows, cols, layout, dtype, device, false)));
  }

  get rows(): number {
    return this.native.rows;
  }

  get cols(): number {
    return this.native.cols;
  }

  /** [rows, cols]. */
  get shape(): [number, number] {
    return [this.native.rows, this.native.cols];
  }

  get layout(): Layout {
    return this.native.layout as Layout;
  }

  get dtype(): DType {
    return this.native.dtype as DType;
  }

  get device(): Device {
    return this.native.device as Device;
  }

  /**
   * The elements copied to a new host array in the tensor's layout, after the device work
   * queued before it (matmulSync into this tensor). Refused (BSRMM_STATUS_INVALID_ARGUMENT)
   * while an async multiply still writes the tensor: await it first.
   */
  toArray(): DenseArray {
    return toPublic(call(() => this.native.toHost()), this.dtype);
  }
}
