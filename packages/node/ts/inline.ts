// When the Promise forms (`matmul`, `sddmm`) compute on the calling thread instead of a worker.
//
// Handing a call to a libuv worker and taking its result back costs 40-60 us on a 2-core host
// (perf-log 95: `await matmul` of a 64 x 64 f32 matrix 47 us against `matmulSync` 8 us), more
// than a small CPU call takes whole: up to 2^18 multiply-adds (19-34 us through matmulSync there)
// the call runs inline and its Promise settles at once, so a loop of small awaited calls is not
// five times slower than the same loop of Sync calls. Larger calls, and every GPU one (it waits
// for the device), go to a worker: the JS thread is never held longer than the hand-off would be.
import type { Device } from "./shape.js";

export const INLINE_MULTIPLY_ADDS = 2 ** 18;

export function runsInline(device: Device, multiplyAdds: number): boolean {
  return device === "cpu" && multiplyAdds <= INLINE_MULTIPLY_ADDS;
}
