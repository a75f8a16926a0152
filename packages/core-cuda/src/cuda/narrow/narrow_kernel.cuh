// The narrow kernel: C = op(A) B where the work is memory-bound, because N is small (decode:
// 1-16 columns) or the blocks are tiny (2x2-8x8, fp64 operators). A is read exactly once per
// `Cols` columns of C at close to HBM speed, so there is no tile for A to fill: a warp streams
// one row slice of a block row (warp_shape.hpp), each lane multiplying its chunk of A by the
// matching rows of B in FMA and keeping one row of C's partial sums in registers; the warp then
// reduces the lanes of each row through shared memory and runs the common epilogue.
//
// Pieces: the scheduler (which row slice and column chunk a warp owns; a long slice may be split
// over several warps), the producer (the next `kDepth` steps' A chunks, loaded before any is used,
// so each lane keeps several 16-byte loads in flight, and the block columns of the batch after,
// so B's reads never wait behind them; at N = 1 the batch's B runs too), the main loop (B rows
// from L1/L2 times the A chunk) and the epilogue (the cross-lane sum, alpha/beta/bias/activation,
// the store).
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "chunk_step.cuh"
#include "load_run.cuh"
#include "narrow_operands.cuh"
#include "warp_shape.hpp"

#include <cstdint>

namespace bsrmm::cuda::narrow {

constexpr int kWarps = 8;  // warps of a CTA: consecutive row slices share B rows in L1
constexpr int kThreads = kWarps * 32;
// Steps of A loaded ahead of their use; fewer where 16 accumulators a lane leave no room.
template <int Cols>
constexpr int kDepth = Cols >= 16 ? 2 : 4;
// CTAs an SM must hold: narrow products are latency-bound, so at 2 columns (32 accumulator bytes
// a lane) the register budget buys occupancy (at most 64 registers a thread). One column holds its
// batch's B runs beside A's chunks too (the main loop), 16 registers more: 3 CTAs an SM (80
// registers), where 4 spilled 158 bytes in the f16 decode kernel; a decode grid has ~2 CTAs an SM
// anyway (docs/perf-log.md entry 91).
template <int Cols>
constexpr int kMinBlocks = Cols == 1 ? 3 : Cols <= 2 ? 4 : 2;

template <typename T>
struct NarrowParams : NarrowOperands<T> {
  WarpShape shape;
  BReads b_reads;
  int32_t column_chunks;  // ceil(n / Cols)
  int32_t split;          // warps sharing one row slice's steps: 1, 2, 4 or 8
};

template <typename T, int Vec, int Cols>
__global__ void __launch_bounds__(kThreads, kMinBlocks<Cols>) narrow_kernel(NarrowParams<T> p) {
  using Acc = typename Element<T>::Acc;
  __shared__ Acc partial[kWarps][Cols][33];

  // Scheduler: a CTA takes kWarps / split consecutive row slices, `split` warps each (more loads
  // in flight where slices are few and long); the column chunks of one group of slices are
  // neighbouring CTAs, so A's second read (N > Cols) comes from L2.
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int32_t split = p.split;
  const int32_t part_of_unit = warp % split;
  const int32_t chunk = int32_t(blockIdx.x % unsigned(p.column_chunks));
  const int64_t unit = int64_t(blockIdx.x / unsigned(p.column_chunks)) * (kWarps / split) + warp / split;
  const WarpShape s = p.shape;
  const bool unit_exists = unit < p.block_row_count * s.slices;
  if (!unit_exists && split == 1) return;  // a split slice's warps meet at a barrier below
  const int64_t position = unit_exists ? unit / s.slices : 0;
  const int32_t slice = int32_t(unit - position * s.slices);
  const int64_t block_row = p.row_order ? __ldg(p.row_order + position) : position;
  const int64_t n0 = int64_t(chunk) * Cols;
  const int32_t bh = p.block_height;
  const int32_t bw = p.block_width;
  const int64_t block_elems = int64_t(bh) * bw;

  // The lane's place in a step: position q of the step's `stride` covers block q / lanes_per_block
  // of the step, row (q % lanes_per_block) / lanes_per_row of the slice, chunk q % lanes_per_row.
  // A lane walks its positions with a Cursor (block of the row, position in the block) advanced
  // by a fixed amount per step: no division per step (the 64-bit divisions it replaced were
  // most of the kernel's instructions at N = 1, docs/perf-log.md entry 42).
  const int32_t first = __ldg(p.row_ptr + block_row);
  const int32_t last = __ldg(p.row_ptr + block_row + 1);
  const int32_t row_blocks = unit_exists ? last - first : 0;
  const int64_t positions = int64_t(row_blocks) * s.lanes_per_block;
  const bool lane_busy = lane < s.stride;
  const int32_t row_in_slice = (lane % s.lanes_per_block) / s.lanes_per_row;
  const int64_t a_row_offset = int64_t(slice * s.rows + row_in_slice) * bw;
  // Where lanes_per_block <= 32 a step moves whole blocks and a lane's chunk never changes;
  // wider blocks (one row a warp) move the chunk too.
  const int32_t fixed_part = (lane % s.lanes_per_block) % s.lanes_per_row;
  const int32_t span = p.split * s.stride;  // positions between one warp's steps
  const Cursor stride_step{span / s.lanes_per_block, span % s.lanes_per_block};
  auto advance = [&](Cursor c) {
    c.block += stride_step.block;
    c.pos += stride_step.pos;
    if (c.pos >= s.lanes_per_block) {
      c.pos -= s.lanes_per_block;
      ++c.block;
    }
    return c;
  };

  // Producer: the block column at a cursor (a batch ahead of its use, so B's reads never wait
  // behind it), then the A chunk and B row there.
  auto load_column = [&](Cursor c) -> int32_t {
    if (!lane_busy || c.block >= row_blocks) return -1;
    return __ldg(p.col_idx + first + c.block);
  };
  auto load_step = [&](Cursor c, int32_t column) {
    Step<T, Vec> step;
    if (column < 0) {
      step.b_row = -1;
#pragma unroll
      for (int v = 0; v < Vec; ++v) step.a[v] = T(0.0f);
      return step;
    }
    const int32_t part = s.rows == 1 ? c.pos : fixed_part;
    load_run<T, Vec>(p.values + int64_t(first + c.block) * block_elems + a_row_offset + int64_t(part) * Vec, step.a);
    step.b_row = int64_t(column) * bw + int64_t(part) * Vec;
    return step;
  };

  // Main loop: acc[t] is this lane's partial sum for C[row][n0 + t].
  Acc acc[Cols];
#pragma unroll
  for (int t = 0; t < Cols; ++t) acc[t] = Acc(0);
  const bool full_chunk = n0 + Cols <= p.n;
  constexpr int kD = kDepth<Cols>;
  const int32_t start = lane + part_of_unit * s.stride;
  // One cursor walks the batch's steps, then the next batch's (whose columns load now).
  Cursor batch{start / s.lanes_per_block, start % s.lanes_per_block};
  int32_t columns[kD];
  Cursor c = batch;
#pragma unroll
  for (int d = 0; d < kD; ++d, c = advance(c)) columns[d] = load_column(c);
  // One column (N = 1, decode) read in runs down B: the batch's B runs load beside its A chunks,
  // before either is used, so a step waits for one round trip, not A's and then B's (ncu of the
  // decode cell put ~23% of warprows' stall samples on B's reads issued inside multiply_step,
  // docs/perf-log.md entry 91). Wider chunks keep B's reads in the step: their runs would take
  // kD x Cols x Vec registers more under the 64-register cap.
  const bool b_with_a = Cols == 1 && p.b_reads == BReads::column_runs;
  for (int64_t base = start - lane; base < positions; base += int64_t(kD) * span) {
    Step<T, Vec> steps[kD];
    c = batch;
#pragma unroll
    for (int d = 0; d < kD; ++d, c = advance(c)) steps[d] = load_step(c, columns[d]);
    batch = c;
    if constexpr (Cols == 1) {
      if (b_with_a) {
        T b[kD][Vec];
#pragma unroll
        for (int d = 0; d < kD; ++d)
          if (steps[d].b_row >= 0) load_run<T, Vec>(p.b + n0 * p.b_col_step + steps[d].b_row, b[d]);
#pragma unroll
        for (int d = 0; d < kD; ++d, c = advance(c)) columns[d] = load_column(c);
#pragma unroll
        for (int d = 0; d < kD; ++d) {
          if (steps[d].b_row < 0) continue;
#pragma unroll
          for (int v = 0; v < Vec; ++v) acc[0] += Element<T>::to_acc(steps[d].a[v]) * Element<T>::to_acc(b[d][v]);
        }
        continue;
      }
    }
#pragma unroll
    for (int d = 0; d < kD; ++d, c = advance(c)) columns[d] = load_column(c);
#pragma unroll
    for (int d = 0; d < kD; ++d) multiply_step<T, Vec, Cols>(p, p.b_reads, n0, full_chunk, steps[d], acc);
  }

  // Epilogue: the lanes (and a split slice's warps) of one row hold disjoint parts of its sum;
  // add them in a fixed order (the result does not depend on timing), then one lane per output
  // applies the epilogue.
#pragma unroll
  for (int t = 0; t < Cols; ++t) partial[warp][t][lane] = acc[t];
  if (split > 1) {
    __syncthreads();
    if (!unit_exists || part_of_unit != 0) return;
  } else {
    __syncwarp();
  }
  const Acc alpha = Acc(p.alpha);
  const Acc beta = Acc(p.beta);
  const int32_t outputs = s.rows * Cols;
  for (int32_t o = lane; o < outputs; o += 32) {
    const int32_t r = o / Cols;
    const int32_t t = o % Cols;
    if (n0 + t >= p.n) continue;
    Acc sum = Acc(0);
    for (int32_t w = warp; w < warp + split; ++w) {
      if (s.lanes_per_block <= 32) {
        for (int32_t base = 0; base < s.stride; base += s.lanes_per_block)
          for (int32_t c = 0; c < s.lanes_per_row; ++c) sum += partial[w][t][base + r * s.lanes_per_row + c];
      } else {
        for (int32_t l = 0; l < 32; ++l) sum += partial[w][t][l];  // one row a warp
      }
    }
    const int64_t row = block_row * bh + int64_t(slice) * s.rows + r;
    const int64_t col = n0 + t;
    const Acc bias = p.bias ? Element<T>::to_acc(p.bias[row]) : Acc(0);
    T* out = p.c + (p.c_col_major ? col * p.ldc + row : row * p.ldc + col);
    const Acc old = beta != Acc(0) ? Element<T>::to_acc(*out) : Acc(0);
    *out = Element<T>::from_acc(epilogue::finish(sum, alpha, beta, old, bias, p.activation));
  }
}

}  // namespace bsrmm::cuda::narrow
