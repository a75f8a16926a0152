// The transposed tiles' producer: up to 4 warps of warpgroup 0 walk each tile's merged columns
// (the union of its row group's column indices, which the plan computed once per matrix:
// redoing the merge per tile in every warp was two thirds of the producer's time on an H100),
// 32 entries per load; lane g < kGroup counts block row g's blocks (q: its next one). A stage
// is one column (or one kBlock-wide part of it, for wide blocks): its B slice, loaded once for
// every row of the group that has the column, and those rows' A blocks. Warp w fills stages
// w, w + kProducerWarps, ... of the walk: one warp doing the barrier and TMA work of every
// column left the consumers waiting ~45% of their time.
#pragma once

#include "kernel_params.cuh"
#include "mbarrier.cuh"
#include "pipeline.cuh"
#include "tma.cuh"
#include "transposed_smem.cuh"
#include "work_walk.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

template <typename Config>
struct TransposedProducer {
  const TransposedParams& p;
  TransposedSmem<Config> smem;
  int lane, producer_warp;
  int parts;  // stages per column: p.block_parts for wide blocks, else 1
  RingPosition<Config::kStages> ring;
  uint32_t stage_count = 0;

  // One column's stage: its B slice (two 64-column halves) and the A blocks of the rows that
  // have it; rows == 0 ends the tile (no bytes: the consumers only read meta).
  __device__ __forceinline__ void fill_stage(int column, int part, uint32_t rows, int q, int n_tile) {
    uint64_t* full = smem.full();
    uint32_t* dirty = smem.dirty();
    ring.wait_released(smem.empty());
    uint8_t* stage = smem.stage(ring.stage);
    // By unit, rows of an active unit without a block here are read by its wgmma: the slots
    // that still hold an older column's block get a box entirely outside A, which TMA fills
    // with zeros (and counts like any other box). By row reads only present rows: no
    // bookkeeping.
    const uint32_t active = Config::kByRow ? 0u : Config::active_units_of(rows);
    const uint32_t stale = Config::kByRow ? 0u : dirty[ring.stage] & ~rows & active;
    __syncwarp();
    if (lane == 0) {
      if (!Config::kByRow && rows) dirty[ring.stage] = (dirty[ring.stage] & ~active) | rows;
      smem.meta()[ring.stage] = rows;
      mbarrier_arrive_expect_tx(&full[ring.stage],
                                rows ? Config::kBBytes + __popc(rows | stale) * Config::kABytes : 0);
    }
    __syncwarp();
    uint8_t* slot = TransposedSmem<Config>::a_slot(stage, lane);
    if (rows & (1u << lane))
      tma_load_2d(slot, &p.a_map, part * Config::kBlock, q * Config::kBlock, &full[ring.stage]);
    else if (stale & (1u << lane))
      tma_load_2d(slot, &p.a_map, 0, p.a_zero_row, &full[ring.stage]);
    // The B slice: one box of all its 64-column chunks when B is mapped as chunks (one
    // request instead of 2 x Chunks: the requests of a warp's lanes issue one after another,
    // and at 8 per column they held a lone producer warp back), else a box per chunk.
    const int k = (column * parts + part) * Config::kBlock;  // the B slice's first row
    if (rows && p.b_column_chunks && lane == 31) {
      tma_load_3d(stage, &p.b_map, 0, k, n_tile * (Config::kTileN / 64), &full[ring.stage]);
    } else if (rows && !p.b_column_chunks && lane >= 32 - Config::kBLoadLanes) {
      const int chunk = lane - (32 - Config::kBLoadLanes);
      tma_load_2d(TransposedSmem<Config>::b_chunk(stage, chunk), &p.b_map,
                  n_tile * Config::kTileN + 64 * chunk, k, &full[ring.stage]);
    }
  }

  // Lane i's entry base + i of the merged columns ending at `end`; past the end (0, 0): the
  // empty column that ends the tile.
  __device__ __forceinline__ uint2 entries_at(int base, int end) const {
    return base + lane < end ? __ldg(p.group_columns + base + lane) : make_uint2(0, 0);
  }

  // Every stage of one tile: its row group's merged columns, then the ending column.
  __device__ __forceinline__ void fill_tile(int n_tile, int group) {
    const int first_slot = group * Config::kGroup;  // the group's row i is group_rows[first_slot + i]
    int q = lane < Config::kGroup && first_slot + lane < p.block_rows
                ? __ldg(p.row_ptr + __ldg(p.group_rows + first_slot + lane))
                : 0;
    const int end = __ldg(p.group_column_begin + group + 1);
    int base = __ldg(p.group_column_begin + group);
    uint2 held = entries_at(base, end);
    for (;;) {
      const uint2 coming = entries_at(base + 32, end);  // lands while these 32 are issued
      const int count = min(32, end - base + 1);        // + 1: the ending column, once
      // One stage per pass; entry j moves on after its last part (at once for square blocks
      // and for the ending column). (A nested loop over the parts cost square blocks ~30% at
      // N = 16, this one 3-5%, hence WideBlocks.)
      int part = 0;
#pragma unroll 1
      for (int j = 0; j < count;) {
        const int column = int(__shfl_sync(0xffffffffu, held.x, j));
        const uint32_t rows = __shfl_sync(0xffffffffu, held.y, j);
        if (stage_count++ % Config::kProducerWarps == uint32_t(producer_warp))
          fill_stage(column, Config::kWide ? part : 0, rows, q, n_tile);
        ring.advance();
        if (Config::kWide && rows && ++part < parts) continue;
        part = 0;
        q += (rows >> lane) & 1;
        ++j;
      }
      if (base + 32 > end) break;
      base += 32;
      held = coming;
    }
  }

  __device__ __forceinline__ void run() {
    for (TileWalk walk(p); walk.more(); walk.advance()) {
      const int tile = walk.tile();
      const int n_tile = tile / p.tile_slots;
      fill_tile(n_tile, tile - n_tile * p.tile_slots);
    }
  }
};

}  // namespace bsrmm::cuda::sm90
