// The Hopper SDDMM's compile-time shape: Sm90SddmmConfig<T, BlockH, BlockW, XColMajor, YColMajor>
// and what follows from it (blocks per unit, who owns what, stage bytes, ring depth).
//
// A unit of work is kBlocks consecutive stored blocks (2, or 4 of 64 x 64), so a CTA's tile is
// 128 x 256 (128 x 128 blocks), 64 x 256 (64 x 64 in fours) or 128 x 128 (the mixed shapes):
// consecutive blocks mostly share a block row, and then their X slice is loaded once for all of
// them (a 128 x 128 tile alone would read 1/3 more bytes per flop, past what L2 delivers: the
// row tiles measured L2 at 88% with 128 x 256 tiles, docs/perf-log.md).
// A stage is 64 deep in T (one 128-byte swizzle row of 16-bit elements) and holds, for each
// block of the unit, its X slice (BlockH x 64 t) and its Y slice (BlockW x 64 t), both as 64 x 64
// boxes of 8 KB: X row-major and Y column-major land T-contiguous (wgmma reads them K-major), X
// column-major and Y row-major land M- / N-contiguous (MN-major).
// Consumers: blocks 128 high, each of the two consumer warpgroups owns 64 rows of every block
// of the unit; blocks 64 high, each owns half of the unit's blocks (all 64 rows).
#pragma once

namespace bsrmm::cuda::sddmm_kernels {

template <typename T_, int BlockH, int BlockW, bool XColMajor_, bool YColMajor_>
struct Sm90SddmmConfig {
  using T = T_;
  static constexpr int kBlockH = BlockH;
  static constexpr int kBlockW = BlockW;
  static constexpr bool kXColMajor = XColMajor_;
  static constexpr bool kYColMajor = YColMajor_;
  static_assert(BlockH == 64 || BlockH == 128, "blocks 64 or 128 high");
  static_assert(BlockW == 64 || BlockW == 128, "blocks 64 or 128 wide");

  static constexpr int kBlocks = BlockH == 64 && BlockW == 64 ? 4 : 2;  // per unit
  static constexpr bool kSplitRows = BlockH == 128;  // else the consumers split the blocks
  static constexpr int kConsumerBlocks = kSplitRows ? kBlocks : kBlocks / 2;
  static constexpr int kN = BlockW;  // wgmma m64nN per block of a consumer

  static constexpr int kStageT = 64;
  static constexpr int kBoxBytes = 64 * 64 * 2;  // one 64 x 64 TMA box, 128B-swizzled
  static constexpr int kXSliceBytes = BlockH * kStageT * 2;
  static constexpr int kYSliceBytes = BlockW * kStageT * 2;
  static constexpr int kXBytes = kBlocks * kXSliceBytes;
  static constexpr int kStageBytes = kXBytes + kBlocks * kYSliceBytes;

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
