// Two f32 results rounded to one 32-bit word of 16-bit elements (low half first), the unit of
// the epilogue's stores and of stmatrix fragments.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace bsrmm::cuda::sm90 {

template <typename T>
__device__ inline uint32_t pack_pair(float lo, float hi);

template <>
__device__ inline uint32_t pack_pair<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

template <>
__device__ inline uint32_t pack_pair<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

}  // namespace bsrmm::cuda::sm90
