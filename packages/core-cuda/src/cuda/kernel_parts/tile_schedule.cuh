// Which tile of C a CTA owns. A tile is (block row, row slice of that block row, N tile). Block
// rows come in the plan's row_order (longest first), so the long rows start first and the short
// ones fill the gaps at the end (load balance). CTAs are grouped: consecutive CTAs take
// `group_rows` consecutive row slots of one N tile before moving to the next N tile, so a wave
// touches a few block rows' A blocks and a few N tiles' B panels, which stay in L2.
#pragma once

#include <cstdint>

namespace bsrmm::cuda {

struct Tile {
  int32_t block_row;
  int32_t slice;   // which BM-row slice of the block row
  int32_t n_tile;
};

struct TileSchedule {
  const int32_t* row_order;  // may be null: identity
  int32_t slices;            // row slices per block row
  int32_t slot_count;        // block rows * slices
  int32_t n_tiles;
  int32_t group_rows;

  __device__ Tile at(int64_t linear) const {
    const int64_t group_size = int64_t(group_rows) * n_tiles;
    const int64_t group = linear / group_size;
    const int64_t first_slot = group * group_rows;
    const int64_t rows_in_group = min(int64_t(group_rows), int64_t(slot_count) - first_slot);
    const int64_t within = linear - group * group_size;
    const int32_t slot = int32_t(first_slot + within % rows_in_group);
    Tile tile;
    tile.n_tile = int32_t(within / rows_in_group);
    const int32_t position = slot / slices;
    tile.slice = slot - position * slices;
    tile.block_row = row_order ? __ldg(row_order + position) : position;
    return tile;
  }
};

}  // namespace bsrmm::cuda
