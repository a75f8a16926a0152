// Global -> shared copies of one pipeline step: the BM x KC slice of an A block and the KC x BN
// panel of B it multiplies, 16 bytes per cp.async. Columns of B past N are zero-filled (they
// read nothing), so any N works; the k range is always inside B because K is a whole number of
// blocks.
#pragma once

#include "cp_async.cuh"
#include "tensorop_params.cuh"

namespace bsrmm::cuda::sm80 {

template <class Cfg>
struct OperandLoader {
  using T = typename Cfg::T;
  static constexpr int V = Cfg::kVector;

  const TensorOpParams& p;
  int64_t a_row0;  // first row of the CTA's slice inside a block
  int64_t n0;      // first column of the CTA's N tile

  // Copies `total` 16-byte chunks, chunk i by thread i % threads; a compile-time trip count.
  template <int total, class Copy>
  __device__ static void for_each_chunk(Copy copy) {
#pragma unroll
    for (int i = 0; i < (total + Cfg::kThreads - 1) / Cfg::kThreads; ++i) {
      const int chunk = i * Cfg::kThreads + int(threadIdx.x);
      if (total % Cfg::kThreads == 0 || chunk < total) copy(chunk);
    }
  }

  // block: index of the A block; kc: first column inside it; b_row: first row of B (col*bw+kc).
  __device__ void load(T* a_stage, T* b_stage, int32_t block, int32_t kc, int64_t b_row) const {
    const T* a_block = static_cast<const T*>(p.values) +
                       int64_t(block) * p.block_height * p.block_width + a_row0 * p.block_width + kc;
    constexpr int a_chunks_per_row = Cfg::kKC / V;
    for_each_chunk<Cfg::kBM * a_chunks_per_row>([&](int chunk) {
      const int r = chunk / a_chunks_per_row;
      const int v = chunk % a_chunks_per_row;
      cp_async_16(a_stage + r * Cfg::kAStride + v * V, a_block + int64_t(r) * p.block_width + v * V,
                  16);
    });

    const T* b = static_cast<const T*>(p.b);
    if constexpr (Cfg::kBColMajor) {
      constexpr int chunks_per_column = Cfg::kKC / V;
      for_each_chunk<Cfg::kBN * chunks_per_column>([&](int chunk) {
        const int nn = chunk / chunks_per_column;
        const int v = chunk % chunks_per_column;
        const int64_t n = n0 + nn;
        const bool inside = n < p.n;
        const T* src = inside ? b + n * p.ldb + b_row + v * V : b;
        cp_async_16(b_stage + nn * Cfg::kBStride + v * V, src, inside ? 16 : 0);
      });
    } else {
      constexpr int chunks_per_row = Cfg::kBN / V;
      for_each_chunk<Cfg::kKC * chunks_per_row>([&](int chunk) {
        const int r = chunk / chunks_per_row;
        const int v = chunk % chunks_per_row;
        const int64_t n = n0 + v * V;
        const int64_t left = p.n - n;
        const int bytes = left >= V ? 16 : left > 0 ? int(left) * int(sizeof(T)) : 0;
        const T* src = bytes > 0 ? b + (b_row + r) * p.ldb + n : b;
        cp_async_16(b_stage + r * Cfg::kBStride + v * V, src, bytes);
      });
    }
  }
};

}  // namespace bsrmm::cuda::sm80
