// Element types and the TypedArrays that carry them.
//   f32 -> Float32Array, f64 -> Float64Array,
//   f16 -> Uint16Array (IEEE half bits) or Float16Array where the runtime has it,
//   bf16 -> Uint16Array (bfloat16 bits),
//   float8_e4m3 / float8_e5m2 -> Uint8Array (the fp8 bytes; fp8.ts converts), A's values and B
//   of an fp8 multiply only, each with fp32 scales.
import { invalid, unsupported, type BsrmmError } from "./errors.js";

export type DType = "f32" | "f64" | "f16" | "bf16";

/** 8-bit floats (OCP E4M3 = torch's float8_e4m3fn, max 448; E5M2, max 57344). */
export type Fp8DType = "float8_e4m3" | "float8_e5m2";

export const FP8_DTYPES: readonly Fp8DType[] = ["float8_e4m3", "float8_e5m2"];

export function isFp8(dtype: unknown): dtype is Fp8DType {
  return typeof dtype === "string" && (FP8_DTYPES as readonly string[]).includes(dtype);
}

export function checkFp8DType(dtype: unknown, what: string): Fp8DType {
  if (isFp8(dtype)) return dtype;
  throw invalid(`${what} = ${JSON.stringify(dtype)}: expected "float8_e4m3" or "float8_e5m2"`);
}

/** Float16Array exists in newer runtimes only; typed here without depending on lib.es2025. */
interface Float16ArrayLike extends ArrayBufferView {
  readonly length: number;
  readonly BYTES_PER_ELEMENT: 2;
}

export type DenseArray = Float32Array | Float64Array | Uint16Array | Float16ArrayLike | Uint8Array;

/**
 * The array each dtype's results come back in: f32 -> Float32Array, f64 -> Float64Array, f16 ->
 * Float16Array where the runtime has one (else Uint16Array of half bits), bf16 -> Uint16Array.
 */
export interface ArrayOf {
  f32: Float32Array;
  f64: Float64Array;
  f16: Float16ArrayLike | Uint16Array;
  bf16: Uint16Array;
  float8_e4m3: Uint8Array;
  float8_e5m2: Uint8Array;
}

const float16Ctor = (globalThis as { Float16Array?: new (buffer: ArrayBufferLike, offset: number, length: number) => Float16ArrayLike })
  .Float16Array;

function isFloat16Array(value: unknown): value is Float16ArrayLike {
  return float16Ctor !== undefined && value instanceof float16Ctor;
}

export const DTYPES: readonly DType[] = ["f32", "f64", "f16", "bf16"];

export function checkDType(dtype: unknown, what = "dtype"): DType {
  if (typeof dtype === "string" && (DTYPES as readonly string[]).includes(dtype)) return dtype as DType;
  throw invalid(`${what} = ${JSON.stringify(dtype)}: expected one of ${DTYPES.map((d) => `"${d}"`).join(", ")}`);
}

/** The dtype an array's type implies, or undefined for Uint16Array (f16 or bf16: ambiguous). */
export function impliedDType(array: unknown): DType | undefined {
  if (array instanceof Float32Array) return "f32";
  if (array instanceof Float64Array) return "f64";
  if (isFloat16Array(array)) return "f16";
  return undefined;
}

function holds(array: unknown, dtype: DType | Fp8DType): boolean {
  return (
    (isFp8(dtype) && array instanceof Uint8Array) ||
    (dtype === "f32" && array instanceof Float32Array) ||
    (dtype === "f64" && array instanceof Float64Array) ||
    (dtype === "f16" && (array instanceof Uint16Array || isFloat16Array(array))) ||
    (dtype === "bf16" && array instanceof Uint16Array)
  );
}

/** A plain JS array where a TypedArray is needed: an error that says which array to pass. */
function plainArray(value: unknown[], what: string, dtype: DType | undefined): BsrmmError {
  const wanted = {
    f32: "new Float32Array(array)",
    f64: "new Float64Array(array)",
    f16: "a Uint16Array of half bits or a Float16Array",
    bf16: "a Uint16Array of bfloat16 bits",
  }[dtype ?? "f32"];
  const also = dtype === undefined ? ", or new Float64Array(array) for f64" : "";
  return invalid(`${what} is a plain Array of length ${value.length}: bsrmm takes TypedArrays (${wanted}${also})`);
}

/** An explicit `dtype` (checked), or the one `values`' array type implies (f32, f64, Float16Array). */
export function resolveDType(values: unknown, dtype: unknown, what: string): DType {
  if (Array.isArray(values)) throw plainArray(values, what, dtype === undefined ? undefined : checkDType(dtype));
  if (dtype !== undefined) return checkDType(dtype);
  const implied = impliedDType(values);
  if (implied === undefined) {
    throw invalid(`dtype is required for ${describe(values)} ${what}: "f16" or "bf16" (or "f32"/"f64" with the matching array)`);
  }
  return implied;
}

/** Checks that `array` is a TypedArray able to hold `dtype` elements, naming `what` if not. */
export function checkArray(array: unknown, dtype: DType | Fp8DType, what: string): DenseArray {
  if (Array.isArray(array)) throw plainArray(array, what, isFp8(dtype) ? undefined : dtype);
  if (!holds(array, dtype)) {
    const expected = {
      f32: "a Float32Array",
      f64: "a Float64Array",
      f16: "a Uint16Array of half bits (or a Float16Array)",
      bf16: "a Uint16Array of bfloat16 bits",
      float8_e4m3: "a Uint8Array of float8_e4m3 bytes (encodeFp8)",
      float8_e5m2: "a Uint8Array of float8_e5m2 bytes (encodeFp8)",
    }[dtype];
    throw invalid(`${what} must be ${expected} for dtype ${dtype}, got ${describe(array)}`);
  }
  return array as DenseArray;
}

/**
 * checkArray for a multiply operand of a `dtype` matrix: an array of another element type is
 * the core's UNSUPPORTED "mixed dtypes" (what every binding reports), anything else that is not
 * a `dtype` array INVALID_ARGUMENT.
 */
export function checkOperand(array: unknown, dtype: DType | Fp8DType, what: string): DenseArray {
  const elements =
    array instanceof Float32Array || array instanceof Float64Array || array instanceof Uint16Array || array instanceof Uint8Array || isFloat16Array(array);
  if (elements && !holds(array, dtype)) {
    throw unsupported(`mixed dtypes are not supported: A is ${dtype}, ${what} is ${describe(array)}`);
  }
  return checkArray(array, dtype, what);
}

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of length ${(value as unknown as { length?: number }).length ?? value.byteLength}`;
  if (Array.isArray(value)) return `an Array of length ${value.length}`;
  return `a ${typeof value}`;
}

/** The bytes of an array, without copying (the addon copies them). */
export function bytes(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/** A result from the addon in the public form: f16 as a Float16Array where the runtime has one. */
export function toPublic<D extends DType | Fp8DType>(array: Float32Array | Float64Array | Uint16Array | Uint8Array, dtype: D): ArrayOf[D] {
  if (dtype === "f16" && float16Ctor !== undefined) return new float16Ctor(array.buffer, array.byteOffset, array.length) as ArrayOf[D];
  return array as ArrayOf[D];
}
