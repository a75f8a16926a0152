// When the narrow kernels are the untuned choice, and how many columns of C a warp computes.
// Plain C++ (no CUDA header): the registry and the CPU-side tests use it.
#pragma once

#include "../../backend/operands.hpp"
#include "../../common/dtype.hpp"
#include "warp_shape.hpp"

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

// Block rows skewed enough that the longest, not the work, sets the time of a kernel that gives
// a block row (or its slice of N) to one warp or one CTA: at least 64 blocks and 8x the mean.
// A power-law pattern (a = 1) has its longest row 23-64x the mean; uniform, banded and stencil
// patterns about 1x, a causal mask 2x.
constexpr int64_t kSkewedMinBlocks = 64;
constexpr int64_t kSkewedRatio = 8;

inline bool skewed_rows(int64_t max_row_blocks, int64_t nnzb, int64_t block_rows) {
  return max_row_blocks >= kSkewedMinBlocks && max_row_blocks * block_rows >= kSkewedRatio * nnzb;
}

// The facts the narrow family's rank and preferences look at.
struct Facts {
  int32_t block_height;
  int32_t block_width;
  int64_t n;
  int32_t element_bytes;  // of A's values
  bool exact_f32;         // f32 in exact mode: the tensor-core tiles run 3xTF32
  bool skewed;            // skewed_rows()
};

inline Facts facts_of(const backend::MatmulArgs& args) {
  const backend::BsrView& a = args.a;
  return Facts{a.block_height, a.block_width, args.c.cols, int32_t(bsrmm::detail::element_size(a.dtype)),
               a.dtype == BSRMM_DTYPE_F32 && args.f32_mode == BSRMM_F32_EXACT,
               skewed_rows(a.max_row_blocks, a.nnzb, a.block_row_count)};
}

// Lanes along M (row_lanes_kernel.cuh): a group of block_height lanes owns a whole block row, so
// blocks at most 16 high (two block rows a warp or more), and a lane holds 1, 2 or 4 columns of
// C (wider N in chunks of 4, each reading A again).
constexpr int32_t kRowLanesMaxRows = 16;
constexpr int kRowLanesMaxCols = 4;

// Below 8 columns no tensor-core family runs (their mma is 8 wide at least) and the narrow
// kernel reads A once at memory speed; from 8 columns the sm90 row tiles' wgmma outruns its FMA
// (8192^2, block 64, N = 8: 16 vs 48 us; docs/perf-log.md entry 39). f64 from 4 columns: the
// DMMA tiles' m8n8k4 is half used there and still ran 1.2-1.7x faster on blocks 32 wide or more
// (32768^2, d 1/64, N = 4: 0.093 vs 0.16 ms; 16x16 0.136 vs 0.130; entry 79). Exact f32 on
// skewed rows up to 32 columns: the 3xTF32 tiles give the longest block row one CTA and ran
// 2.3-9.6x slower than the split slices here (entry 79). f64 16x16 at N = 4: lanes along M ran
// a 27-point stencil 1.35x faster than the DMMA tile (0.536 against 0.723 ms, entry 82). Blocks
// that no tensor-core family takes (a side not a multiple of 16) go to the narrow kernel at every
// N: the generic kernel's 64 x 64 tile is what a 4 x 4 block fills 1/16 of.
inline bool preferred(const Facts& s) {
  const bool tensor_core_shape = s.block_height % 16 == 0 && s.block_width % 16 == 0;
  if (!tensor_core_shape) return true;
  if (s.n < (s.element_bytes == 8 ? 4 : 8)) return true;
  if (s.element_bytes == 8 && s.n <= kRowLanesMaxCols && s.block_height <= kRowLanesMaxRows &&
      s.block_width <= kRowLanesMaxRows)
    return true;
  return s.exact_f32 && s.skewed && s.n <= 2 * kMaxCols;
}

// Split slices (several warps share a long slice's steps) first where rows are skewed at up to 32
// columns: 32x32-64x64 exact f32 power-law at N 8-32, 0.16-0.37 ms against 0.57-1.15 for one
// warp a slice (equal at 128x128); wider N already spreads a row over N / 16 warps (entry 79).
inline bool split_slices_preferred(const Facts& s) { return s.skewed && s.n <= 2 * kMaxCols; }

// Warps a row slice shares in the `splitrows` variants (narrow_kernel.cuh), from the slices
// (`units`: block rows x slices a block row), the chunks of N each slice is run for, the warp
// steps a slice takes (`steps`, the mean) and whether rows are skewed:
// - even rows: enough to bring the warps to ~2048 (16 an SM on the H100), not more. Measured over
//   16 decode-sized cells (N = 1-4, f16 / f32 / f64, blocks 16-128): the best split in every one;
//   a pruned 4096 x 14336 weight (block 64, d 0.25, N = 1) 21.8 -> 15.6 us, 8192^2 block 16
//   21.6 -> 11.2 us, and no split where slices already give 2048 warps (8192^2 block 64: the 8
//   the skewed rule gives ran 27.9 us against 10.4; docs/perf-log.md entry 92);
// - skewed rows: the longest slices set the time, so split while the warps stay under 16384
//   (entry 79; power-law 32x32 f32 at N = 8-32: 0.28-0.32x one warp a slice).
// Each warp keeps two steps or more.
constexpr int32_t kMaxSplit = 8;            // the warps of a CTA
constexpr int64_t kEvenRowsWarps = 2048;
constexpr int64_t kSkewedRowsWarps = 16384;

inline int32_t warps_per_slice(int64_t units, int64_t column_chunks, double steps, bool skewed) {
  int32_t split = 1;
  const auto room = [&](int32_t next) {
    return skewed ? units * split < kSkewedRowsWarps : units * column_chunks * next <= kEvenRowsWarps;
  };
  while (split < kMaxSplit && room(2 * split) && steps / double(2 * split) >= 2.0) split *= 2;
  return split;
}

// Blocks at most 8 high from 32 columns on: lanes along N (column_lanes_kernel.cuh) read A once
// per 32-128 columns and feed each B element to every row of its block, where lanes along K
// re-read A every 16 columns and use each B element once per lane.
constexpr int kColumnLanesMinN = 32;

// Not on skewed rows: a warp owns a block row's slice of N whatever its length, and the longest
// rows set the time (power-law 2x2-8x8 at N 256-1024: 2.4-14x the lanes-along-K kernel). Nor
// where the block rows give too few warps (block rows x slices of N under 4096, ~30 an SM): a
// 4096^2 matrix of 4x4 / 8x8 blocks at N = 64 (1024 / 512 warps) ran 2.4-3x slower than lanes
// along K, and 8x8 at N = 256 (1024 warps) 1.5x; from 4096 warps lanes along N won (2x2 N = 256
// 0.052 against 0.099 ms, 8x8 N = 1024 0.113 against 0.188; entry 79).
constexpr int64_t kColumnLanesMinWarps = 4096;

inline bool column_lanes_preferred(int32_t block_height, int64_t n, bool skewed, int64_t warps) {
  return block_height <= 8 && n >= kColumnLanesMinN && !skewed && warps >= kColumnLanesMinWarps;
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

// Warps of the lanes-along-N kernel: one per block row and slice of N (32 lanes x per lane).
inline int64_t column_lanes_warps(int64_t block_rows, int64_t n, int32_t block_height, int32_t element_bytes) {
  const int64_t slice = 32 * int64_t{column_lanes_per_lane(n, block_height, element_bytes)};
  return block_rows * ((n + slice - 1) / slice);
}

// Where the tiny-block mma kernels (src/cuda/sm80/tiny_block_kernel.cuh; f16 / bf16, B in
// 16-byte aligned rows) are the untuned pick over the kernels here: blocks at least 4 high (an
// n8 mma tile at least half used) from 16 columns of C (one m16 tile of tokens) on, except on
// skewed rows (a warp a block row: bf16 4x4 / 8x8 power-law N 256-1024, 1.1-3x the lanes-along-K
// kernel; entry 79).
inline bool tiny_block_mma_preferred(int32_t block_height, int64_t n, bool skewed) {
  return block_height >= 4 && n >= 16 && !skewed;
}

// Columns of accumulators a lane holds in the kernels made for N <= 4 (lanes along M, packed
// rows): 1, 2 or 4; wider N in chunks of 4.
inline int row_lanes_cols(int64_t n) { return n <= 1 ? 1 : n <= 2 ? 2 : kRowLanesMaxCols; }

inline int64_t row_lanes_warps(int64_t block_rows, int32_t block_height) {
  const int64_t groups = 32 / block_height;
  return (block_rows + groups - 1) / groups;
}

// How well lanes along K (narrow_kernel.cuh) fill a warp on rows of `mean_row_blocks` blocks:
// the steps a warp runs per block row slice, and the share of its lanes that load.
struct LanesAlongKFill {
  double steps;
  double busy;
};

inline LanesAlongKFill lanes_along_k_fill(const WarpShape& shape, double mean_row_blocks) {
  return {mean_row_blocks * double(shape.lanes_per_block) / double(shape.stride), double(shape.stride) / 32.0};
}

// The untuned pick over lanes along K for tiny blocks at N <= 4 (one pass over A) where the block
// rows give the GPU enough warps (~16 an SM) and no row is far longer than the rest (a group of
// lanes walks its block row alone). Measured on 27-point stencils and bands, 2^18 block rows
// (docs/perf-log.md entry 82): 0.03-0.9x the lanes-along-K time, except at N <= 2 where lanes
// along K run 16+ steps a warp with 3/4 of the lanes busy or more (f64 8x8-16x16, f32 / bf16
// 16x16: their fixed cost per block row is paid once per 27 steps; lanes along M 1.01-1.26x).
constexpr int64_t kRowLanesMinWarps = 2048;

inline bool row_lanes_preferred(int32_t block_height, int64_t n, bool skewed, int64_t warps,
                                LanesAlongKFill along_k) {
  if (block_height > kRowLanesMaxRows || n > kRowLanesMaxCols || skewed || warps < kRowLanesMinWarps)
    return false;
  return !(n <= 2 && along_k.steps >= 16.0 && along_k.busy >= 0.75);
}

// The packed-rows kernel (packed_rows_kernel.cuh) computes all of N <= 4 in one pass: 1, 2 or
// 4 columns of accumulators (wider N in chunks of 4, each reading A again).
inline int packed_cols(int64_t n) { return row_lanes_cols(n); }

// Measured on the H100 (docs/perf-log.md entry 49, outcome): the packed kernel loses to the
// lanes-along-K kernel on every case swept (4x4 f64 27-point N = 1: 0.79 vs 0.44 ms; 8x8 f64
// N = 1: 0.72 vs 0.40; 3x3 f64 N = 1: 0.50 vs 0.29; N = 16: 2-3x slower), so it is never the
// untuned pick: it stays a candidate the tuner times and a variant that can be forced.
constexpr int kPackedPreference = 4;

}  // namespace bsrmm::cuda::narrow
