// Tiny blocks at large N: C = op(A) B for blocks at most 8 high, with the lanes of a warp along
// N (the warp-row kernel puts them along K, which at large N re-reads A once per 16 columns and
// does one FMA per loaded B element). A warp owns one block row and 32 x PerLane columns of C;
// for each stored block it reads the block once (every lane the same address: one broadcast
// from L1) and each of its B rows once, coalesced along N, and every B element it loads feeds
// the block's height in FMAs from registers. This is the row-split SpMM of CSR libraries, with a
// block's rows sharing each B row.
//
// Pieces: the scheduler (block row x column chunk per warp, chunks of one block row in
// neighbouring warps so its blocks come from L1), the main loop (per block: its B rows, then
// Rows x PerLane FMAs per row), the epilogue (alpha/beta/bias/activation per output).
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "narrow_operands.cuh"

#include <cstdint>

namespace bsrmm::cuda::narrow {

constexpr int kColumnLanesWarps = 8;
constexpr int kColumnLanesMaxRows = 8;

// block_height <= Rows.
template <typename T>
struct ColumnLanesParams : NarrowOperands<T> {
  int32_t column_chunks;  // ceil(n / (32 * PerLane))
};

template <typename T, int Rows, int PerLane>
__global__ void __launch_bounds__(kColumnLanesWarps * 32) column_lanes_kernel(ColumnLanesParams<T> p) {
  using Acc = typename Element<T>::Acc;
  const int lane = threadIdx.x % 32;
  const int64_t warp = int64_t(blockIdx.x) * kColumnLanesWarps + threadIdx.x / 32;
  const int64_t position = warp / p.column_chunks;
  if (position >= p.block_row_count) return;
  const int64_t chunk = warp - position * p.column_chunks;
  const int64_t block_row = p.row_order ? __ldg(p.row_order + position) : position;
  const int32_t bh = p.block_height;
  const int32_t bw = p.block_width;
  const int64_t n0 = chunk * 32 * PerLane + lane;  // this lane's columns: n0 + 32 j

  Acc acc[Rows][PerLane];
#pragma unroll
  for (int r = 0; r < Rows; ++r)
#pragma unroll
    for (int j = 0; j < PerLane; ++j) acc[r][j] = Acc(0);

  const int32_t first = __ldg(p.row_ptr + block_row);
  const int32_t last = __ldg(p.row_ptr + block_row + 1);
  for (int32_t block = first; block < last; ++block) {
    const T* a_block = p.values + int64_t(block) * bh * bw;
    const int64_t k0 = int64_t(__ldg(p.col_idx + block)) * bw;
    for (int32_t k = 0; k < bw; ++k) {
      const T* b_row = p.b + (k0 + k) * p.b_row_step;
      Acc b[PerLane];
#pragma unroll
      for (int j = 0; j < PerLane; ++j) {
        const int64_t col = n0 + 32 * j;
        b[j] = col < p.n ? Element<T>::to_acc(__ldg(b_row + col * p.b_col_step)) : Acc(0);
      }
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        if (r >= bh) break;
        const Acc a = Element<T>::to_acc(__ldg(a_block + r * bw + k));
#pragma unroll
        for (int j = 0; j < PerLane; ++j) acc[r][j] += a * b[j];
      }
    }
  }

  const Acc alpha = Acc(p.alpha);
  const Acc beta = Acc(p.beta);
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    if (r >= bh) break;
    const int64_t row = block_row * bh + r;
    const Acc bias = p.bias ? Element<T>::to_acc(p.bias[row]) : Acc(0);
#pragma unroll
    for (int j = 0; j < PerLane; ++j) {
      const int64_t col = n0 + 32 * j;
      if (col >= p.n) continue;
      T* out = p.c + (p.c_col_major ? col * p.ldc + row : row * p.ldc + col);
      const Acc old = beta != Acc(0) ? Element<T>::to_acc(*out) : Acc(0);
      *out = Element<T>::from_acc(epilogue::finish(acc[r][j], alpha, beta, old, bias, p.activation));
    }
  }
}

}  // namespace bsrmm::cuda::narrow
