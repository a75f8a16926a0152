// wgmma: warpgroup-wide asynchronous tensor-core products from shared memory (sm_90a).
// An operand is named by a 64-bit descriptor: start address, two strides and the swizzle mode
// the TMA used to write it (the two must agree, and swizzled tiles must start on the swizzle's
// repeat boundary: 1024 B for 128B, 512 B for 64B, 256 B for 32B).
//   K-major (rows of K contiguous, e.g. an A block row-major):   SBO = bytes between groups of
//     8 rows; LBO unused. A k16 step (k32 for fp8) inside the swizzle row moves the start by 32
//     bytes.
//   MN-major (M or N contiguous, e.g. a row-major B panel):       LBO = bytes between 64-element
//     MN chunks (128B swizzle), SBO = bytes between groups of 8 K rows (1024 for 128B rows).
#pragma once

#include "wgmma_shapes.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

namespace bsrmm::cuda::sm90 {

enum class Swizzle : uint64_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

// The swizzle of a K-major operand whose shared-memory rows are `row_bytes` (32, 64 or 128) long:
// the one its TMA box landed in (tensor_map.hpp: tma_swizzle_for_row).
__host__ __device__ constexpr Swizzle swizzle_for_row(int row_bytes) {
  return row_bytes == 32 ? Swizzle::b32 : row_bytes == 64 ? Swizzle::b64 : Swizzle::b128;
}

__device__ inline uint64_t wgmma_descriptor(uint32_t smem_start, uint32_t leading_bytes,
                                            uint32_t stride_bytes, Swizzle swizzle) {
  return uint64_t((smem_start & 0x3FFFF) >> 4) | (uint64_t((leading_bytes & 0x3FFFF) >> 4) << 16) |
         (uint64_t((stride_bytes & 0x3FFFF) >> 4) << 32) | (uint64_t(swizzle) << 62);
}

// Orders this warpgroup's register accesses before the wgmma that follow.
__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ inline void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most `Pending` committed groups of this warpgroup are still running.
template <int Pending>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// Keeps the compiler from moving accumulator reads or writes across a wgmma wait.
template <int N>
__device__ inline void wgmma_fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (m64 x N, f32) += A (m64 x k16) * B (k16 x N), T = __half or __nv_bfloat16.
template <typename T, int N, int TransA, int TransB>
__device__ inline void wgmma_m64k16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b) {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>);
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  if constexpr (N == 16) {
    if constexpr (bf16) wgmma_m64n16k16_bf16<TransA, TransB>(d, desc_a, desc_b);
    else wgmma_m64n16k16_f16<TransA, TransB>(d, desc_a, desc_b);
  } else if constexpr (N == 32) {
    if constexpr (bf16) wgmma_m64n32k16_bf16<TransA, TransB>(d, desc_a, desc_b);
    else wgmma_m64n32k16_f16<TransA, TransB>(d, desc_a, desc_b);
  } else if constexpr (N == 64) {
    if constexpr (bf16) wgmma_m64n64k16_bf16<TransA, TransB>(d, desc_a, desc_b);
    else wgmma_m64n64k16_f16<TransA, TransB>(d, desc_a, desc_b);
  } else if constexpr (N == 128) {
    if constexpr (bf16) wgmma_m64n128k16_bf16<TransA, TransB>(d, desc_a, desc_b);
    else wgmma_m64n128k16_f16<TransA, TransB>(d, desc_a, desc_b);
  } else {
    static_assert(N == 256, "wgmma_shapes.cuh has N = 16, 32, 64, 128, 256");
    if constexpr (bf16) wgmma_m64n256k16_bf16<TransA, TransB>(d, desc_a, desc_b);
    else wgmma_m64n256k16_f16<TransA, TransB>(d, desc_a, desc_b);
  }
}

// d (m64 x N, f32) = A (m64 x k32) * B (k32 x N) (+ d when `accumulate` != 0), TA and TB
// __nv_fp8_e4m3 or __nv_fp8_e5m2, both K-major.
template <typename TA, typename TB, int N>
__device__ inline void wgmma_m64k32_fp8(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  constexpr bool a4 = std::is_same_v<TA, __nv_fp8_e4m3>, b4 = std::is_same_v<TB, __nv_fp8_e4m3>;
  static_assert((a4 || std::is_same_v<TA, __nv_fp8_e5m2>) && (b4 || std::is_same_v<TB, __nv_fp8_e5m2>));
  static_assert(N == 64 || N == 128, "wgmma_shapes.cuh has fp8 N = 64, 128");
  if constexpr (N == 64) {
    if constexpr (a4 && b4) wgmma_m64n64k32_e4m3_e4m3(d, desc_a, desc_b, accumulate);
    else if constexpr (a4) wgmma_m64n64k32_e4m3_e5m2(d, desc_a, desc_b, accumulate);
    else if constexpr (b4) wgmma_m64n64k32_e5m2_e4m3(d, desc_a, desc_b, accumulate);
    else wgmma_m64n64k32_e5m2_e5m2(d, desc_a, desc_b, accumulate);
  } else {
    if constexpr (a4 && b4) wgmma_m64n128k32_e4m3_e4m3(d, desc_a, desc_b, accumulate);
    else if constexpr (a4) wgmma_m64n128k32_e4m3_e5m2(d, desc_a, desc_b, accumulate);
    else if constexpr (b4) wgmma_m64n128k32_e5m2_e4m3(d, desc_a, desc_b, accumulate);
    else wgmma_m64n128k32_e5m2_e5m2(d, desc_a, desc_b, accumulate);
  }
}

}  // namespace bsrmm::cuda::sm90
