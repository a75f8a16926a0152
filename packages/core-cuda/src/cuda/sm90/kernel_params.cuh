// What every sm90 kernel receives, by value as a __grid_constant__ parameter: the TMA tensor
// maps must live in parameter (or constant/global) memory for the copy engine to read them.
#pragma once

#include <bsrmm/bsrmm.h>
#include <cuda.h>
#include <vector_types.h>

#include <cstdint>

namespace bsrmm::cuda::sm90 {

struct KernelParams {
  CUtensorMap a_map;  // A's values as a [nnzb * block_height, block_width] tensor
  CUtensorMap b_map;  // B as a [K, N] tensor
  CUtensorMap c_map;  // C as a [M, N] tensor (row tiles store through it)
  const int32_t* row_ptr;
  const int32_t* col_idx;
  const int32_t* row_order;   // may be null
  const int32_t* work_items;  // the plan's balanced work list (work_walk.cuh), or null
  const int32_t* work_begin;  // one offset per worker (CTA or cluster) + 1 into work_items
  const int32_t* group_column_begin;  // transposed tiles: each row group's merged columns,
  const uint2* group_columns;         // (column, rows) pairs (src/matrix/group_columns.hpp)
  const int32_t* group_rows;          // and their block rows (src/matrix/row_groups.hpp)
  void* c;
  int64_t ldc;
  const void* bias;  // per row of C, or null
  int32_t block_rows;
  int32_t a_zero_row;   // a row of the A tensor map past its end: boxes there read as zeros
  int32_t b_zero_row;   // the same for B's map (row-major B: a K row past B's last)
  int32_t n;            // columns of B and C
  int32_t tile_slots;   // work items per N tile: block rows (row tiles) or row groups (transposed)
  int32_t tile_count;   // tile_slots * N tiles
  int32_t b_column_chunks;  // transposed tiles: b_map views B as 64-column chunks (one box per slice)
  int32_t block_parts;      // transposed tiles: block_width / block_height, a stage per part
  float alpha;
  float beta;
  bsrmm_activation activation;
};

}  // namespace bsrmm::cuda::sm90
