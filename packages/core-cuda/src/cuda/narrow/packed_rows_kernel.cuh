// The packed-rows kernel: C = op(A) B for tiny blocks (1 to 16 high, any shape) at N = 1 to 4
// (wider N in chunks of 4 columns, each reading A again), the sparse matrix-vector products of
// finite-element and stencil codes. A is all but the whole
// traffic there, so the kernel streams a block row's packed values as one array: a warp owns a
// block row, its lanes read it in 16-byte chunks, contiguous across the warp, `Depth x Rounds`
// chunks a lane issued before any is used (with the block columns beside them: neither depends
// on the other), so each warp has up to 4 KB of A in flight from one read of row_ptr. The
// lanes-along-K kernel (narrow_kernel.cuh) waits on a block's column before loading its values
// and keeps a lane on one row of a block, which leaves lanes idle on 3- and 6-wide blocks.
//
// Pieces: the slot map (packed_shape.hpp: an iteration covers whole blocks, so each of a lane's
// chunk elements is the same row and column of a block in every iteration; decoded once per
// thread), the scheduler (warps stride over block rows x column chunks, longest rows first where
// the plan ordered them, the next row's span loaded during this one), the producer (the batch's chunks and block columns), the FMA loop (B gathered by block
// column through the read-only cache), the epilogue (per output row, the lanes' slot sums added
// by a butterfly of shuffles in a fixed order, then alpha/beta/bias/activation and one store).
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "narrow_kernel.cuh"
#include "packed_shape.hpp"

#include <cstdint>

namespace bsrmm::cuda::narrow {

// Whether a (dtype, rounds, columns) kernel fits the accumulator budget (packed_shape.hpp):
// only those are compiled.
template <typename T, int Rounds, int Cols>
constexpr bool kPackedFits =
    Rounds * (16 / int(sizeof(T))) * Cols * int(sizeof(typename Element<T>::Acc)) <= kPackedAccBytes &&
    Rounds * (16 / int(sizeof(T))) <= kPackedMaxSlots;

constexpr int kPackedWarps = 4;  // 128-thread CTAs: the register file splits finer than by 8 warps
constexpr int kPackedThreads = kPackedWarps * 32;
// Elements a lane loads before using any (with their block columns and Cols B values each, all
// in registers): 16 at one column, so 8 f64 chunks (4 KB a warp: a 27-block 4x4 f64 block row
// in one batch), 4 f32 chunks, 2 16-bit chunks; 16 / Cols at more (at least one chunk). More
// pushed the kernels to 230-255 registers or into spills.
template <int Cols>
constexpr int kPackedElementsInFlight = 16 / Cols;
// CTAs an SM must hold: 20 warps with 1-4 KB of A in flight each cover HBM latency (~18 KB an
// SM on an H100), at most 96 registers a thread (80, for 24 warps, spilled the f64 one-column
// kernel); 16 warps (128 registers) where a lane keeps 8 accumulators or more, or loads several
// chunks an iteration.
template <int Rounds, int Slots, int Cols>
constexpr int kPackedMinBlocks = Rounds == 1 && Slots * Cols < 8 ? 5 : 4;

// block_height <= kPackedMaxHeight.
template <typename T>
struct PackedParams : NarrowOperands<T> {
  bool b_row_runs;  // B[k][n0 .. n0 + Cols) is one aligned run where the chunk is full (row-major B)
  int32_t column_chunks;     // ceil(n / Cols): N above 4 reads A once per 4 columns
  int64_t total_elems;       // nnzb * bh * bw: the end of `values` (its last chunk may be partial)
  int32_t lanes;             // PackedShape::lanes
  int32_t iteration_blocks;  // PackedShape::iteration_blocks
  int32_t period_blocks;     // PackedShape::period_blocks
};

// A chunk element's place, fixed for the thread: block offset in the iteration (bits 20+), row
// in the block (bits 16-19), column in the block (bits 0-15).
struct Slot {
  uint32_t bits;
  __device__ int32_t block() const { return int32_t(bits >> 20); }
  __device__ int32_t row() const { return int32_t((bits >> 16) & 0xF); }
  __device__ int32_t col() const { return int32_t(bits & 0xFFFF); }
};

// A work item's block row (in the plan's order), its stored blocks and its column chunk.
struct RowSpan {
  int64_t block_row = 0;
  int32_t first = 0;
  int32_t last = 0;
  int32_t chunk = 0;
};

template <typename T>
__device__ inline RowSpan fetch_span(const PackedParams<T>& p, int64_t item) {
  RowSpan span;
  const int64_t position = p.column_chunks == 1 ? item : item / p.column_chunks;
  span.chunk = int32_t(item - position * p.column_chunks);
  span.block_row = p.row_order ? __ldg(p.row_order + position) : position;
  span.first = __ldg(p.row_ptr + span.block_row);
  span.last = __ldg(p.row_ptr + span.block_row + 1);
  return span;
}

template <typename Acc>
__device__ inline Acc warp_sum(Acc v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T, int Rounds, int Cols>
__global__ void __launch_bounds__(kPackedThreads, (kPackedMinBlocks<Rounds, Rounds * 16 / int(sizeof(T)), Cols>)) packed_rows_kernel(PackedParams<T> p) {
  using Acc = typename Element<T>::Acc;
  constexpr int kVec = 16 / int(sizeof(T));
  constexpr int kChunks = kPackedElementsInFlight<Cols> / kVec > 0 ? kPackedElementsInFlight<Cols> / kVec : 1;
  constexpr int kDepth = kChunks / Rounds > 0 ? kChunks / Rounds : 1;
  const int lane = threadIdx.x % 32;
  const bool loads = lane < p.lanes;
  const int32_t bh = p.block_height;
  const int32_t bw = p.block_width;
  const int32_t block_elems = bh * bw;

  // Slot map: element j of the lane's chunk u sits at position (u * lanes + lane) * vec + j of
  // every iteration (a whole number of blocks, 16-byte aligned).
  Slot slots[Rounds][kVec];
#pragma unroll
  for (int u = 0; u < Rounds; ++u)
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const int32_t position = (u * p.lanes + lane) * kVec + j;
      const int32_t block = position / block_elems;
      const int32_t in_block = position - block * block_elems;
      const int32_t row = in_block / bw;
      slots[u][j].bits = (uint32_t(block) << 20) | (uint32_t(row) << 16) | uint32_t(in_block - row * bw);
    }

  // Work items: (block row, column chunk), the chunks of one block row in neighbouring warps so
  // A's second read comes from L2. The next item's row span loads while this one's chunks do,
  // so a row waits on row_ptr only at the warp's first item.
  const int64_t warps = int64_t(gridDim.x) * kPackedWarps;
  const int64_t items = p.block_row_count * p.column_chunks;
  int64_t item = int64_t(blockIdx.x) * kPackedWarps + threadIdx.x / 32;
  RowSpan next = item < items ? fetch_span(p, item) : RowSpan{};
  for (; item < items; item += warps) {
    const RowSpan span = next;
    if (item + warps < items) next = fetch_span(p, item + warps);
    const int64_t block_row = span.block_row;
    const int32_t first = span.first;
    const int32_t last = span.last;
    const int64_t n0 = span.chunk * Cols;
    const int64_t width = p.n - n0 < Cols ? p.n - n0 : Cols;  // columns of this chunk
    const bool runs = p.b_row_runs && width == Cols;
    const T* b_chunk = p.b + n0 * p.b_col_step;

    Acc acc[Rounds][kVec][Cols];
#pragma unroll
    for (int u = 0; u < Rounds; ++u)
#pragma unroll
      for (int j = 0; j < kVec; ++j)
#pragma unroll
        for (int t = 0; t < Cols; ++t) acc[u][j][t] = Acc(0);

    // The row's first period starts at or before its first block: elements before `first` (the
    // previous block row's) are loaded with it but masked, as are those from `last` on.
    const int32_t start = first - first % p.period_blocks;
    for (int32_t batch = start; batch < last; batch += kDepth * p.iteration_blocks) {
      // Producer: every chunk of the batch and every element's block column, all independent.
      T a[kDepth][Rounds][kVec];
      int32_t column[kDepth][Rounds][kVec];
#pragma unroll
      for (int d = 0; d < kDepth; ++d)
#pragma unroll
        for (int u = 0; u < Rounds; ++u) {
          const int32_t base = batch + d * p.iteration_blocks;
          const int32_t lo = base + slots[u][0].block();
          const int32_t hi = base + slots[u][kVec - 1].block();
          const int64_t element = int64_t(base) * block_elems + int64_t(u * p.lanes + lane) * kVec;
          if (loads && hi >= first && lo < last) {
            if (element + kVec <= p.total_elems) {
              load_run<T, kVec>(p.values + element, a[d][u]);
            } else {  // the array's last chunk ends inside these 16 bytes
#pragma unroll
              for (int j = 0; j < kVec; ++j) a[d][u][j] = element + j < p.total_elems ? p.values[element + j] : T(0.0f);
            }
          } else {
#pragma unroll
            for (int j = 0; j < kVec; ++j) a[d][u][j] = T(0.0f);
          }
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            const int32_t block = base + slots[u][j].block();
            const bool valid = loads && block >= first && block < last;
            if (j > 0 && slots[u][j].block() == slots[u][j - 1].block())
              column[d][u][j] = column[d][u][j - 1];  // same block: no second load
            else
              column[d][u][j] = valid ? __ldg(p.col_idx + block) : -1;
            if (!valid) column[d][u][j] = -1;
          }
        }
      // FMA: each element times its row of B (k = column * bw + column in block).
#pragma unroll
      for (int d = 0; d < kDepth; ++d)
#pragma unroll
        for (int u = 0; u < Rounds; ++u)
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            if (column[d][u][j] < 0) continue;
            const Acc value = Element<T>::to_acc(a[d][u][j]);
            const int64_t k = int64_t(column[d][u][j]) * bw + slots[u][j].col();
            const T* b_row = b_chunk + k * p.b_row_step;
            if (runs) {
              T b[Cols];
              load_run<T, Cols>(b_row, b);
#pragma unroll
              for (int t = 0; t < Cols; ++t) acc[u][j][t] += value * Element<T>::to_acc(b[t]);
            } else {
#pragma unroll
              for (int t = 0; t < Cols; ++t)
                if (t < width) acc[u][j][t] += value * Element<T>::to_acc(__ldg(b_row + t * p.b_col_step));
            }
          }
    }

    // Epilogue: output o = r * Cols + t (row r of the block row, column t) is summed by every
    // lane over its slots on row r, then across the warp; lane o % 32 keeps it.
    const int32_t outputs = bh * Cols;
    Acc low = Acc(0), high = Acc(0);  // outputs lane and lane + 32
    for (int32_t r = 0; r < bh; ++r) {
#pragma unroll
      for (int t = 0; t < Cols; ++t) {
        Acc v = Acc(0);
#pragma unroll
        for (int u = 0; u < Rounds; ++u)
#pragma unroll
          for (int j = 0; j < kVec; ++j)
            if (slots[u][j].row() == r) v += acc[u][j][t];
        v = warp_sum(v);
        const int32_t o = r * Cols + t;
        if (o == lane) low = v;
        if (o == lane + 32) high = v;
      }
    }
    const Acc alpha = Acc(p.alpha);
    const Acc beta = Acc(p.beta);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int32_t o = lane + 32 * half;
      const int32_t t = o % Cols;
      if (o >= outputs || t >= width) continue;
      const int64_t row = block_row * bh + o / Cols;
      const Acc bias = p.bias ? Element<T>::to_acc(p.bias[row]) : Acc(0);
      const int64_t col = n0 + t;
      T* out = p.c + (p.c_col_major ? col * p.ldc + row : row * p.ldc + col);
      const Acc old = beta != Acc(0) ? Element<T>::to_acc(*out) : Acc(0);
      *out = Element<T>::from_acc(epilogue::finish(half ? high : low, alpha, beta, old, bias, p.activation));
    }
  }
}

}  // namespace bsrmm::cuda::narrow
