// One warp's share of one pipeline step: fragments of its kWarpM x KC slice of A and KC x kWarpN
// slice of B from shared memory, then the mma.sync products into its accumulators (fp32; f64
// for the DMMA step, warp_dmma.cuh).
#pragma once

#include "ldmatrix.cuh"
#include "mma.cuh"
#include "tile_config.cuh"
#include "warp_dmma.cuh"

namespace bsrmm::cuda::sm80 {

template <class Cfg>
struct WarpMma {
  using T = typename Cfg::T;
  using Acc = typename Cfg::Acc;
  using Mma = typename Cfg::Traits::Mma;
  static constexpr int kRows = Cfg::kMmaRows;
  static constexpr int kCols = Cfg::kMmaCols;

  Acc acc[kRows][kCols][4];
  int warp_m0;  // the warp's first row / column inside the CTA tile
  int warp_n0;
  int lane;

  __device__ WarpMma(int warp, int lane_) : lane(lane_) {
    warp_m0 = (warp / Cfg::kWarpsN) * Cfg::kWarpM;
    warp_n0 = (warp % Cfg::kWarpsN) * Cfg::kWarpN;
#pragma unroll
    for (int i = 0; i < kRows; ++i)
#pragma unroll
      for (int j = 0; j < kCols; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = Acc(0);
  }

  __device__ void step(const T* a_stage, const T* b_stage) {
    if constexpr (Cfg::kMath == Math::f64)
      dmma_step<Cfg>(acc, a_stage, b_stage, warp_m0, warp_n0, lane);
    else if constexpr (Cfg::Traits::kMmaK == 16)
      step_16bit(a_stage, b_stage);
    else
      step_tf32(a_stage, b_stage);
  }

 private:
  __device__ void step_16bit(const T* a_stage, const T* b_stage) {
#pragma unroll
    for (int kk = 0; kk < Cfg::kKC; kk += 16) {
      uint32_t a[kRows][4];
      uint32_t b[kCols][2];
#pragma unroll
      for (int i = 0; i < kRows; ++i)
        ldmatrix_x4(a[i], a_stage + (warp_m0 + i * 16 + lane % 16) * Cfg::kAStride + kk + (lane / 16) * 8);
#pragma unroll
      for (int pair = 0; pair < kCols / 2; ++pair) {
        uint32_t r[4];
        const int n = warp_n0 + pair * 16;
        if constexpr (Cfg::kBColMajor)
          ldmatrix_x4(r, b_stage + (n + lane % 8 + (lane / 16) * 8) * Cfg::kBStride + kk + ((lane / 8) % 2) * 8);
        else
          ldmatrix_x4_trans(r, b_stage + (kk + lane % 16) * Cfg::kBStride + n + (lane / 16) * 8);
        b[2 * pair][0] = r[0];
        b[2 * pair][1] = r[1];
        b[2 * pair + 1][0] = r[2];
        b[2 * pair + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kRows; ++i)
#pragma unroll
        for (int j = 0; j < kCols; ++j) Mma::run(acc[i][j], a[i], b[j]);
    }
  }

  // tf32 fragments are 32-bit, which ldmatrix.trans cannot move: scalar shared loads, laid out
  // (strides in tile_config.cuh) so a warp's 32 loads hit 32 banks.
  __device__ void step_tf32(const float* a_stage, const float* b_stage) {
    const int g = lane / 4;
    const int t = lane % 4;
#pragma unroll
    for (int kk = 0; kk < Cfg::kKC; kk += 8) {
      float a[kRows][4];
      float b[kCols][2];
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        const float* row = a_stage + (warp_m0 + i * 16 + g) * Cfg::kAStride + kk + t;
        a[i][0] = row[0];
        a[i][1] = row[8 * Cfg::kAStride];
        a[i][2] = row[4];
        a[i][3] = row[8 * Cfg::kAStride + 4];
      }
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        const int n = warp_n0 + j * 8 + g;
        if constexpr (Cfg::kBColMajor) {
          b[j][0] = b_stage[n * Cfg::kBStride + kk + t];
          b[j][1] = b_stage[n * Cfg::kBStride + kk + t + 4];
        } else {
          b[j][0] = b_stage[(kk + t) * Cfg::kBStride + n];
          b[j][1] = b_stage[(kk + t + 4) * Cfg::kBStride + n];
        }
      }
      if constexpr (Cfg::kMath == Math::tf32x3)
        mma_split(a, b);
      else
        mma_rounded(a, b);
    }
  }

  __device__ void mma_rounded(const float (&a)[kRows][4], const float (&b)[kCols][2]) {
    uint32_t ar[kRows][4];
    uint32_t br[kCols][2];
#pragma unroll
    for (int i = 0; i < kRows; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) ar[i][e] = to_tf32(a[i][e]);
#pragma unroll
    for (int j = 0; j < kCols; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) br[j][e] = to_tf32(b[j][e]);
#pragma unroll
    for (int i = 0; i < kRows; ++i)
#pragma unroll
      for (int j = 0; j < kCols; ++j) Mma::run(acc[i][j], ar[i], br[j]);
  }

  // An infinite x keeps small = 0: inf - inf would turn every product with it into NaN.
  __device__ static void split(float x, uint32_t& big, uint32_t& small) {
    big = to_tf32(x);
    const float rest = x - __uint_as_float(big);
    small = to_tf32(isinf(__uint_as_float(big)) ? 0.0f : rest);
  }

  __device__ static uint32_t finite_or_zero(uint32_t tf32) {
    return isinf(__uint_as_float(tf32)) ? 0u : tf32;
  }

  // Each k step's three products are summed in a fresh accumulator and only then added to the
  // running sum, by an FADD that rounds to nearest. The tensor cores' own f32 accumulation
  // rounds toward zero: summed inside them, a long row's running sum lost up to an ulp per
  // step, always towards zero, so the error grew with K (5e-5 of the norm at K = 16384 on the
  // H100's coverage suite, 50x cuBLAS's f32; perf-log 70). A step's own sum is small and its
  // truncation's sign follows the step's sign, so what it loses does not pile up.
  __device__ void mma_split(const float (&a)[kRows][4], const float (&b)[kCols][2]) {
    uint32_t a_big[kRows][4], a_small[kRows][4], a_big_finite[kRows][4];
    uint32_t b_big[kCols][2], b_small[kCols][2], b_big_finite[kCols][2];
#pragma unroll
    for (int i = 0; i < kRows; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        split(a[i][e], a_big[i][e], a_small[i][e]);
        a_big_finite[i][e] = finite_or_zero(a_big[i][e]);
      }
#pragma unroll
    for (int j = 0; j < kCols; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        split(b[j][e], b_big[j][e], b_small[j][e]);
        b_big_finite[j][e] = finite_or_zero(b_big[j][e]);
      }
    // The correction terms must not see an infinite big part: its partner's small part is 0
    // and inf * 0 would turn the infinite product the main term holds into NaN. So they take
    // the bigs with infinities masked, and the main term (last) the bigs as they are.
#pragma unroll
    for (int i = 0; i < kRows; ++i)
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        float step_sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        Mma::run(step_sum, a_small[i], b_big_finite[j]);
        Mma::run(step_sum, a_big_finite[i], b_small[j]);
        Mma::run(step_sum, a_big[i], b_big[j]);
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] += step_sum[e];
      }
  }
};

}  // namespace bsrmm::cuda::sm80
