// The row tiles' compile-time configuration: the shape named by options (tile_options.cuh),
// e.g. RowTileConfig<Block<64, 32>, NTile<256>, PingPong>, and everything derived from it
// (stage depth, ring stages, who owns which part of a tile, shared-memory bytes).
#pragma once

#include "tile_options.cuh"

namespace bsrmm::cuda::sm90 {

struct RowTileShape {
  int block_height = 0;
  int block_width = 0;
  int n_tile = 256;
  int cluster = 1;
  Schedule schedule = Schedule::SplitTile;
  Layout b_layout = Layout::RowMajor;
  Layout c_layout = Layout::RowMajor;
  int element_bytes = 2;  // of A and B: 2 (f16 / bf16) or 1 (fp8, Fp8Elements)
};

template <typename... Options>
struct RowTileConfig {
  static constexpr RowTileShape kShape = shape_of<RowTileShape, Options...>();
  static constexpr int kBlockH = kShape.block_height;
  static constexpr int kBlockW = kShape.block_width;
  static constexpr int kTileN = kShape.n_tile;
  static constexpr int kCluster = kShape.cluster;
  static constexpr bool kPingPong = kShape.schedule == Schedule::PingPong;
  // CColMajor: C is column-major. The epilogue then stores each staged chunk transposed
  // (stmatrix .trans: 64 columns of C as rows of 64 C elements), through a tensor map over C^T.
  // BColMajor: B is column-major. Its chunks arrive through a map over B^T as 64 columns of 64
  // K each (K contiguous, like A's slices), so wgmma reads B K-major; a 32-wide block's 32 K
  // would fill only half of those 128-byte rows, so blocks that narrow take row-major B only.
  static constexpr bool kColMajorB = kShape.b_layout == Layout::ColMajor;
  static constexpr bool kColMajorC = kShape.c_layout == Layout::ColMajor;
  static constexpr int kElementBytes = kShape.element_bytes;
  static constexpr bool kFp8 = kElementBytes == 1;

  static_assert(kBlockH == 64 || kBlockH == 128, "row tiles take blocks 64 or 128 high");
  static_assert(!kPingPong || kBlockH == 64, "ping-pong consumers take blocks 64 high");
  static_assert(kBlockW == 32 || kBlockW == 64 || kBlockW == 128, "row tiles take blocks 32, 64 or 128 wide");
  static_assert(kCluster == 1 || kCluster == 2);
  static_assert(kCluster == 1 || !kPingPong, "ping-pong consumers run without clusters");
  static constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
  // A stage is 64 deep in K (one 128-byte swizzle row of 16-bit A elements), 32 for N tiles 512
  // wide: their B slice alone would be 64 KB at depth 64, and only 2 such stages would fit.
  // fp8: one block's whole width (64 or 128 bytes), so that each stage is one block, whose
  // product the consumers scale by its block's scale.
  static constexpr int kStageK = kFp8 ? kBlockW : kTileN > 256 ? 32 : 64;
  // One block's A slice: its whole width up to a stage's depth, in the swizzle of that width.
  static constexpr int kSliceK = kBlockW < kStageK ? kBlockW : kStageK;
  static constexpr int kSliceRowBytes = kSliceK * kElementBytes;
  static constexpr int kBlocksPerStage = kStageK / kSliceK;  // 2 for 32-wide blocks
  static constexpr int kStagesPerBlock = kBlockW / kSliceK;  // 2 for 128-wide blocks
  static constexpr int kStepK = 32 / kElementBytes;          // K per wgmma: k16, or k32 for fp8
  static constexpr int kStepsPerSlice = kSliceK / kStepK;
  // Column-major B: a B chunk row is kStageK of K (kBRowBytes), K-major like A's slices.
  static constexpr int kBRowBytes = kStageK * kElementBytes;
  static_assert(!kColMajorB || (kBlocksPerStage == 1 && kBRowBytes >= 64),
                "column-major B needs blocks >= 64 wide and stages of 64 bytes of K or more");
  // fp8 wgmma reads both operands K-major only.
  static_assert(!kFp8 || (kColMajorB && !kColMajorC && kCluster == 1 && !kPingPong && kBlockW >= 64 &&
                          kStagesPerBlock == 1),
                "fp8 row tiles: column-major B, row-major C, one stage per block");
  static_assert(kCluster == 1 || kBlocksPerStage == 1, "A multicast takes one block per stage");
  // Who owns what of a tile: block 128, a consumer each 64 of its rows; block 64, both the same
  // rows and half the N tile each, or (ping-pong) a consumer each whole tile in turn.
  static constexpr bool kSplitM = kBlockH == 128;
  static constexpr bool kSplitN = kBlockH == 64 && !kPingPong;
  static constexpr int kConsumerN = kSplitN ? kTileN / 2 : kTileN;
  // Consumer warps that release a stage (lane 0 of each warp that reads it), per CTA.
  static constexpr int kReleasingWarps = kPingPong ? 4 : 8;
  static_assert(kConsumerN == 64 || kConsumerN == 128 || kConsumerN == 256, "wgmma width per consumer");
  static constexpr int kASliceBytes = kBlockH * kSliceRowBytes;
  static constexpr int kABytes = kBlocksPerStage * kASliceBytes;
  static constexpr int kBChunkBytes = kStageK * 64 * kElementBytes;  // kStageK x 64 columns
  static constexpr int kBBytes = (kTileN / 64) * kBChunkBytes;
  static constexpr int kStageBytes = kABytes + kBBytes;
  // Epilogue staging per consumer: kStagingChunks 64 x 64 chunks (one 128B-swizzled TMA store
  // box each); a consumer's 64 x kConsumerN tile leaves in kConsumerN / kPassColumns passes
  // through it (one chunk when the consumer is only 64 wide).
  static constexpr int kStagingChunks = kConsumerN == 64 ? 1 : 2;
  static constexpr int kPassColumns = 64 * kStagingChunks;
  static constexpr int kStagingBytes = kStagingChunks * 64 * 128;
  static constexpr int kSmemLimit = 227 * 1024;
  static constexpr int kBarrierBytes = 256;
  static constexpr int kStages =
      (kSmemLimit - 1024 - kBarrierBytes - 2 * kStagingBytes) / kStageBytes;
  static_assert(kStages >= 2);
  static constexpr int kSmemBytes = 1024 + kStages * kStageBytes + 2 * kStagingBytes + kBarrierBytes;
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;

  // Stages of a block row holding `blocks` blocks.
  __host__ __device__ static constexpr int stages_of(int blocks) {
    return kBlocksPerStage > 1 ? (blocks + kBlocksPerStage - 1) / kBlocksPerStage : blocks * kStagesPerBlock;
  }
};

}  // namespace bsrmm::cuda::sm90
