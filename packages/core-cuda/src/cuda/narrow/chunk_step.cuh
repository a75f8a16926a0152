// One step of the lanes-along-K kernels (narrow_kernel.cuh, row_lanes_kernel.cuh): a lane's chunk
// of `Vec` consecutive elements of one row of a block, times the matching `Vec` rows of B, added
// into the lane's `Cols` accumulators (one row of C, columns n0 .. n0 + Cols). Both kernels load
// a batch of steps ahead of their use (A's chunks and the block columns), then multiply them here.
#pragma once

#include "../kernel_parts/element.cuh"
#include "load_run.cuh"
#include "narrow_operands.cuh"

#include <cstdint>

namespace bsrmm::cuda::narrow {

// How a lane reads its B values: whole runs where B's layout and alignment allow it.
enum class BReads : int32_t {
  row_runs,     // B[k][n0 .. n0 + Cols) is contiguous and aligned (row-major B)
  column_runs,  // B[k .. k + Vec)[n] is contiguous and aligned (column-major B, or N = 1)
  elements,     // neither: one element at a time
};

// Where a lane is in its block row's steps: the block (counted from the row's first) and the
// position inside it (the lanes-along-K kernel: 0 .. lanes_per_block; lanes along M: the chunk
// of the lane's row, 0 .. block_width / Vec). Advanced by a fixed amount per step, so no step
// divides (the 64-bit divisions it replaced were most of the instructions at N = 1).
struct Cursor {
  int32_t block;
  int32_t pos;
};

// The A chunk a step multiplies and where B's matching rows start.
template <typename T, int Vec>
struct Step {
  T a[Vec];
  int64_t b_row;  // first row of B (k) for this chunk; -1: nothing to do this step
};

// acc[t] += sum over v of a[v] * B[b_row + v][n0 + t], for the columns below N. `full_chunk`:
// all `Cols` columns are below N (row runs need the whole run).
template <typename T, int Vec, int Cols>
__device__ inline void multiply_step(const NarrowOperands<T>& p, BReads reads, int64_t n0, bool full_chunk,
                                     const Step<T, Vec>& step, typename Element<T>::Acc (&acc)[Cols]) {
  using Acc = typename Element<T>::Acc;
  if (step.b_row < 0) return;
  Acc a[Vec];
#pragma unroll
  for (int v = 0; v < Vec; ++v) a[v] = Element<T>::to_acc(step.a[v]);
  if (reads == BReads::row_runs && full_chunk) {
#pragma unroll
    for (int v = 0; v < Vec; ++v) {
      T b[Cols];
      load_run<T, Cols>(p.b + (step.b_row + v) * p.b_row_step + n0, b);
#pragma unroll
      for (int t = 0; t < Cols; ++t) acc[t] += a[v] * Element<T>::to_acc(b[t]);
    }
  } else if (reads == BReads::column_runs) {
#pragma unroll
    for (int t = 0; t < Cols; ++t) {
      if (n0 + t >= p.n) continue;
      T b[Vec];
      load_run<T, Vec>(p.b + (n0 + t) * p.b_col_step + step.b_row, b);
#pragma unroll
      for (int v = 0; v < Vec; ++v) acc[t] += a[v] * Element<T>::to_acc(b[v]);
    }
  } else {
#pragma unroll
    for (int v = 0; v < Vec; ++v) {
      const T* b_row = p.b + (step.b_row + v) * p.b_row_step + n0 * p.b_col_step;
#pragma unroll
      for (int t = 0; t < Cols; ++t)
        if (n0 + t < p.n) acc[t] += a[v] * Element<T>::to_acc(__ldg(b_row + t * p.b_col_step));
    }
  }
}

}  // namespace bsrmm::cuda::narrow
