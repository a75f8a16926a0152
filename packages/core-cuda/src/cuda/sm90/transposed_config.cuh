// The transposed tiles' compile-time configuration: the shape named by options
// (tile_options.cuh), e.g. TransposedConfig<Block<32>, Rows<128>, ByRow, WideBlocks>, and
// everything derived from it (chunks of B per consumer, ring stages and producer warps,
// accumulator layout, shared-memory bytes).
#pragma once

#include "tile_options.cuh"
#include "wgmma.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

struct TransposedShape {
  int block_height = 0;
  int block_width = 0;  // Block<H> is square; WideBlocks takes any larger multiple of H
  int rows = 256;       // C rows per tile; rows x 64-column chunks per consumer = 256
  bool by_row = false;
  bool wide = false;
};

template <typename... Options>
struct TransposedConfig {
  static constexpr TransposedShape kShape = shape_of<TransposedShape, Options...>();
  static constexpr int kBlock = kShape.block_height;
  static_assert(kShape.block_width == kBlock, "transposed tiles name square blocks (WideBlocks for wider)");
  static_assert(kBlock == 16 || kBlock == 32 || kBlock == 64);
  static constexpr int kRows = kShape.rows;      // C rows per tile
  static constexpr int kChunks = 256 / kRows;    // 64-column chunks of B per consumer warpgroup
  static_assert(kRows * kChunks == 256 && kRows >= 64 && kRows >= 2 * kBlock);
  // Wgmma by block row instead of by 64-row unit (transposed_mainloop.cuh).
  static constexpr bool kByRow = kShape.by_row;
  // Blocks a multiple of kBlock wide, a stage per kBlock-wide part of each column.
  static constexpr bool kWide = kShape.wide;
  static constexpr int kThreads = 384;
  static constexpr int kGroup = kRows / kBlock;  // block rows per tile (one producer lane each)
  static constexpr int kTileN = 128 * kChunks;
  static constexpr int kBChunkBytes = kBlock * 128;  // kBlock K rows x 64 columns
  static constexpr int kBBytes = 2 * kChunks * kBChunkBytes;
  static constexpr int kBLoadLanes = 2 * kChunks;    // the producer lanes after the A lanes
  static_assert(kGroup + kBLoadLanes <= 32);
  static constexpr int kABytes = kBlock * kBlock * 2;
  static constexpr int kStageBytes = kBBytes + kGroup * kABytes;
  // The epilogue stages at most 128 rows x 64 columns per consumer at a time, which leaves
  // room for more ring stages: the producer's lead over the consumers is what these
  // kernels are short of (at block 32, one stage less of it cost 10%).
  static constexpr int kStagingRows = kRows < 128 ? kRows : 128;
  static constexpr int kStagingBytes = 2 * kStagingRows * 128;
  static constexpr int kSmemLimit = 227 * 1024;
  static constexpr int kStagesFit = (kSmemLimit - 1024 - kStagingBytes - 512) / kStageBytes;
  // Producer warps fill the stages round robin, each stage always by the same warp (so the
  // empty barrier's parity wait can never be two phases behind): stages % warps == 0. Four
  // warps where 8 or more stages fit: at 32 KB of B per stage (block 16, 512 wide) 2 warps and
  // 10 stages ran 1.2x slower than 4 and 8, 1 warp and 11 1.3x. With fewer, every stage counts
  // more than the producer's issue rate: block 32, 512 wide, ran 3-7% faster with 1 warp and 5
  // stages than with 2 and 4 (docs/perf-log.md entry 27).
  static constexpr int kStagesCapped = kStagesFit > 16 ? 16 : kStagesFit;
  static constexpr int kProducerWarps = kStagesFit >= 8 ? 4 : kStagesFit % 2 == 0 ? 2 : 1;
  static constexpr int kStages = kStagesCapped - kStagesCapped % kProducerWarps;
  static_assert(kStages >= 2);
  static constexpr int kSmemBytes = 1024 + kStagingBytes + kStages * kStageBytes + kStages * 24;
  static constexpr int kUnits = kRows / 64;
  static constexpr int kRowsPerUnit = 64 / kBlock;  // block rows in one 64-row unit
  static constexpr uint32_t kUnitMask = (1u << kRowsPerUnit) - 1;
  // Accumulators: per unit (32 floats per chunk and thread: an m64n64) or per block row (Block / 2:
  // an m64nBlock, whose elements are the unit's n = Block * its place ..).
  static constexpr int kAccPerEntry = kByRow ? kBlock / 2 : 32;
  static constexpr int kAccEntries = kByRow ? kGroup : kUnits;
  // The A block's rows (Block * 2 bytes) set the swizzle its K-major operand uses.
  static constexpr Swizzle kASwizzle = swizzle_for_row(kBlock * 2);
  static constexpr uint32_t kAGroupBytes = 8 * kBlock * 2;  // 8 rows: the descriptor's SBO
  // wgmma groups (one per stage) left running before a stage is released: small blocks give
  // each stage only a few short wgmma, so waiting for the previous one alone left the tensor
  // cores idle for most of each wgmma's latency.
  static constexpr int kInFlight = kStages >= 12 ? 4 : kStages >= 6 ? 2 : 1;
  static_assert(kStages % kProducerWarps == 0 && kStages > kInFlight + 1);
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;

  // The rows of every 64-row unit that has at least one of `rows`.
  __device__ static uint32_t active_units_of(uint32_t rows) {
    uint32_t units = 0;
#pragma unroll
    for (int u = 0; u < kUnits; ++u)
      if ((rows >> (u * kRowsPerUnit)) & kUnitMask) units |= kUnitMask << (u * kRowsPerUnit);
    return units;
  }
};

// One consumer's accumulators: per entry (unit, or block row with ByRow), chunk and element.
template <typename Config>
using TransposedAccumulators = float[Config::kAccEntries][Config::kChunks][Config::kAccPerEntry];

// Element i (0..31) of unit u's m64n64 accumulator layout.
template <typename Config>
__device__ __forceinline__ float& unit_acc(TransposedAccumulators<Config>& acc, int u, int chunk, int i) {
  constexpr int kEntriesPerUnit = 32 / Config::kAccPerEntry;
  return acc[u * kEntriesPerUnit + i / Config::kAccPerEntry][chunk][i % Config::kAccPerEntry];
}

}  // namespace bsrmm::cuda::sm90
