// Compiled (never run) by types.test.mjs against dist/esm/index.d.ts: results are typed by dtype.
import { BsrMatrix, Tensor, encodeFp8, matmul, matmulSync, sddmm, sddmmSync, type ArrayOf } from "../dist/esm/index.js";

const arrays = { rows: 4, cols: 4, blockSize: 2, rowPtr: [0, 1, 2], colIdx: [0, 1] };
const a32 = BsrMatrix.fromBsr({ ...arrays, values: new Float32Array(8) });
const a64 = BsrMatrix.fromBsr({ ...arrays, values: new Float64Array(8) });
const abf = BsrMatrix.fromBsr({ ...arrays, values: new Uint16Array(8), dtype: "bf16" });

export const c32: Float32Array = await matmul(a32, new Float32Array(8));
export const c64: Float64Array = matmulSync(a64, new Float64Array(8));
export const cbf: Uint16Array = matmulSync(abf, new Uint16Array(8));
export const dense: Float32Array = a32.toDense();
export const values: Float64Array = a64.export().values;
// @ts-expect-error an f64 result is not a Float32Array
export const wrong: Float32Array = matmulSync(a64, new Float64Array(8));

// fp8: A's dtype from `dtype`, C's from outDtype (f32 unless told otherwise).
const a8 = BsrMatrix.fromBsr({ ...arrays, values: encodeFp8(new Float32Array(8), "float8_e4m3"), dtype: "float8_e4m3", scales: 0.5 });
export const a8type: BsrMatrix<"float8_e4m3"> = a8;
export const c8: Float32Array = matmulSync(a8, new Uint8Array(8), { bScales: 1 });
export const c8bf: Uint16Array = await matmul(a8, new Uint8Array(8), { bScales: new Float32Array(2), bDtype: "float8_e5m2", outDtype: "bf16" });
export const a8values: Uint8Array = a8.export().values;
// @ts-expect-error an fp8 multiply needs bScales
matmulSync(a8, new Uint8Array(8), {});

const x = Tensor.zeros({ rows: 4, cols: 2 }); // f32 unless told otherwise
export const x32: Float32Array = x.toArray();
export const y: Tensor<"f32"> = await matmul(a32, x);
export const z: Tensor<"f32"> = matmulSync(a32, new Float32Array(8), { out: Tensor.empty({ rows: 4, cols: 2 }) });
export const x64: Tensor<"f64"> = Tensor.from(new Float64Array(8), { rows: 4, cols: 2 });
export const h: ArrayOf["f16"] = Tensor.zeros({ rows: 1, cols: 1, dtype: "f16" }).toArray();
// @ts-expect-error an f32 matrix does not take an f64 tensor
matmulSync(a32, x64);

// The SDDMM: values typed by the pattern's dtype (arrays), or a tensor of it.
export const v32: Float32Array = await sddmm(a32, new Float32Array(8), new Float32Array(8));
export const v64: Float64Array = sddmmSync(a64, new Float64Array(8), { data: new Float64Array(8), rows: 2, cols: 4, layout: "col-major" });
export const vt: Tensor<"f32"> = sddmmSync(a32, x, new Float32Array(8));
export const vo: Tensor<"f32"> = await sddmm(a32, new Float32Array(8), new Float32Array(8), { out: Tensor.empty({ rows: 2, cols: 4 }) });
// @ts-expect-error an f64 pattern's values are not a Float32Array
export const wrongValues: Float32Array = sddmmSync(a64, new Float64Array(8), new Float64Array(8));
// @ts-expect-error an f32 pattern does not take an f64 tensor
sddmmSync(a32, x64, new Float32Array(8));

// Both are Disposable: `using` frees them at the end of the scope.
{
  using scoped = Tensor.zeros({ rows: 1, cols: 1, device: "cuda" });
  using matrix = BsrMatrix.fromBsr({ ...arrays, values: new Float32Array(8), device: "cuda" });
  console.log(scoped.shape, matrix.shape);
}
