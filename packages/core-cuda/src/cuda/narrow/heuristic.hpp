// When the narrow kernels are the untuned choice, and how many columns of C a warp computes.
// Plain C++ (no CUDA header): the registry and the CPU-side tests use it.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::narrow {

// Columns of C per warp: each column is one accumulator per lane, so N above this is covered by
// several warps per row slice, each reading the slice's A again (from L2: they run side by side).
constexpr int kMaxCols = 16;

inline int columns_per_warp(int64_t n) {
  int cols = 1;
  while (cols < kMaxCols && cols < n) cols *= 2;
  return cols;
}

// Below 8 columns no tensor-core family runs (their mma is 8 wide at least) and the narrow
// kernel reads A once at memory speed; from 8 columns the sm90 row tiles' wgmma outruns its FMA
// (8192^2, block 64, N = 8: 16 vs 48 us; docs/perf-log.md entry 39). Blocks that no tensor-core
// family takes (a side not a multiple of 16) go to the narrow kernel at every N: the generic
// kernel's 64 x 64 tile is what a 4 x 4 block fills 1/16 of.
inline bool preferred(int32_t block_height, int32_t block_width, int64_t n) {
  const bool tensor_core_shape = block_height % 16 == 0 && block_width % 16 == 0;
  return n < 8 || !tensor_core_shape;
}

// Blocks at most 8 high from 32 columns on: lanes along N (column_lanes_kernel.cuh) read A once
// per 32-128 columns and feed each B element to every row of its block, where lanes along K
// re-read A every 16 columns and use each B element once per lane.
constexpr int kColumnLanesMinN = 32;

inline bool column_lanes_preferred(int32_t block_height, int64_t n) {
  return block_height <= 8 && n >= kColumnLanesMinN;
}

// Blocks at most this high may own 8 columns a lane (8 rows x 8 columns would be 64
// accumulators a lane).
constexpr int kColumnLanesWideRows = 4;

// Columns of C a lane owns in the lanes-along-N kernel: as many as N fills across the warp's 32
// lanes, up to 4, or 8 for 2-byte elements in blocks at most 4 high (one 16-byte run of B a
// lane). More columns mean more FMAs per block read and wider loads of B, but more registers
// and fewer warps: 8 columns of f32 or f64 (two runs) measured slower than 4 on the H100
// (docs/perf-log.md entry 75).
inline int column_lanes_per_lane(int64_t n, int32_t block_height, int32_t element_bytes) {
  if (n >= 256 && block_height <= kColumnLanesWideRows && element_bytes == 2) return 8;
  return n >= 128 ? 4 : n >= 64 ? 2 : 1;
}

// Where the tiny-block mma kernels (src/cuda/sm80/tiny_block_kernel.cuh; f16 / bf16, B in
// 16-byte aligned rows) are the untuned pick over the kernels here: blocks at least 4 high (an
// n8 mma tile at least half used) from 16 columns of C (one m16 tile of tokens) on.
inline bool tiny_block_mma_preferred(int32_t block_height, int64_t n) {
  return block_height >= 4 && n >= 16;
}

// The packed-rows kernel (packed_rows_kernel.cuh) computes all of N <= 4 in one pass: 1, 2 or
// 4 columns of accumulators (wider N in chunks of 4, each reading A again).
inline int packed_cols(int64_t n) { return n <= 1 ? 1 : n <= 2 ? 2 : 4; }

// Measured on the H100 (docs/perf-log.md entry 49, outcome): the packed kernel loses to the
// lanes-along-K kernel on every case swept (4x4 f64 27-point N = 1: 0.79 vs 0.44 ms; 8x8 f64
// N = 1: 0.72 vs 0.40; 3x3 f64 N = 1: 0.50 vs 0.29; N = 16: 2-3x slower), so it is never the
// untuned pick: it stays a candidate the tuner times and a variant that can be forced.
constexpr int kPackedPreference = 4;

}  // namespace bsrmm::cuda::narrow
