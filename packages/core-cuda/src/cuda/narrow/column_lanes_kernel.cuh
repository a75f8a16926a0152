// Tiny blocks at large N: C = op(A) B for blocks at most 8 high, with the lanes of a warp along
// N (the warp-row kernel puts them along K, which at large N re-reads A once per 16 columns and
// does one FMA per loaded B element). A warp owns one block row and 32 x Vec x Groups columns of
// C; for each stored block it reads the block once (every lane the same address: one broadcast
// from L1) and each of its B rows once, coalesced along N, and every B element it loads feeds
// the block's height in FMAs from registers. This is the row-split SpMM of CSR libraries, with a
// block's rows sharing each B row.
//
// A lane's columns are `Groups` runs of `Vec` consecutive columns, the warp's runs side by side
// (run g of lane l starts at column 32 Vec g + Vec l of the warp's chunk): with Vec > 1 (B
// row-major and aligned to the run, which the launcher checks) a lane reads a B row's run in
// one 8- or 16-byte load instead of Vec 2-byte ones, the load instructions that bounded the
// one-element kernel (bf16 1 x 1 stencil, N = 1024: docs/perf-log.md entry 75). A run past N
// goes element by element.
//
// Pieces: the scheduler (block row x column chunk per warp, chunks of one block row in
// neighbouring warps so its blocks come from L1), the main loop (per block: its B
// rows, then Rows x Vec x Groups FMAs per row), the epilogue (alpha/beta/bias/activation per
// output, C's runs stored whole where C is row-major and aligned).
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "load_run.cuh"
#include "narrow_operands.cuh"

#include <cstdint>

namespace bsrmm::cuda::narrow {

constexpr int kColumnLanesWarps = 8;
constexpr int kColumnLanesMaxRows = 8;

// block_height <= Rows.
template <typename T>
struct ColumnLanesParams : NarrowOperands<T> {
  int32_t column_chunks;  // ceil(n / (32 * Vec * Groups))
  bool c_runs;            // C row-major with its rows and base aligned to a run: whole-run stores
};

// B's run of `Vec` columns from `col` in row `b_row` (zeros past N), widened to the accumulator.
template <typename T, int Vec>
__device__ inline void read_b_run(const ColumnLanesParams<T>& p, const T* b_row, int64_t col,
                                  typename Element<T>::Acc (&out)[Vec]) {
  if (Vec > 1 && col + Vec <= p.n) {  // Vec > 1: B row-major, run-aligned (the launcher's check)
    T run[Vec];
    load_run<T, Vec>(b_row + col, run);
#pragma unroll
    for (int v = 0; v < Vec; ++v) out[v] = Element<T>::to_acc(run[v]);
    return;
  }
#pragma unroll
  for (int v = 0; v < Vec; ++v)
    out[v] = col + v < p.n ? Element<T>::to_acc(__ldg(b_row + (col + v) * p.b_col_step))
                           : typename Element<T>::Acc(0);
}

template <typename T, int Rows, int Vec, int Groups>
__global__ void __launch_bounds__(kColumnLanesWarps * 32) column_lanes_kernel(ColumnLanesParams<T> p) {
  using Acc = typename Element<T>::Acc;
  constexpr int kChunk = 32 * Vec * Groups;  // columns of C a warp owns
  const int lane = threadIdx.x % 32;
  const int64_t warp = int64_t(blockIdx.x) * kColumnLanesWarps + threadIdx.x / 32;
  const int64_t position = warp / p.column_chunks;
  const int64_t chunk = warp - position * p.column_chunks;
  if (position >= p.block_row_count) return;
  const int64_t block_row = p.row_order ? __ldg(p.row_order + position) : position;
  const int32_t bh = p.block_height;
  const int32_t bw = p.block_width;
  const int64_t n0 = chunk * kChunk + int64_t(lane) * Vec;  // run g starts at n0 + 32 Vec g

  Acc acc[Rows][Groups][Vec];
#pragma unroll
  for (int r = 0; r < Rows; ++r)
#pragma unroll
    for (int g = 0; g < Groups; ++g)
#pragma unroll
      for (int v = 0; v < Vec; ++v) acc[r][g][v] = Acc(0);

  const int32_t first = __ldg(p.row_ptr + block_row);
  const int32_t last = __ldg(p.row_ptr + block_row + 1);
  for (int32_t block = first; block < last; ++block) {
    const T* a_block = p.values + int64_t(block) * bh * bw;
    const int64_t k0 = int64_t(__ldg(p.col_idx + block)) * bw;
    for (int32_t k = 0; k < bw; ++k) {
      const T* b_row = p.b + (k0 + k) * p.b_row_step;
      Acc b[Groups][Vec];
#pragma unroll
      for (int g = 0; g < Groups; ++g) read_b_run<T, Vec>(p, b_row, n0 + 32 * Vec * g, b[g]);
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        if (r >= bh) break;
        const Acc a = Element<T>::to_acc(__ldg(a_block + r * bw + k));
#pragma unroll
        for (int g = 0; g < Groups; ++g)
#pragma unroll
          for (int v = 0; v < Vec; ++v) acc[r][g][v] += a * b[g][v];
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
    for (int g = 0; g < Groups; ++g) {
      const int64_t col = n0 + 32 * Vec * g;
      if (Vec > 1 && p.c_runs && col + Vec <= p.n) {
        T* out = p.c + row * p.ldc + col;
        T old[Vec];
        if (beta != Acc(0)) load_run_coherent<T, Vec>(out, old);
        T result[Vec];
#pragma unroll
        for (int v = 0; v < Vec; ++v)
          result[v] = Element<T>::from_acc(epilogue::finish(
              acc[r][g][v], alpha, beta, beta != Acc(0) ? Element<T>::to_acc(old[v]) : Acc(0), bias, p.activation));
        store_run<T, Vec>(out, result);
        continue;
      }
#pragma unroll
      for (int v = 0; v < Vec; ++v) {
        if (col + v >= p.n) break;
        T* out = p.c + (p.c_col_major ? (col + v) * p.ldc + row : row * p.ldc + col + v);
        const Acc old = beta != Acc(0) ? Element<T>::to_acc(*out) : Acc(0);
        *out = Element<T>::from_acc(epilogue::finish(acc[r][g][v], alpha, beta, old, bias, p.activation));
      }
    }
  }
}

}  // namespace bsrmm::cuda::narrow
