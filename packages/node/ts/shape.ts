// Integer and shape checks shared by the public functions.
import { invalid } from "./errors.js";

export type Layout = "row-major" | "col-major";

export function checkSize(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(`${what} = ${String(value)} must be a non-negative integer`);
  }
  return value;
}

export function checkLayout(value: unknown, what: string): Layout {
  if (value === undefined) return "row-major";
  if (value === "row-major" || value === "col-major") return value;
  throw invalid(`${what} = ${JSON.stringify(value)}: expected "row-major" or "col-major"`);
}

/** [height, width] from a number (square) or a pair. */
export function checkBlockSize(value: unknown): [number, number] {
  if (typeof value === "number") {
    const b = checkSize(value, "blockSize");
    return [b, b];
  }
  if (Array.isArray(value) && value.length === 2) {
    return [checkSize(value[0], "blockSize[0]"), checkSize(value[1], "blockSize[1]")];
  }
  throw invalid(`blockSize = ${JSON.stringify(value)}: expected a number or [height, width]`);
}

/** Where data lives: "cpu", "cuda:<n>", or "cuda" for CUDA device 0 (as in Python and PyTorch). */
export type Device = "cpu" | "cuda" | `cuda:${number}`;

/** A device name, normalised: "cuda" becomes "cuda:0" (what `.device` getters report). */
export function checkDevice(value: unknown): Device {
  if (value === undefined) return "cpu";
  if (value === "cuda") return "cuda:0";
  if (value === "cpu" || (typeof value === "string" && /^cuda:\d+$/.test(value))) return value as Device;
  throw invalid(`device = ${JSON.stringify(value)}: expected "cpu", "cuda" or "cuda:<n>"`);
}
