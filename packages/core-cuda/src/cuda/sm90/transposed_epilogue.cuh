// The transposed tiles' epilogue, by 64-row units. The thread holds D[m][n] of a unit as
// unit_acc(u, chunk, 4j + 2mb (+1)) for m = 16 warp + lane/4 + 8mb, n = 8j + 2(lane%4) (+1),
// D[m][n] = C[row n][column m]. Finish in registers (alpha, beta * C, bias, activation),
// stmatrix.trans into a staging tile of up to 128 rows x 64 columns (16-byte units swizzled by
// row so the 8 rows of one stmatrix land in different banks), then store whole 128-byte row
// segments of C (16 bytes a thread); one pass per 64-column chunk and staging tile's worth of
// rows.
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "epilogue_dispatch.cuh"
#include "kernel_params.cuh"
#include "pack.cuh"
#include "transposed_config.cuh"
#include "transposed_smem.cuh"
#include "warpgroup.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

// The C rows of a tile: its row r (0 .. Rows - 1) is row r % Block of the group's block row
// r / Block, block row group_rows[first_slot + r / Block] of C, which is only there while that
// index is below block_rows (the last group may be short).
template <typename Config>
struct TransposedTileRows {
  const TransposedParams& p;
  int first_slot;

  __device__ bool has(int r) const { return first_slot + r / Config::kBlock < p.block_rows; }
  __device__ int64_t c_row(int r) const {
    return int64_t(__ldg(p.group_rows + first_slot + r / Config::kBlock)) * Config::kBlock + r % Config::kBlock;
  }
};

template <typename T, typename Config>
struct TransposedEpilogue {
  static constexpr int kUnitsPerPass = Config::kStagingRows / 64;
  static constexpr int kRowParts = Config::kUnits / kUnitsPerPass;  // passes per 64-column chunk
  const TransposedParams& p;
  TransposedSmem<Config> smem;
  int consumer, thread, warp, lane;
  T* c;
  const T* bias;

  // The four 8x8 tiles of 16 C rows (rows_base ..: 8-row groups 2jj, 2jj + 1 of unit u) for
  // stmatrix.x4.trans, finished from the accumulators of this pass's chunk of B.
  template <bool Accumulate, typename Activation>
  __device__ __forceinline__ void finish_rows(uint32_t (&fragments)[2][2], TransposedAccumulators<Config>& acc,
                                              int u, int jj, int chunk_of_b, int64_t rows_base, int column_base,
                                              float beta, Activation activation) const {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int j = 2 * jj + h;  // 8-row group of the unit
      const int64_t row = rows_base + 8 * h + 2 * (lane % 4);
      const float bias0 = bias ? Element<T>::to_acc(bias[row]) : 0.0f;
      const float bias1 = bias ? Element<T>::to_acc(bias[row + 1]) : 0.0f;
#pragma unroll
      for (int mb = 0; mb < 2; ++mb) {
        const int column = column_base + warp * 16 + 8 * mb + lane / 4;
        float old0 = 0.0f, old1 = 0.0f;
        if (Accumulate && column < p.n) {
          old0 = Element<T>::to_acc(c[row * p.ldc + column]);
          old1 = Element<T>::to_acc(c[(row + 1) * p.ldc + column]);
        }
        const float low = unit_acc<Config>(acc, u, chunk_of_b, 4 * j + 2 * mb);
        const float high = unit_acc<Config>(acc, u, chunk_of_b, 4 * j + 2 * mb + 1);
        fragments[h][mb] = pack_pair<T>(epilogue::finish(low, p.alpha, beta, old0, bias0, activation.value),
                                        epilogue::finish(high, p.alpha, beta, old1, bias1, activation.value));
      }
    }
  }

  // The staged rows (row_part's kStagingRows of the tile) to C, 16 bytes a thread.
  __device__ __forceinline__ void store_staged(const TransposedTileRows<Config>& rows, int row_part,
                                               int column_base) const {
    const SwizzledRows staging = smem.staging(consumer);
#pragma unroll 4
    for (int store = 0; store < Config::kStagingRows / 16; ++store) {
      const int staging_row = store * 16 + thread / 8;
      const int chunk = thread % 8;
      const int tile_row = row_part * Config::kStagingRows + staging_row;
      const int column = column_base + 8 * chunk;
      if (rows.has(tile_row) && column < p.n)
        *reinterpret_cast<uint4*>(c + rows.c_row(tile_row) * p.ldc + column) =
            *reinterpret_cast<const uint4*>(staging.unit(staging_row, chunk));
    }
  }

  template <bool Accumulate, typename Activation>
  __device__ __forceinline__ void store(TransposedAccumulators<Config>& acc, int n_tile,
                                        const TransposedTileRows<Config>& rows, Activation activation) const {
    const float beta = Accumulate ? p.beta : 0.0f;
    const SwizzledRows staging = smem.staging(consumer);
#pragma unroll
    for (int pass = 0; pass < Config::kChunks * kRowParts; ++pass) {
      const int chunk_of_b = pass / kRowParts;  // this pass's 64 columns
      const int row_part = pass % kRowParts;    // and its staged rows
      const int column_base = n_tile * Config::kTileN + (consumer * Config::kChunks + chunk_of_b) * 64;
      named_barrier_sync(1 + consumer, 128);  // the previous stores have read staging
#pragma unroll
      for (int uu = 0; uu < kUnitsPerPass; ++uu) {
        const int u = row_part * kUnitsPerPass + uu;
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {  // 16 C rows of the unit per stmatrix.x4
          // The 16 rows are in one block row (Block >= 16): all there or none.
          if (!rows.has(u * 64 + 16 * jj)) continue;
          uint32_t fragments[2][2];
          finish_rows<Accumulate>(fragments, acc, u, jj, chunk_of_b, rows.c_row(u * 64 + 16 * jj), column_base,
                                  beta, activation);
          const int tile_index = lane / 8;  // which of the 4 tiles this lane addresses
          const int staging_row = uu * 64 + 16 * jj + 8 * (tile_index / 2) + lane % 8;
          stmatrix_x4_trans(staging.unit(staging_row, 2 * warp + tile_index % 2), fragments[0][0],
                            fragments[0][1], fragments[1][0], fragments[1][1]);
        }
      }
      named_barrier_sync(1 + consumer, 128);
      store_staged(rows, row_part, column_base);
    }
  }

  // With the activation and beta != 0 as compile-time constants (epilogue_dispatch.cuh).
  __device__ __forceinline__ void operator()(TransposedAccumulators<Config>& acc, int n_tile,
                                             const TransposedTileRows<Config>& rows) const {
    with_epilogue_constants(p.activation, p.beta, [&](auto activation, auto accumulate) {
      store<decltype(accumulate)::value>(acc, n_tile, rows, activation);
    });
  }
};

}  // namespace bsrmm::cuda::sm90
