// The transposed tiles' main loop: one consumer warpgroup's wgmma over a tile's stages (one per
// column of the group, until the empty column that ends the tile), D = (its kChunks x 64
// columns of the B slice)^T x (the A blocks)^T. kInFlight stages' wgmma groups stay running
// before the oldest stage goes back to the producer.
//  - By unit (64 C rows: 4 blocks of 16, 2 of 32, 1 of 64): per 64-column chunk, one m64n64
//    wgmma per k16 step for each unit with a block in this column, the unit's slots read as
//    one 64-row operand (the producer zero-fills the slots of absent rows).
//  - By row (ByRow): one m64nBlock wgmma per k16 step for each block, into the block row's own
//    accumulators, nothing zero-filled. At low density most units hold a single block, so
//    this does 1/2 to 1/4 of the tensor work, which bounds these kernels on uniform patterns;
//    where columns hold several rows of a unit (skewed patterns, whose long rows the plan
//    groups together) the unit's single wgmma is cheaper (perf-log entry 29).
#pragma once

#include "mbarrier.cuh"
#include "pipeline.cuh"
#include "smem.cuh"
#include "transposed_config.cuh"
#include "transposed_smem.cuh"
#include "wgmma.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

// Rows of A (a unit of 64, or one block of Block) against this consumer's 64 columns of the B
// slice: Block / 16 k-steps of m64nRowsk16. k-steps advance the B slice by 16 rows (2048 bytes)
// and the A rows by 32 bytes (16 elements of their K-major rows); descriptors count 16-byte
// units in their low bits.
template <typename T, int Block, int Rows>
__device__ __forceinline__ void issue_rows(float (&acc)[Rows / 2], uint64_t b_chunk, uint64_t a_rows) {
#pragma unroll
  for (int k = 0; k < Block / 16; ++k)
    wgmma_m64k16<T, Rows, 1, 0>(acc, b_chunk + uint64_t(k * (2048 >> 4)), a_rows + uint64_t(k * 2));
}

template <typename T, typename Config>
struct TransposedMainloop {
  static constexpr int kBlock = Config::kBlock;
  TransposedSmem<Config> smem;
  int consumer, lane;
  RingPosition<Config::kStages> ring;     // next stage to consume
  RingPosition<Config::kStages> release;  // oldest stage not yet handed back to the producer

  // The wgmma of the stage at the ring's position for the group's `rows` that have its column.
  __device__ __forceinline__ void issue_stage(TransposedAccumulators<Config>& acc, uint32_t rows) {
    const uint32_t stage = smem_address(smem.stage(ring.stage));
    const uint64_t b_chunks = wgmma_descriptor(stage + consumer * Config::kChunks * Config::kBChunkBytes,
                                               Config::kBChunkBytes, 1024, Swizzle::b128);
    const uint64_t a_slots =
        wgmma_descriptor(stage + Config::kBBytes, 16, Config::kAGroupBytes, Config::kASwizzle);
    const auto b_chunk = [&](int c) { return b_chunks + uint64_t(c * (Config::kBChunkBytes >> 4)); };
    const auto a_slot = [&](int slot) { return a_slots + uint64_t(slot * (Config::kABytes >> 4)); };
    if constexpr (Config::kByRow) {
#pragma unroll
      for (int r = 0; r < Config::kGroup; ++r) {
        if ((rows >> r) & 1u) {
          wgmma_fence();
#pragma unroll
          for (int c = 0; c < Config::kChunks; ++c) issue_rows<T, kBlock, kBlock>(acc[r][c], b_chunk(c), a_slot(r));
        }
      }
    } else {
#pragma unroll
      for (int u = 0; u < Config::kUnits; ++u) {
        if ((rows >> (u * Config::kRowsPerUnit)) & Config::kUnitMask) {
          wgmma_fence();
#pragma unroll
          for (int c = 0; c < Config::kChunks; ++c)
            issue_rows<T, kBlock, 64>(acc[u][c], b_chunk(c), a_slot(u * Config::kRowsPerUnit));
        }
      }
    }
    wgmma_commit();
  }

  // Zeroes the accumulators and runs the tile's stages up to its ending column; every stage
  // has gone back to the producer and the accumulators are complete when it returns.
  __device__ __forceinline__ void run(TransposedAccumulators<Config>& acc) {
#pragma unroll
    for (int e = 0; e < Config::kAccEntries; ++e)
#pragma unroll
      for (int c = 0; c < Config::kChunks; ++c)
#pragma unroll
        for (int i = 0; i < Config::kAccPerEntry; ++i) acc[e][c][i] = 0.0f;

    int in_flight = 0;  // stages whose wgmma may still read them, oldest at `release`
    uint64_t* full = smem.full();
    uint64_t* empty = smem.empty();
    for (;;) {
      mbarrier_wait(&full[ring.stage], ring.phase);
      // Broadcast from lane 0 so ptxas sees a warp-uniform value: a branch it must treat as
      // divergent around wgmma makes it serialise every wgmma.
      const uint32_t rows = __shfl_sync(0xffffffffu, smem.meta()[ring.stage], 0);
      if (rows == 0) {
        wgmma_wait<0>();
        if (lane == 0) {
          for (int i = 0; i < in_flight; ++i, release.advance()) mbarrier_arrive(&empty[release.stage]);
          mbarrier_arrive(&empty[ring.stage]);
        }
        ring.advance();
        release = ring;
        break;
      }
      issue_stage(acc, rows);
      ring.advance();
      if (++in_flight > Config::kInFlight) {
        wgmma_wait<Config::kInFlight>();
        if (lane == 0) mbarrier_arrive(&empty[release.stage]);
        release.advance();
        --in_flight;
      }
    }
#pragma unroll
    for (int e = 0; e < Config::kAccEntries; ++e)
#pragma unroll
      for (int c = 0; c < Config::kChunks; ++c) wgmma_fence_operands(acc[e][c]);
  }
};

}  // namespace bsrmm::cuda::sm90
