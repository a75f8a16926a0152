// C++ element types for the bsrmm dtypes and their conversions to and from the accumulator type
// (float, or double for f64). Device code only.
#pragma once

#include <bsrmm/bsrmm.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace bsrmm::cuda {

template <typename T>
struct Element;

template <>
struct Element<float> {
  using Acc = float;
  static constexpr bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  __device__ static float to_acc(float x) { return x; }
  __device__ static float from_acc(float x) { return x; }
};

template <>
struct Element<double> {
  using Acc = double;
  static constexpr bsrmm_dtype dtype = BSRMM_DTYPE_F64;
  __device__ static double to_acc(double x) { return x; }
  __device__ static double from_acc(double x) { return x; }
};

template <>
struct Element<__half> {
  using Acc = float;
  static constexpr bsrmm_dtype dtype = BSRMM_DTYPE_F16;
  __device__ static float to_acc(__half x) { return __half2float(x); }
  __device__ static __half from_acc(float x) { return __float2half_rn(x); }
};

template <>
struct Element<__nv_bfloat16> {
  using Acc = float;
  static constexpr bsrmm_dtype dtype = BSRMM_DTYPE_BF16;
  __device__ static float to_acc(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 from_acc(float x) { return __float2bfloat16_rn(x); }
};

}  // namespace bsrmm::cuda
