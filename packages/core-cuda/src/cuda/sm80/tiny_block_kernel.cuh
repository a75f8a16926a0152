// Tiny blocks on the tensor cores (f16 / bf16): C = op(A) B for blocks at most 16 high and of
// any width up to 64, where the tile kernels need sides that are multiples of 16 and the SIMT
// kernels run at 1-5 TFLOPS (docs/perf-log.md entries 71, 73). The product is computed
// transposed, C^T = B^T A^T, so that N fills the mma's 16-row side instead of the block's few
// rows: mma.m16n8k16 with M = 16 tokens (columns of C), N = 8 rows of the block row, K = 16
// "slots". A block row's slots are the B rows its blocks read, block j's column k at slot
// j * W + k, W the block width rounded up to a power of two (so a slot's block and column are a
// shift and a mask; the padding slots are zeros). One k step multiplies 16 slots, from one
// block or several.
//
// Pieces: the scheduler (a warp per block row and tile of 16 x MTiles tokens, a block row's
// tiles in neighbouring warps so its values come from L1), the producer (a step's 16 B rows,
// gathered through the column indices, into this warp's shared memory by cp.async, the end of N
// and padding slots by plain loads and zeros; two stages), the main loop (ldmatrix.trans turns the k-major
// rows into the mma's A fragments; the block values, the mma's B fragment, are read from
// global memory, two slots per register), the epilogue (alpha, beta, bias, activation per
// element, C in either layout).
#pragma once

#include "../kernel_parts/element.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "../narrow/narrow_operands.cuh"
#include "cp_async.cuh"
#include "ldmatrix.cuh"
#include "mma.cuh"

#include <cstdint>
#include <cstring>

namespace bsrmm::cuda::sm80 {

constexpr int kTinyWarps = 4;
constexpr int kTinySlots = 16;         // one mma k step
constexpr int kTinyMaxHeight = 16;     // two n8 tiles
constexpr int kTinyMaxWidth = 64;      // slots per block once rounded up to a power of two

template <typename T>
struct TinyBlockParams : narrow::NarrowOperands<T> {
  int32_t width_shift;  // log2 of the block width rounded up to a power of two
  int32_t token_tiles;  // ceil(n / (16 * MTiles))
};

// One warp's two stages: 16 slot rows of 16 x MTiles tokens, each row padded by 16 bytes so the
// eight rows an ldmatrix reads fall in different banks.
template <int MTiles>
struct TinyStages {
  static constexpr int kRowBytes = 32 * MTiles + 16;
  static constexpr int kStageBytes = kTinySlots * kRowBytes;
};

// The block value at (row r, slot s) of the block row [first, last), 0 on padding or past bh.
template <typename T>
__device__ inline T slot_value(const TinyBlockParams<T>& p, int32_t first, int32_t last, int64_t s, int r) {
  const int64_t block = first + (s >> p.width_shift);
  const int32_t k = int32_t(s & ((int64_t(1) << p.width_shift) - 1));
  if (block >= last || k >= p.block_width || r >= p.block_height) return T(0.0f);
  return __ldg(p.values + (block * p.block_height + r) * p.block_width + k);
}

template <typename T>
__device__ inline uint32_t pack_pair(T low, T high) {
  uint16_t lo, hi;
  memcpy(&lo, &low, 2);
  memcpy(&hi, &high, 2);
  return uint32_t(lo) | (uint32_t(hi) << 16);
}

template <typename T, typename Mma, int MTiles, int NTiles>
__global__ void __launch_bounds__(kTinyWarps * 32) tiny_block_kernel(TinyBlockParams<T> p) {
  using Stages = TinyStages<MTiles>;
  constexpr int kTokens = 16 * MTiles;
  __shared__ alignas(16) unsigned char smem[kTinyWarps][2][Stages::kStageBytes];
  const int lane = threadIdx.x % 32;
  const int warp_in_cta = threadIdx.x / 32;

  // Scheduler.
  const int64_t warp = int64_t(blockIdx.x) * kTinyWarps + warp_in_cta;
  const int64_t position = warp / p.token_tiles;
  if (position >= p.block_row_count) return;
  const int64_t tile = warp - position * p.token_tiles;
  const int64_t block_row = p.row_order ? __ldg(p.row_order + position) : position;
  const int64_t n0 = tile * kTokens;
  const int32_t first = __ldg(p.row_ptr + block_row);
  const int32_t last = __ldg(p.row_ptr + block_row + 1);
  const int64_t slots = int64_t(last - first) << p.width_shift;
  const int64_t steps = (slots + kTinySlots - 1) / kTinySlots;

  // Producer: lane l copies slot row l % 16 of the step, 16-byte chunks l / 16, + 2, + 4, ...
  auto stage = [&](int64_t step, int buffer) {
    const int64_t s = step * kTinySlots + lane % kTinySlots;
    const int64_t block = first + (s >> p.width_shift);
    const int32_t k = int32_t(s & ((int64_t(1) << p.width_shift) - 1));
    const bool live = block < last && k < p.block_width;
    const T* row = live ? p.b + (int64_t(__ldg(p.col_idx + block)) * p.block_width + k) * p.b_row_step : p.b;
    unsigned char* dst = smem[warp_in_cta][buffer] + (lane % kTinySlots) * Stages::kRowBytes;
#pragma unroll
    for (int c = 0; c < MTiles; ++c) {
      const int chunk = lane / kTinySlots + 2 * c;
      const int64_t col = n0 + chunk * 8;
      const int64_t left = live ? p.n - col : 0;
      if (left >= 8) {
        cp_async_16(dst + chunk * 16, row + col, 16);
      } else {
        // The end of N, a padding slot or a dead one: element by element (a 16-byte copy
        // would reach past B's last row), zeros after.
        T* to = reinterpret_cast<T*>(dst + chunk * 16);
#pragma unroll 1
        for (int e = 0; e < 8; ++e) to[e] = e < left ? __ldg(row + col + e) : T(0.0f);
      }
    }
    cp_async_commit();
  };

  float acc[MTiles][NTiles][4];
#pragma unroll
  for (int i = 0; i < MTiles; ++i)
#pragma unroll
    for (int j = 0; j < NTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  const int g = lane / 4;
  const int q = lane % 4;
  if (steps > 0) stage(0, 0);
  for (int64_t step = 0; step < steps; ++step) {
    if (step + 1 < steps) {
      stage(step + 1, int((step + 1) & 1));
    } else {
      cp_async_commit();  // an empty group keeps wait<1> meaning "this step's rows are in"
    }
    // The mma's B fragment: the block values of rows j * 8 + g at slots 2q, 2q + 1, 2q + 8, 2q + 9.
    uint32_t values[NTiles][2];
    const int64_t s0 = step * kTinySlots + 2 * q;
#pragma unroll
    for (int j = 0; j < NTiles; ++j) {
      const int r = j * 8 + g;
      values[j][0] = pack_pair(slot_value(p, first, last, s0, r), slot_value(p, first, last, s0 + 1, r));
      values[j][1] = pack_pair(slot_value(p, first, last, s0 + 8, r), slot_value(p, first, last, s0 + 9, r));
    }
    cp_async_wait<1>();
    __syncwarp();
    // Main loop: per 16 tokens, the A fragment from the k-major rows (ldmatrix.trans), then one
    // mma per 8 rows of the block row.
    const unsigned char* buffer = smem[warp_in_cta][step & 1];
    const int ld_row = (lane % 8) + 8 * (lane / 16);
    const int ld_col_bytes = 16 * ((lane / 8) % 2);
#pragma unroll
    for (int i = 0; i < MTiles; ++i) {
      uint32_t a[4];
      ldmatrix_x4_trans(a, buffer + ld_row * Stages::kRowBytes + i * 32 + ld_col_bytes);
#pragma unroll
      for (int j = 0; j < NTiles; ++j) Mma::run(acc[i][j], a, values[j]);
    }
    __syncwarp();  // every lane's reads of this buffer are done before it is refilled
  }

  // Epilogue: acc[i][j] holds C^T[token g (+8)][row 2q (+1)] of token tile i and row tile j.
  using Acc = float;
  const Acc alpha = Acc(p.alpha);
  const Acc beta = Acc(p.beta);
#pragma unroll
  for (int j = 0; j < NTiles; ++j) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = j * 8 + 2 * q + half;
      if (r >= p.block_height) continue;
      const int64_t row = block_row * p.block_height + r;
      const Acc bias = p.bias ? Element<T>::to_acc(p.bias[row]) : Acc(0);
#pragma unroll
      for (int i = 0; i < MTiles; ++i) {
#pragma unroll
        for (int upper = 0; upper < 2; ++upper) {
          const int64_t col = n0 + i * 16 + g + 8 * upper;
          if (col >= p.n) continue;
          T* out = p.c + (p.c_col_major ? col * p.ldc + row : row * p.ldc + col);
          const Acc old = beta != Acc(0) ? Element<T>::to_acc(*out) : Acc(0);
          *out = Element<T>::from_acc(
              epilogue::finish(acc[i][j][2 * upper + half], alpha, beta, old, bias, p.activation));
        }
      }
    }
  }
}

}  // namespace bsrmm::cuda::sm80
