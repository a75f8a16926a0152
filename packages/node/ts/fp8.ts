// fp8 (issue 27): the scales of an fp8 operand, and fp8 bytes to and from numbers (the addon
// converts with the float8 crate, round to nearest even, saturating at the format's largest
// finite value: 448 for float8_e4m3, 57344 for float8_e5m2).
import native from "./native.js";
import { checkFp8DType, describe, type Fp8DType } from "./dtype.js";
import { invalid, native as call } from "./errors.js";

export type ScaleKind = "per-tensor" | "per-block" | "per-block-row" | "per-column";

/** A's scales: a number (per tensor) or one per stored block / block row. */
export type MatrixScales = number | { kind: "per-tensor" | "per-block" | "per-block-row"; values: Float32Array };

/** B's scales: a number (per tensor) or a Float32Array with one per column. */
export type BScales = number | Float32Array;

const MATRIX_KINDS: readonly string[] = ["per-tensor", "per-block", "per-block-row"];

/** A's scales as the addon takes them; counts and finiteness are the core's to check. */
export function checkMatrixScales(scales: unknown, dtype: Fp8DType): { kind: string; values: Float32Array } {
  if (scales === undefined) throw invalid(`scales is required for dtype ${dtype}: a number, or { kind, values: Float32Array }`);
  if (typeof scales === "number") return { kind: "per-tensor", values: Float32Array.of(scales) };
  if (typeof scales !== "object" || scales === null) throw invalid(`scales must be a number or { kind, values }, got ${describe(scales)}`);
  const { kind, values } = scales as { kind?: unknown; values?: unknown };
  if (typeof kind !== "string" || !MATRIX_KINDS.includes(kind)) {
    throw invalid(`scales.kind = ${JSON.stringify(kind)}: expected "per-tensor", "per-block" or "per-block-row"`);
  }
  if (!(values instanceof Float32Array)) throw invalid(`scales.values must be a Float32Array, got ${describe(values)}`);
  return { kind, values };
}

/** B's scales as the addon takes them. */
export function checkBScales(scales: unknown): { bScales: Float32Array; bScaleKind: string } | undefined {
  if (scales === undefined) return undefined;
  if (typeof scales === "number") return { bScales: Float32Array.of(scales), bScaleKind: "per-tensor" };
  if (scales instanceof Float32Array) return { bScales: scales, bScaleKind: "per-column" };
  throw invalid(`bScales must be a number (per tensor) or a Float32Array (one per column of B), got ${describe(scales)}`);
}

/** Each value rounded to the nearest `dtype` value, as its byte. */
export function encodeFp8(values: Float32Array | Float64Array | readonly number[], dtype: Fp8DType): Uint8Array {
  const d = checkFp8DType(dtype, "dtype");
  const f64 = values instanceof Float64Array ? values : Float64Array.from(values as ArrayLike<number>);
  return call(() => native.fp8Encode(f64, d));
}

/** The numbers `dtype` bytes stand for (exact). */
export function decodeFp8(bytes: Uint8Array, dtype: Fp8DType): Float64Array {
  const d = checkFp8DType(dtype, "dtype");
  if (!(bytes instanceof Uint8Array)) throw invalid(`bytes must be a Uint8Array, got ${describe(bytes)}`);
  return call(() => native.fp8Decode(bytes, d));
}
