// The Hopper SDDMM's epilogue: one consumer's accumulators to its run of blocks' values,
// finished by ../kernel_parts/epilogue_math.hpp (beta == 0 never reads the old values). The
// thread owns rows r and r + 8 of its warp's 16 (r = lane / 4) and columns 8 j + 2 (lane % 4),
// + 1 of each block's BlockW columns of the run (the m64nN layout), stored as one 32-bit pair
// straight to the row-major block: a block is 32 KB against the 2 MB (T = 4096) its pass
// reads, so staging it through shared memory for TMA stores would save little and hold back a
// ring stage.
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "../sm90/pack.cuh"
#include "sm90_mainloop.cuh"
#include "sm90_unit.cuh"

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

template <class Cfg>
struct Sm90SddmmEpilogue {
  using T = typename Cfg::T;
  const Sm90SddmmParams& p;
  int consumer, warp, lane;

  template <bool Accumulate>
  __device__ __forceinline__ void store_block(const float* acc, T* block) const {
    const int row0 = (Cfg::kSplitRows ? consumer * 64 : 0) + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < Cfg::kBlockW / 8; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        T* out = block + (row0 + 8 * half) * Cfg::kBlockW + 8 * j + 2 * (lane % 4);
        float old[2] = {0.0f, 0.0f};
        if constexpr (Accumulate) {
          old[0] = Element<T>::to_acc(out[0]);
          old[1] = Element<T>::to_acc(out[1]);
        }
        float result[2];
#pragma unroll
        for (int e = 0; e < 2; ++e)
          result[e] = epilogue::finish(acc[4 * j + 2 * half + e], p.alpha, p.beta, old[e], 0.0f,
                                       BSRMM_ACTIVATION_NONE);
        *reinterpret_cast<uint32_t*>(out) = sm90::pack_pair<T>(result[0], result[1]);
      }
  }

  // The consumer's run of `count` blocks, the first stored block `first`.
  __device__ __forceinline__ void store(const Sm90SddmmAccumulators<Cfg>& acc, int64_t first, int count) const {
    T* values = static_cast<T*>(p.values);
#pragma unroll
    for (int b = 0; b < Cfg::kConsumerBlocks; ++b) {
      if (b >= count) break;
      T* out = values + (first + b) * (Cfg::kBlockH * Cfg::kBlockW);
      // b is a constant once unrolled, so the block's columns stay registers.
      const float* block = &acc.cols[b * Cfg::kBlockW / 2];
      if (p.beta != 0.0f) store_block<true>(block, out);
      else store_block<false>(block, out);
    }
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
