// fp8 operands for the fast CPU variants (cpu_blocked_simd, cpu_rowwise_simd): A's values come
// dequantised from the plan (Plan::values_f32: each value times its block's scale), and B is
// widened here, once per call, into row-major f32 times its scales, so the variants run their
// f32 path on it and write C (f32, f16 or bf16) with the usual epilogue.
#pragma once

#include "../backend/operands.hpp"
#include "../common/thread_pool.hpp"
#include "../device/buffer.hpp"

namespace bsrmm::cpu {

// `args` with B replaced by its f32 image in `scratch` (grown as needed, kept by the caller
// for the next call) and B's scales applied (none left to apply); the conversion split over
// `pool`. A is untouched: its f32 values are args.a.values_f32.
backend::MatmulArgs widened_fp8(const backend::MatmulArgs& args, detail::Buffer& scratch,
                                detail::ThreadPool& pool);

}  // namespace bsrmm::cpu
