// Every error bsrmm throws: a JS Error with a stable `code` (the C status name) and the core's
// message, which names the argument and the rule it broke.

export type BsrmmErrorCode =
  | "BSRMM_STATUS_INVALID_ARGUMENT"
  | "BSRMM_STATUS_UNSUPPORTED"
  | "BSRMM_STATUS_OUT_OF_MEMORY"
  | "BSRMM_STATUS_NO_DEVICE"
  | "BSRMM_STATUS_CUDA_ERROR"
  | "BSRMM_STATUS_INTERNAL"
  | "BSRMM_STATUS_IO_ERROR";

export class BsrmmError extends Error {
  readonly code: BsrmmErrorCode;

  constructor(code: BsrmmErrorCode, message: string) {
    super(message);
    this.name = "BsrmmError";
    this.code = code;
  }
}

/** An argument error raised in JS, before the native call, worded like the core's. */
export function invalid(message: string): BsrmmError {
  return new BsrmmError("BSRMM_STATUS_INVALID_ARGUMENT", message);
}

/** What the core reports for a valid request it does not provide (e.g. mixed dtypes). */
export function unsupported(message: string): BsrmmError {
  return new BsrmmError("BSRMM_STATUS_UNSUPPORTED", message);
}

// The addon reports failures as "<C status name>: <message>".
const NATIVE_ERROR = /^(BSRMM_STATUS_[A-Z_]+): ([\s\S]*)$/;

/** Turns an error thrown by the addon into a BsrmmError (anything else passes through). */
export function fromNative(error: unknown): unknown {
  if (error instanceof Error) {
    const match = NATIVE_ERROR.exec(error.message);
    if (match !== null) return new BsrmmError(match[1] as BsrmmErrorCode, match[2] ?? "");
  }
  return error;
}

/** Runs a native call, translating its errors. */
export function native<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw fromNative(error);
  }
}
