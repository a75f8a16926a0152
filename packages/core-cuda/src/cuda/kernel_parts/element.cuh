// C++ element types for the bsrmm dtypes and their conversions to and from the accumulator type
// (float, or double for f64). Device code only.
#pragma once

#include <bsrmm/bsrmm.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

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

// fp8 is read only (A and B of a multiply; C is never fp8): no from_acc. The conversion is one
// cvt on sm_89+, a short software sequence on sm_80.
template <>
struct Element<__nv_fp8_e4m3> {
  using Acc = float;
  static constexpr bsrmm_dtype dtype = BSRMM_DTYPE_FLOAT8_E4M3;
  __device__ static float to_acc(__nv_fp8_e4m3 x) { return static_cast<float>(x); }
};

template <>
struct Element<__nv_fp8_e5m2> {
  using Acc = float;
  static constexpr bsrmm_dtype dtype = BSRMM_DTYPE_FLOAT8_E5M2;
  __device__ static float to_acc(__nv_fp8_e5m2 x) { return static_cast<float>(x); }
};

}  // namespace bsrmm::cuda
