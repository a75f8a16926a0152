// How the 32 lanes of a warp cover the blocks of one row slice in the narrow kernels: each lane
// owns one row of the slice and one `vec`-element chunk of that row in every block it visits,
// so a warp's loads of A are contiguous (the slice's rows of a block are one run of memory) and
// each lane's accumulators stay one row of C. Plain C++: chosen on the host per launch.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::narrow {

struct WarpShape {
  int32_t vec;              // elements of A one lane loads at a time (divides the block width)
  int32_t rows;             // rows of a block row one warp owns (divides the block height)
  int32_t lanes_per_row;    // block width / vec
  int32_t lanes_per_block;  // rows * lanes_per_row: the lanes that read one block's slice
  int32_t stride;           // positions a warp step covers: whole blocks' slices, or 32
  int32_t slices;           // block height / rows
};

// The widest load (up to 16 bytes, aligned for `values`' address) whose warp keeps the most
// lanes busy. A block row 1 to 15 high shares a warp between several blocks of the row (a 4 x 4
// f64 block: 8 lanes, 4 blocks a step); a wide one (more than 32 chunks a row) runs one row per
// warp and steps along it 32 chunks at a time.
inline WarpShape choose_warp_shape(int32_t block_height, int32_t block_width, int32_t elem_bytes,
                                   uintptr_t values_address) {
  WarpShape best{};
  double best_score = -1.0;
  for (int32_t vec = 16 / elem_bytes; vec >= 1; vec /= 2) {
    if (block_width % vec != 0 || values_address % uintptr_t(vec * elem_bytes) != 0) continue;
    WarpShape shape{};
    shape.vec = vec;
    shape.lanes_per_row = block_width / vec;
    shape.rows = 1;
    for (int32_t rows = 1; rows <= block_height; ++rows)
      if (block_height % rows == 0 && rows * shape.lanes_per_row <= 32) shape.rows = rows;
    shape.lanes_per_block = shape.rows * shape.lanes_per_row;
    shape.stride = shape.lanes_per_block <= 32 ? (32 / shape.lanes_per_block) * shape.lanes_per_block : 32;
    shape.slices = block_height / shape.rows;
    // Busy lanes first, then wider loads (fewer load instructions per byte).
    const double busy = double(shape.stride) / 32.0;
    const double score = busy * (1.0 + 0.05 * double(vec * elem_bytes));
    if (score > best_score) {
      best_score = score;
      best = shape;
    }
  }
  return best;
}

}  // namespace bsrmm::cuda::narrow
