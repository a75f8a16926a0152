// The row tiles' producer: one thread walks the CTA's tiles (work_walk.cuh) and TMA-loads each
// tile's stages into the ring, a stage once the consumers (of every CTA of the cluster) have
// released it. A stage holds the 64-deep (32 for 512-wide N tiles) A slices of its blocks and
// the matching K rows of the tile's B panel; a 32-wide block fills half a stage, so a stage
// takes two consecutive blocks of the row, and a row with an odd count ends on a stage whose
// second half is zeros, loaded from past the ends of A and B (skipping those k-steps instead
// would branch around wgmma, which makes ptxas fence every one of them).
#pragma once

#include "cluster.cuh"
#include "kernel_params.cuh"
#include "mbarrier.cuh"
#include "pipeline.cuh"
#include "row_tile_smem.cuh"
#include "tma.cuh"
#include "work_walk.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

template <typename Config>
struct RowTileProducer {
  const RowTileParams& p;
  RowTileSmem<Config> smem;
  uint32_t rank;  // this CTA's N tile within its work item's kCluster tiles
  RingPosition<Config::kStages> ring;

  // Block i (of kBlocksPerStage) of a stage: its A slice, `slice` (of kStagesPerBlock) in K.
  // With a cluster each CTA loads its half of the slice's rows into the same place in both.
  __device__ __forceinline__ void load_a(uint8_t* stage, int i, int a_row, int slice) {
    const int a_col = slice * Config::kSliceK;
    uint8_t* a_slice = RowTileSmem<Config>::a_slice(stage, i);
    uint64_t* full = &smem.full()[ring.stage];
    if constexpr (Config::kCluster > 1) {
      constexpr int kHalf = Config::kBlockH / 2;
      tma_load_2d_multicast(a_slice + rank * kHalf * Config::kSliceRowBytes, &p.a_map, a_col,
                            a_row + int(rank) * kHalf, full, 0b11);
    } else {
      tma_load_2d(a_slice, &p.a_map, a_col, a_row, full);
    }
  }

  // Block i's K rows (from B row k) of the tile's N columns from n0: they sit below block
  // i - 1's in every 64 x 64 chunk of the B panel. Column-major B comes through a map over B^T.
  __device__ __forceinline__ void load_b(uint8_t* stage, int i, int k, int n0) {
    uint8_t* b_rows = RowTileSmem<Config>::b_panel(stage) + i * Config::kSliceK * 128;
    uint64_t* full = &smem.full()[ring.stage];
#pragma unroll
    for (int j = 0; j < Config::kTileN / 64; ++j) {
      const int n = n0 + 64 * j;
      if constexpr (Config::kColMajorB)
        tma_load_2d(b_rows + j * Config::kBChunkBytes, &p.b_map, k, n, full);
      else
        tma_load_2d(b_rows + j * Config::kBChunkBytes, &p.b_map, n, k, full);
    }
  }

  // One stage: K slice `slice` of blocks first .. first + blocks - 1 of the row.
  __device__ __forceinline__ void load_stage(int first, int blocks, int slice, int n0) {
    ring.wait_released(smem.empty());
    uint8_t* stage = smem.stage(ring.stage);
    mbarrier_arrive_expect_tx(&smem.full()[ring.stage], Config::kStageBytes);
#pragma unroll
    for (int i = 0; i < Config::kBlocksPerStage; ++i) {
      const int q = first + i;
      // The half stage after a row's odd last block (never, for blocks 64 wide or more).
      const bool zeros = Config::kBlocksPerStage > 1 && i >= blocks;
      load_a(stage, i, zeros ? p.a_zero_row : q * Config::kBlockH, slice);
      const int k = zeros ? p.b_zero_row : __ldg(p.col_idx + q) * Config::kBlockW + slice * Config::kSliceK;
      load_b(stage, i, k, n0);
    }
    ring.advance();
  }

  // Every stage of every tile of worker `worker` of `workers` (CTAs, or clusters).
  __device__ __forceinline__ void run(int worker, int workers) {
    for (TileWalk walk(p, worker, workers); walk.more(); walk.advance()) {
      const int tile = walk.tile();
      const int item_n = tile / p.tile_slots;
      const int n_tile = item_n * Config::kCluster + int(rank);
      const int row = TileWalk::row_of(p, tile - item_n * p.tile_slots);
      const int n0 = n_tile * Config::kTileN;
      const int end = __ldg(p.row_ptr + row + 1);
      for (int first = __ldg(p.row_ptr + row); first < end; first += Config::kBlocksPerStage) {
        const int blocks = min(Config::kBlocksPerStage, end - first);  // in this stage
#pragma unroll 1
        for (int slice = 0; slice < Config::kStagesPerBlock; ++slice) load_stage(first, blocks, slice, n0);
      }
    }
  }
};

}  // namespace bsrmm::cuda::sm90
