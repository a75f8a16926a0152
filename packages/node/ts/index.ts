// bsrmm for Node: block-sparse (BSR) x dense matrix multiply.
//
//   C = alpha * op(A) * B + beta * C      A: BsrMatrix, B and C: TypedArrays or Tensors
//   values[b] = alpha * (X Y)[block b of A] + beta * values[b]      sddmm (the weight gradient)
//
// Inputs are checked here (types, lengths, shapes) before they reach the addon; every error is a
// BsrmmError with a stable `code` (the C status name).
import { native as call } from "./errors.js";
import native from "./native.js";

export { BsrmmError, type BsrmmErrorCode } from "./errors.js";
export { DTYPES, FP8_DTYPES, type ArrayOf, type DType, type DenseArray, type Fp8DType } from "./dtype.js";
export { decodeFp8, encodeFp8, type BScales, type MatrixScales, type ScaleKind } from "./fp8.js";
export { BsrMatrix, type BsrArrays, type BsrParts, type Fp8BsrArrays, type FromDenseOptions } from "./matrix.js";
export {
  matmul,
  matmulSync,
  synchronize,
  type Activation,
  type ArrayMatmulOptions,
  type Dense,
  type Fp8MatmulOptions,
  type MatmulOptions,
} from "./matmul.js";
export { sddmm, sddmmSync, type ArraySddmmOptions, type SddmmOptions } from "./sddmm.js";
export { Tensor, type TensorOptions } from "./tensor.js";
export type { Device, Layout } from "./shape.js";

/** The native core's version. */
export function version(): string {
  return native.version();
}

/** Whether the native core was built with CUDA kernels. */
export function cudaCompiled(): boolean {
  return native.cudaCompiled();
}

/** Usable CUDA devices (0 without CUDA, a driver or a GPU). */
export function cudaDeviceCount(): number {
  return native.cudaDeviceCount();
}

/** Kernel variants compiled into the core: the matmul ones, then the SDDMM ones (`cpu_sddmm_*`,
 * `sm90_sddmm_*`, `sm80_sddmm_*`, `cuda_sddmm_simt_*`); `kind` lists one operation's. */
export function variants(kind?: "matmul" | "sddmm"): string[] {
  return call(() => native.variants(kind));
}
