// The Hopper SDDMM's epilogue: one consumer's accumulators to its blocks' values, finished by
// ../kernel_parts/epilogue_math.hpp (beta == 0 never reads the old values). The thread owns
// rows r and r + 8 of its warp's 16 (r = lane / 4) and columns 8 j + 2 (lane % 4), + 1 of each
// accumulator (the m64nN layout), stored as one 32-bit pair straight to the row-major block: a
// block is 32 KB against the 2 MB (T = 4096) its unit reads, so staging it through shared
// memory for TMA stores would save little and hold back a ring stage's worth of memory.
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
  __device__ __forceinline__ void store_block(const float (&acc)[Cfg::kN / 2], T* block) const {
    const int row0 = (Cfg::kSplitRows ? consumer * 64 : 0) + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < Cfg::kN / 8; ++j)
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

  // The consumer's blocks of the unit that exist (a unit past the last block repeats it).
  template <typename BlockOf>
  __device__ __forceinline__ void store(const Sm90SddmmAccumulators<Cfg>& acc, int64_t first,
                                        BlockOf block_of) const {
    T* values = static_cast<T*>(p.values);
#pragma unroll
    for (int b = 0; b < Cfg::kConsumerBlocks; ++b) {
      const int64_t block = first + block_of(b);
      if (block >= p.nnzb) continue;
      T* out = values + block * (Cfg::kBlockH * Cfg::kBlockW);
      if (p.beta != 0.0f) store_block<true>(acc.block[b], out);
      else store_block<false>(acc.block[b], out);
    }
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
