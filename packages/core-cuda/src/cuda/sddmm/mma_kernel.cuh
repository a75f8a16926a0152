// The mma.sync SDDMM kernel (sm_80+, f16 / bf16, f32 accumulators): a CTA computes a BM x BN
// tile of one stored block as a GEMM with K = T, built from sm80's pieces: the tile config
// (shape, warp grid, shared-memory strides, sm80/tile_config.cuh) and the warp's ldmatrix +
// mma.sync step (sm80/warp_mma.cuh); column-major X swaps in x_col_major.cuh's stage layout and
// A-fragment load. Frame: sddmm_params.cuh; loads: mma_loads.cuh; main loop:
// a Cfg::kStages-deep cp.async pipeline over T in chunks of KC; epilogue: below, the warp's
// fragments straight to the block's row-major values (two adjacent elements per 32-bit store,
// packed by sm90/pack.cuh, plain device code).
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "../sm80/cp_async.cuh"
#include "../sm80/warp_mma.cuh"
#include "../sm90/pack.cuh"
#include "mma_loads.cuh"
#include "sddmm_params.cuh"
#include "x_col_major.cuh"

#include <cstdint>
#include <type_traits>

namespace bsrmm::cuda::sddmm_kernels {

// main loop: stage s holds chunk c where s = c % kStages; chunk c + kStages - 1 is issued after
// the barrier that ends every warp's reads of chunk c - 1, the stage it overwrites. Warp:
// sm80::WarpMma (X row-major) or WarpMmaXColMajor (x_col_major.cuh).
template <class Cfg, class Warp>
__device__ void mma_main_loop(const MmaLoads<Cfg>& loads, int64_t t_count, typename Cfg::T* smem,
                              Warp& warp) {
  using T = typename Cfg::T;
  constexpr int kStageElements = Cfg::kAStageElements + Cfg::kBStageElements;
  const int64_t chunks = (t_count + Cfg::kKC - 1) / Cfg::kKC;
  auto a_stage = [&](int64_t c) { return smem + (c % Cfg::kStages) * kStageElements; };
  auto b_stage = [&](int64_t c) { return a_stage(c) + Cfg::kAStageElements; };

#pragma unroll
  for (int c = 0; c < Cfg::kStages - 1; ++c) {
    if (c < chunks) loads.stage(a_stage(c), b_stage(c), int64_t(c) * Cfg::kKC);
    sm80::cp_async_commit();  // empty groups keep the count the wait below relies on
  }
  for (int64_t c = 0; c < chunks; ++c) {
    sm80::cp_async_wait<Cfg::kStages - 2>();
    __syncthreads();
    const int64_t next = c + Cfg::kStages - 1;
    if (next < chunks) loads.stage(a_stage(next), b_stage(next), next * Cfg::kKC);
    sm80::cp_async_commit();
    warp.step(a_stage(c), b_stage(c));
  }
  sm80::cp_async_wait<0>();
}

// epilogue: fragment (i, j) of the warp holds rows warp_m0 + 16 i + g (+ 8) and columns
// warp_n0 + 8 j + 2 t, + 1 (g = lane / 4, t = lane % 4; sm80/mma.cuh).
template <class Cfg>
__device__ void mma_store(const Params<typename Cfg::T>& p, const Frame& f,
                          const sm80::WarpMma<Cfg>& warp) {
  using T = typename Cfg::T;
  const int g = warp.lane / 4;
  const int t = warp.lane % 4;
  T* block = p.values + f.block * p.block_height * p.block_width;
#pragma unroll
  for (int i = 0; i < Cfg::kMmaRows; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::kMmaCols; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = f.m0 + warp.warp_m0 + i * 16 + g + half * 8;
        const int col = f.n0 + warp.warp_n0 + j * 8 + 2 * t;
        T* out = block + int64_t(row) * p.block_width + col;
        float old[2] = {0.0f, 0.0f};
        if (p.beta != 0.0) {
          old[0] = Element<T>::to_acc(out[0]);
          old[1] = Element<T>::to_acc(out[1]);
        }
        float result[2];
#pragma unroll
        for (int e = 0; e < 2; ++e)
          result[e] = epilogue::finish(warp.acc[i][j][half * 2 + e], float(p.alpha), float(p.beta),
                                       old[e], 0.0f, BSRMM_ACTIVATION_NONE);
        *reinterpret_cast<uint32_t*>(out) = sm90::pack_pair<T>(result[0], result[1]);
      }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) mma_sddmm_kernel(Params<typename Cfg::T> p) {
  using T = typename Cfg::T;
  using Warp =
      std::conditional_t<XColMajor<Cfg>::value, WarpMmaXColMajor<Cfg>, sm80::WarpMma<Cfg>>;
  extern __shared__ __align__(128) unsigned char shared[];
  T* smem = reinterpret_cast<T*>(shared);
  const int64_t tiles = p.nnzb * p.tiles_m * p.tiles_n;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const Frame f = frame_of(p, tile, Cfg::kBM, Cfg::kBN);
    Warp warp(int(threadIdx.x) / 32, int(threadIdx.x) % 32);
    mma_main_loop(MmaLoads<Cfg>(p, f), p.t_count, smem, warp);
    mma_store(p, f, warp);
    __syncthreads();  // the next tile's prologue overwrites stages this one's warps may still read
  }
}

}  // namespace bsrmm::cuda::sddmm_kernels
