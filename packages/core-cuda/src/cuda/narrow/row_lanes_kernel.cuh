// Lanes along M: C = op(A) B for blocks at most 16 high (kRowLanesMaxRows) at small N (sparse matrix-vector products
// of stencil and finite-element operators, 2x2-8x8 blocks, N = 1-4). A group of block_height
// lanes owns a whole block row, one lane a row of C: each lane walks its row through every block
// of the block row in chunks of up to 16 bytes, multiplying each chunk by the matching rows of B
// (chunk_step.cuh), so a lane's sums are whole rows of C and no lane ever adds another's. The
// lanes-along-K kernel (narrow_kernel.cuh) gives a 4x4 block row of a 27-point stencil one warp
// that finishes after ~3 steps, then sums its lanes through shared memory: its fixed cost per
// block row was most of its instructions (issue-bound, docs/perf-log.md entry 78). Here a warp
// holds 32 / block_height block rows and runs their whole length.
//
// A warp's loads stay coalesced in pieces: the lanes of a group read one block's rows side by
// side (a 4x4 f32 block: 4 lanes x 16 bytes, one 64-byte piece), the next step the next piece.
// A lane's rows of consecutive blocks are block_height x block_width elements apart.
//
// Pieces: the scheduler (groups of lanes to block rows, longest rows first where the plan sorted
// them, chunks of N in neighbouring CTAs), the producer (a batch of `kRowLanesDepth` steps' A
// chunks loaded before any is used, and the block columns of the batch after), the main loop
// (multiply_step) and the epilogue (alpha/beta/bias/activation per output, stored by its lane).
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "chunk_step.cuh"
#include "heuristic.hpp"
#include "load_run.cuh"
#include "narrow_operands.cuh"

#include <cstdint>

namespace bsrmm::cuda::narrow {

constexpr int kRowLanesWarps = 8;
constexpr int kRowLanesThreads = kRowLanesWarps * 32;
constexpr int kRowLanesDepth = 4;  // steps of A a lane loads ahead of their use
// CTAs an SM must hold (registers a thread: 48 at 5, 64 at 4, 85 at 3, 128 at 2). Latency-bound,
// so occupancy first: at one column 5 CTAs (48 registers) where a lane's chunks are at most 8
// bytes, measured faster there (f64 3x3 27-point 0.89x, f32 2x2 0.92x, bf16 4x4 0.93x the time
// at 4 CTAs); f64 / f32 in 16-byte chunks ran slower at 5 (f64 4x4 27-point 1.05x, 8x8 1.15x,
// f32 4x4 1.09x), and 2-byte ones would spill 60-96 bytes there (f16 8x8 still ran 0.90x; bf16
// not measured), so they keep their caps (docs/perf-log.md entry 92). Four 16-byte chunks of
// 2-byte elements (32 values widened to f32 as they are used) spilled at 64 registers.
template <typename T, int Vec, int Cols>
constexpr int kRowLanesMinBlocks =
    Cols > 2 ? 2 : (Cols == 1 && Vec * sizeof(T) <= 8) ? 5 : (sizeof(T) == 2 && Vec == 8 ? 3 : 4);

template <typename T>
struct RowLanesParams : NarrowOperands<T> {
  BReads b_reads;
  int32_t groups;          // block rows a warp owns: 32 / block_height
  int32_t chunks_per_row;  // block_width / Vec: a lane's steps per block
  int32_t column_chunks;   // ceil(n / Cols)
};

template <typename T, int Vec, int Cols>
__global__ void __launch_bounds__(kRowLanesThreads, kRowLanesMinBlocks<T, Vec, Cols>) row_lanes_kernel(RowLanesParams<T> p) {
  using Acc = typename Element<T>::Acc;

  // Scheduler: lane -> (group, row of the block); the CTA's warps take consecutive groups of
  // block rows; the column chunks of one set of block rows are neighbouring CTAs (A from L2).
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int32_t bh = p.block_height;
  const int32_t bw = p.block_width;
  const int32_t group = lane / bh;
  const int32_t row_in_block = lane - group * bh;
  const int32_t chunk = int32_t(blockIdx.x % unsigned(p.column_chunks));
  const int64_t position =
      (int64_t(blockIdx.x / unsigned(p.column_chunks)) * kRowLanesWarps + warp) * p.groups + group;
  if (group >= p.groups || position >= p.block_row_count) return;  // no barrier below
  const int64_t block_row = p.row_order ? __ldg(p.row_order + position) : position;
  const int64_t n0 = int64_t(chunk) * Cols;
  const int32_t first = __ldg(p.row_ptr + block_row);
  const int32_t row_blocks = __ldg(p.row_ptr + block_row + 1) - first;
  const int32_t chunks = p.chunks_per_row;
  const int64_t block_elems = int64_t(bh) * bw;
  const T* a_row = p.values + int64_t(first) * block_elems + int64_t(row_in_block) * bw;

  // Producer: the block column at a cursor (a batch ahead of its use), then the A chunk there.
  auto advance = [&](Cursor c) {
    if (++c.pos == chunks) {
      c.pos = 0;
      ++c.block;
    }
    return c;
  };
  auto load_column = [&](Cursor c) -> int32_t {
    return c.block < row_blocks ? __ldg(p.col_idx + first + c.block) : -1;
  };
  auto load_step = [&](Cursor c, int32_t column) {
    Step<T, Vec> step;
    if (column < 0) {
      step.b_row = -1;
#pragma unroll
      for (int v = 0; v < Vec; ++v) step.a[v] = T(0.0f);
      return step;
    }
    load_run<T, Vec>(a_row + int64_t(c.block) * block_elems + c.pos * Vec, step.a);
    step.b_row = int64_t(column) * bw + c.pos * Vec;
    return step;
  };

  // Main loop: acc[t] is this lane's sum for C[row][n0 + t].
  Acc acc[Cols];
#pragma unroll
  for (int t = 0; t < Cols; ++t) acc[t] = Acc(0);
  const bool full_chunk = n0 + Cols <= p.n;
  const int64_t steps = int64_t(row_blocks) * chunks;
  constexpr int kD = kRowLanesDepth;
  Cursor batch{0, 0};
  int32_t columns[kD];
  Cursor c = batch;
#pragma unroll
  for (int d = 0; d < kD; ++d, c = advance(c)) columns[d] = load_column(c);
  for (int64_t base = 0; base < steps; base += kD) {
    Step<T, Vec> loaded[kD];
    c = batch;
#pragma unroll
    for (int d = 0; d < kD; ++d, c = advance(c)) loaded[d] = load_step(c, columns[d]);
    batch = c;
#pragma unroll
    for (int d = 0; d < kD; ++d, c = advance(c)) columns[d] = load_column(c);
#pragma unroll
    for (int d = 0; d < kD; ++d) multiply_step<T, Vec, Cols>(p, p.b_reads, n0, full_chunk, loaded[d], acc);
  }

  // Epilogue: the lane's sums are whole outputs.
  const Acc alpha = Acc(p.alpha);
  const Acc beta = Acc(p.beta);
  const int64_t row = block_row * bh + row_in_block;
  const Acc bias = p.bias ? Element<T>::to_acc(p.bias[row]) : Acc(0);
#pragma unroll
  for (int t = 0; t < Cols; ++t) {
    const int64_t col = n0 + t;
    if (col >= p.n) continue;
    T* out = p.c + (p.c_col_major ? col * p.ldc + row : row * p.ldc + col);
    const Acc old = beta != Acc(0) ? Element<T>::to_acc(*out) : Acc(0);
    *out = Element<T>::from_acc(epilogue::finish(acc[t], alpha, beta, old, bias, p.activation));
  }
}

}  // namespace bsrmm::cuda::narrow
