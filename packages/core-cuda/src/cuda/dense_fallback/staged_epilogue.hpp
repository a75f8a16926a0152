// bsrmm's epilogue after a dense GEMM that wrote the bare products (alpha 1, beta 0) into a
// staging buffer in the accumulator type: C = activation(alpha * acc + beta * C + bias), with
// the formulas every other kernel uses (kernel_parts/epilogue_math.hpp) and one rounding into C.
// cuBLASLt's own epilogues are not used: its GELU/ReLU treat NaN and infinities differently,
// and its bias runs along the other dimension of a row-major C.
#pragma once

#include "../cuda_backend.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace bsrmm::cuda::dense_fallback {

// The staging buffer has C's shape and layout, ld = its contiguous extent, elements of float
// (f16, bf16, f32) or double (f64). Where `flags` (per column of B, may be null) is set, the
// staged value is replaced by the sum over A's stored blocks (nonfinite_columns.hpp).
void staged_epilogue(const MatmulArgs& args, const void* staging, const int32_t* flags,
                     cudaStream_t stream);

}  // namespace bsrmm::cuda::dense_fallback
