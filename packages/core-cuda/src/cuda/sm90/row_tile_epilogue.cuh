// The row tiles' epilogue: one consumer's 64 x kConsumerN accumulators to C. Finish in
// registers (alpha, beta * C, bias, activation; the thread owns rows r and r + 8 of its warp's
// 16, columns 8j + 2(lane % 4) and the next), stmatrix into a 128B-swizzled staging chunk
// (transposed for column-major C), TMA-store it. The store runs while this warpgroup starts
// its next tile; only the next pass's write into the same staging waits for the store to have
// read it.
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "epilogue_dispatch.cuh"
#include "kernel_params.cuh"
#include "pack.cuh"
#include "row_tile_smem.cuh"
#include "tma.cuh"
#include "warpgroup.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

template <typename T, typename Config>
struct RowTileEpilogue {
  static constexpr int kN = Config::kConsumerN;
  static constexpr int kGroups = Config::kPassColumns / 8;  // 8-column groups per pass
  const RowTileParams& p;
  RowTileSmem<Config> smem;
  int consumer, warp, lane;

  // Four 8x8 tiles of packed results for stmatrix.x4: tile t is rows + 8 * (t % 2) of column
  // group j0 + t / 2, each finished from its accumulators (and C's old values when beta != 0).
  template <bool Accumulate, typename Activation>
  __device__ __forceinline__ void finish_tiles(uint32_t (&fragments)[4], const float (&acc)[kN / 2], const T* c,
                                               int j0, int64_t r0, int col_base, float beta,
                                               const float (&bias_value)[2], Activation activation) const {
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const int j = j0 + t / 2, mb = t % 2;
      const int col = col_base + 8 * j + 2 * (lane % 4);
      float old0 = 0.0f, old1 = 0.0f;
      if constexpr (Accumulate) {
        if (col < p.n) {
          const int64_t row = r0 + 8 * mb;
          const T* c_at = Config::kColMajorC ? c + col * p.ldc + row : c + row * p.ldc + col;
          old0 = Element<T>::to_acc(c_at[0]);
          old1 = Element<T>::to_acc(Config::kColMajorC ? c_at[p.ldc] : c_at[1]);
        }
      }
      fragments[t] = pack_pair<T>(
          epilogue::finish(acc[4 * j + 2 * mb], p.alpha, beta, old0, bias_value[mb], activation.value),
          epilogue::finish(acc[4 * j + 2 * mb + 1], p.alpha, beta, old1, bias_value[mb], activation.value));
    }
  }

  // The four tiles of 8-column groups jp and jp + 1 of this pass (lane l addresses a row of tile
  // t = l / 8, in group jp + t / 2) into staging: 8 groups of 8 columns per 64 x 64 chunk.
  __device__ __forceinline__ void stage_tiles(const uint32_t (&fragments)[4], int jp) const {
    const int t = lane / 8;
    const int group = jp + t / 2;  // 8-column group within this pass
    const SwizzledRows staging = smem.staging(consumer);
    if constexpr (Config::kColMajorC) {
      // Lane l addresses row l % 8 of matrix t transposed: C column 8 * group + l % 8, whose 8
      // elements (rows warp * 16 + 8 * (t % 2) ..) are 16-byte unit 2 warp + t % 2.
      stmatrix_x4_trans(staging.unit(group / 8, 8 * (group % 8) + lane % 8, warp * 2 + t % 2), fragments[0],
                        fragments[1], fragments[2], fragments[3]);
    } else {
      stmatrix_x4(staging.unit(group / 8, warp * 16 + 8 * (t % 2) + lane % 8, group % 8), fragments[0],
                  fragments[1], fragments[2], fragments[3]);
    }
  }

  // One thread stores the pass's staged chunks (64 rows x 64 columns each; column-major C
  // through the map over C^T).
  __device__ __forceinline__ void store_pass(int row_base, int col_base, int pass) const {
#pragma unroll
    for (int chunk = 0; chunk < Config::kStagingChunks; ++chunk) {
      const int col = col_base + pass * Config::kPassColumns + 64 * chunk;
      uint8_t* staged = smem.staging(consumer).chunk(chunk);
      if constexpr (Config::kColMajorC) tma_store_2d(&p.c_map, staged, row_base, col);
      else tma_store_2d(&p.c_map, staged, col, row_base);
    }
    bulk_commit();
  }

  // The consumer's part of the tile at C rows row_base.., columns col_base.., in passes of
  // kPassColumns through its staging.
  template <bool Accumulate, typename Activation>
  __device__ __forceinline__ void store(const float (&acc)[kN / 2], int row_base, int col_base,
                                        Activation activation) const {
    const int thread = threadIdx.x % 128;
    const T* c = static_cast<const T*>(p.c);
    const T* bias = static_cast<const T*>(p.bias);
    const float beta = Accumulate ? p.beta : 0.0f;
    const int64_t r0 = row_base + warp * 16 + lane / 4;
    const float bias_value[2] = {bias ? Element<T>::to_acc(bias[r0]) : 0.0f,
                                 bias ? Element<T>::to_acc(bias[r0 + 8]) : 0.0f};
#pragma unroll
    for (int pass = 0; pass < kN / Config::kPassColumns; ++pass) {
      if (thread == 0) bulk_wait_read<0>();
      named_barrier_sync(1 + consumer, 128);  // staging is free again
#pragma unroll
      for (int jp = 0; jp < kGroups; jp += 2) {
        uint32_t fragments[4];
        finish_tiles<Accumulate>(fragments, acc, c, pass * kGroups + jp, r0, col_base, beta, bias_value,
                                 activation);
        stage_tiles(fragments, jp);
      }
      fence_proxy_async_shared();
      named_barrier_sync(1 + consumer, 128);
      if (thread == 0) store_pass(row_base, col_base, pass);
    }
  }

  // With the activation and beta != 0 as compile-time constants (epilogue_dispatch.cuh).
  __device__ __forceinline__ void operator()(const float (&acc)[kN / 2], int row_base, int col_base) const {
    with_epilogue_constants(p.activation, p.beta, [&](auto activation, auto accumulate) {
      store<decltype(accumulate)::value>(acc, row_base, col_base, activation);
    });
  }
};

}  // namespace bsrmm::cuda::sm90
