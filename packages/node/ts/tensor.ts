// Tensor: a dense matrix owned by the addon, in host memory ("cpu") or on a GPU ("cuda:<n>").
// A loop of multiplies that takes B from tensors and writes into an `out` tensor on the GPU never
// copies a dense operand across the bus; only toArray() brings values back.
import { inspect, type InspectOptionsStylized } from "node:util";
import native, { type NativeTensor } from "./native.js";
import { bytes, checkArray, checkDType, resolveDType, toPublic, type ArrayOf, type DType, type DenseArray } from "./dtype.js";
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
  /** Where the elements live: "cpu" (default), "cuda" (device 0) or "cuda:<n>". */
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

// util.inspect shows the values of host tensors up to this many elements (it copies them).
const INSPECT_VALUES = 1000;

/**
 * A rows x cols matrix of `D` elements in host or GPU memory. Its memory is freed when JS
 * collects it, or at once by `dispose()` (`using t = Tensor.zeros(...)` disposes at scope end).
 */
export class Tensor<D extends DType = DType> implements Disposable {
  /** @internal */
  readonly native: NativeTensor;

  private constructor(handle: NativeTensor) {
    this.native = handle;
  }

  /** A copy of `data` (rows * cols elements in `layout` order) on `device`. */
  static from(data: Float32Array, options: TensorOptions & { dtype?: "f32" }): Tensor<"f32">;
  static from(data: Float64Array, options: TensorOptions & { dtype?: "f64" }): Tensor<"f64">;
  static from<D extends DType>(data: ArrayOf[D], options: TensorOptions & { dtype: D }): Tensor<D>;
  static from(data: DenseArray, options: TensorOptions): Tensor;
  static from(data: DenseArray, options: TensorOptions): Tensor {
    const { rows, cols, layout, device } = checkShape(options);
    const dtype = resolveDType(data, options.dtype, "data");
    checkArray(data, dtype, "data");
    if (data.length !== rows * cols) throw invalid(`data has ${data.length} elements, a ${rows}x${cols} tensor needs ${rows * cols}`);
    return new Tensor(call(() => native.NativeTensor.fromHost(bytes(data), rows, cols, layout, dtype, device)));
  }

  /** A tensor of zeros (f32 unless `dtype` says otherwise). Too large to allocate: BSRMM_STATUS_OUT_OF_MEMORY. */
  static zeros<D extends DType = "f32">(options: TensorOptions & { dtype?: D }): Tensor<D> {
    const { rows, cols, layout, device } = checkShape(options);
    const dtype = checkDType(options.dtype ?? "f32");
    return new Tensor<D>(call(() => native.NativeTensor.allocateNew(rows, cols, layout, dtype, device, true)));
  }

  /**
   * A tensor whose elements are not set (NaN on the host, whatever the allocation held on a
   * GPU): for an `out` that a multiply with beta = 0 overwrites entirely.
   */
  static empty<D extends DType = "f32">(options: TensorOptions & { dtype?: D }): Tensor<D> {
    const { rows, cols, layout, device } = checkShape(options);
    const dtype = checkDType(options.dtype ?? "f32");
    return new Tensor<D>(call(() => native.NativeTensor.allocateNew(rows, cols, layout, dtype, device, false)));
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

  get dtype(): D {
    return this.native.dtype as D;
  }

  /** "cpu" or "cuda:<n>". */
  get device(): Device {
    return this.native.device as Device;
  }

  /** Whether dispose() has freed the tensor's memory. */
  get disposed(): boolean {
    return this.native.disposed;
  }

  /**
   * The elements copied to a new host array in the tensor's layout, after the device work
   * queued before it (matmulSync into this tensor). Refused (BSRMM_STATUS_INVALID_ARGUMENT)
   * while an async multiply still writes the tensor: await it first.
   */
  toArray(): ArrayOf[D] {
    return toPublic(call(() => this.native.toHost()), this.dtype);
  }

  /**
   * Frees the memory now (a GPU allocation included) rather than when JS collects the tensor.
   * Refused (BSRMM_STATUS_INVALID_ARGUMENT) while a multiply in flight uses the tensor; any
   * later use is an error naming it; disposing twice is a no-op.
   */
  dispose(): void {
    call(() => this.native.dispose());
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** `Tensor<f32> 4x3 row-major on cpu` and, for small host tensors, the values. */
  [inspect.custom](depth: number, options: InspectOptionsStylized, inspectFn: typeof inspect): string {
    const title = `Tensor<${this.dtype}> ${this.rows}x${this.cols} ${this.layout} on ${this.device}`;
    if (this.disposed) return `${title} (disposed)`;
    if (depth < 0 || this.device !== "cpu" || this.rows * this.cols > INSPECT_VALUES) return title;
    try {
      return `${title} ${inspectFn(this.toArray(), { ...options, depth: options.depth === null ? null : depth - 1 })}`;
    } catch {
      return `${title} (being written by a multiply in flight)`;
    }
  }
}
