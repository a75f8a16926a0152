// What a row tile multiplies: T (__half or __nv_bfloat16) for A, B and C alike, or
// Fp8Operands<TA, TB, TC>: A and B in fp8 (__nv_fp8_e4m3 / __nv_fp8_e5m2, any pairing) with
// fp32 scales, C in TC (__half or __nv_bfloat16). The frame, producer and epilogue are the same
// for both; RowTileTypes says which element each piece reads and writes.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace bsrmm::cuda::sm90 {

template <typename TA, typename TB, typename TC>
struct Fp8Operands {};

template <typename T>
struct RowTileTypes {
  using A = T;
  using B = T;
  using C = T;
  static constexpr bool kFp8 = false;
  static constexpr int kElementBytes = 2;
};

template <typename TA, typename TB, typename TC>
struct RowTileTypes<Fp8Operands<TA, TB, TC>> {
  using A = TA;
  using B = TB;
  using C = TC;
  static constexpr bool kFp8 = true;
  static constexpr int kElementBytes = 1;
};

}  // namespace bsrmm::cuda::sm90
