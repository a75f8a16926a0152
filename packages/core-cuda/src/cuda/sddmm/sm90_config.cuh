// The Hopper SDDMM's compile-time shape, named by options as the sm90 matmul families' are
// (../sm90/tile_options.cuh): Sm90SddmmConfig<T, Block<128, 64>, XColMajor>, and what follows from it (blocks per unit, who owns what, stage bytes, ring depth).
//
// A unit of work is kBlocks consecutive stored blocks, as many as make a tile 256 wide for
// blocks 128 high (2 of 128 x 128, 4 of 128 x 64) and 512 wide for blocks 64 high (4 of 64 x 128,
// 8 of 64 x 64). A unit runs as passes, one per block row it touches (sm90_unit.cuh: a pass is a
// run of same-row blocks), so a stage only ever holds one X slice: a full 128 x 128 pair is a
// 128 x 256 tile, 48 KB per 64-deep stage for 4.2 MFLOP (the forward row tile's ratio: a 128 x 128
// tile alone would read 1/3 more bytes per flop, past what L2 delivers, docs/perf-log.md), and
// the ring is 4 deep; blocks 64 high run 64 x 512 tiles (72 KB, 3 stages: 17 KB per MFLOP from
// L2 instead of 64 x 256's 19).
// A stage is 64 deep in T (one 128-byte swizzle row of 16-bit elements) and holds the pass's X
// slice (BlockH x 64 t) and each block's Y slice (BlockW x 64 t), both as 64 x 64 boxes of 8 KB,
// the Y slices of consecutive blocks adjacent so that a run of them is one wide wgmma operand:
// X row-major and Y column-major land T-contiguous (wgmma reads them K-major), X column-major and
// Y row-major land M- / N-contiguous (MN-major).
// Consumers: blocks 128 high, each of the two consumer warpgroups owns 64 rows of every block of
// the pass; blocks 64 high, each owns half of the pass's blocks (all 64 rows). Either way a
// consumer's share is at most 256 columns: one m64n256 wgmma per k16 step at most.
#pragma once

#include "../sm90/tile_options.cuh"

namespace bsrmm::cuda::sddmm_kernels {

struct Sm90SddmmShape {
  int block_height = 0;
  int block_width = 0;
  sm90::Layout x_layout = sm90::Layout::RowMajor;
  sm90::Layout y_layout = sm90::Layout::RowMajor;
};

// X column-major (a weight gradient's dY^T): its slices arrive M-contiguous (MN-major for wgmma).
struct XColMajor {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.x_layout = sm90::Layout::ColMajor;
  }
};

// Y column-major: its slices arrive T-contiguous (K-major for wgmma).
struct YColMajor {
  template <typename Shape>
  static constexpr void apply(Shape& shape) {
    shape.y_layout = sm90::Layout::ColMajor;
  }
};

template <typename T_, typename... Options>
struct Sm90SddmmConfig {
  using T = T_;
  static constexpr Sm90SddmmShape kShape = sm90::shape_of<Sm90SddmmShape, Options...>();
  static constexpr int kBlockH = kShape.block_height;
  static constexpr int kBlockW = kShape.block_width;
  static constexpr bool kXColMajor = kShape.x_layout == sm90::Layout::ColMajor;
  static constexpr bool kYColMajor = kShape.y_layout == sm90::Layout::ColMajor;
  static_assert(kBlockH == 64 || kBlockH == 128, "blocks 64 or 128 high");
  static_assert(kBlockW == 64 || kBlockW == 128, "blocks 64 or 128 wide");

  static constexpr bool kSplitRows = kBlockH == 128;  // else the consumers split the blocks
  static constexpr int kTileW = kSplitRows ? 256 : 512;
  static constexpr int kBlocks = kTileW / kBlockW;  // per unit
  static constexpr int kConsumerBlocks = kSplitRows ? kBlocks : kBlocks / 2;  // at most, per pass
  static constexpr int kConsumerCols = kConsumerBlocks * kBlockW;  // 256
  static constexpr int kAccumulators = kConsumerCols / 2;  // floats a thread, the m64n256 layout

  static constexpr int kStageT = 64;
  static constexpr int kBoxBytes = 64 * 64 * 2;  // one 64 x 64 TMA box, 128B-swizzled
  static constexpr int kXSliceBytes = kBlockH * kStageT * 2;
  static constexpr int kYSliceBytes = kBlockW * kStageT * 2;
  static constexpr int kStageBytes = kXSliceBytes + kBlocks * kYSliceBytes;

  static constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
  static constexpr int kReleasingWarps = 8;  // lane 0 of each consumer warp frees a stage
  static constexpr int kSmemLimit = 227 * 1024;
  static constexpr int kBarrierBytes = 256;
  static constexpr int kMaxStages = 8;
  static constexpr int kFitStages = (kSmemLimit - 1024 - kBarrierBytes) / kStageBytes;
  static constexpr int kStages = kFitStages < kMaxStages ? kFitStages : kMaxStages;
  static_assert(kStages >= 3);
  static constexpr int kSmemBytes = 1024 + kStages * kStageBytes + kBarrierBytes;
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;
};

}  // namespace bsrmm::cuda::sddmm_kernels
