// What the sm90 kernels receive, by value as a __grid_constant__ parameter: the TMA tensor
// maps must live in parameter (or constant/global) memory for the copy engine to read them.
// KernelParams is what both families read (and the tile walk, work_walk.cuh); each family's
// parameters add only their own.
//
// Field order is part of the kernels' code: ptxas reads two 32-bit parameters with one ULDC.64
// only where the pair shares an aligned 8-byte word. alpha and beta, read together all over the
// epilogues, must start a word: the first split (8ccd8e6) took b_zero_row and the transposed
// tiles' fields out of this block, left alpha at 4 mod 8, and grew every kernel by 39-226 SASS
// instructions, each such ULDC.64 becoming two ULDC (docs/perf-log.md entry 50). So the 32-bit
// fields go in pairs read together, each pair starting a word, and n keeps the second half of
// one as before; `sass_sizes.py compare` shows a change's effect per kernel.
#pragma once

#include <bsrmm/bsrmm.h>
#include <cuda.h>
#include <vector_types.h>

#include <cstddef>
#include <cstdint>

namespace bsrmm::cuda::sm90 {

struct KernelParams {
  CUtensorMap a_map;  // A's values as a [nnzb * block_height, block_width] tensor
  CUtensorMap b_map;  // B as a [K, N] tensor (transposed tiles: as 64-column chunks, see below)
  const int32_t* row_ptr;
  const int32_t* col_idx;
  const int32_t* row_order;   // may be null
  const int32_t* work_items;  // the plan's balanced work list (work_walk.cuh), or null
  const int32_t* work_begin;  // one offset per worker (CTA or cluster) + 1 into work_items
  void* c;
  int64_t ldc;
  const void* bias;  // per row of C, or null
  // 32-bit pairs, each an aligned 8-byte word (see above):
  int32_t block_rows;
  int32_t a_zero_row;  // a row of the A tensor map past its end: boxes there read as zeros
  int32_t tile_slots;  // work items per N tile: block rows (row tiles) or row groups (transposed)
  int32_t tile_count;  // tile_slots * N tiles
  float alpha;
  float beta;
  bsrmm_activation activation;
  int32_t n;  // columns of B and C
};
static_assert(offsetof(KernelParams, alpha) % 8 == 0 && offsetof(KernelParams, tile_slots) % 8 == 0,
              "pairs read together must share an 8-byte word (ULDC.64), see above");

// Row tiles (row_tile_kernel.cuh) store C through a tensor map and fill the half stage after a
// row's odd last block from past B's end.
struct RowTileParams : KernelParams {
  CUtensorMap c_map;   // C as a [M, N] tensor
  int32_t b_zero_row;  // a row of B's map past its end (row-major B: a K row past B's last)
  // fp8 only (Fp8Operands): A's scales (1, per block row or per block, by a_scale_kind) and
  // B's per-column scales, or null when B has one scale (then folded into alpha).
  bsrmm_scale_kind a_scale_kind;
  const float* a_scales;
  const float* b_column_scales;
};

// Transposed tiles (transposed_kernel.cuh) walk each row group's merged columns.
struct TransposedParams : KernelParams {
  const int32_t* group_column_begin;  // each row group's merged columns,
  const uint2* group_columns;         // (column, rows) pairs (src/matrix/group_columns.hpp)
  const int32_t* group_rows;          // and their block rows (src/matrix/row_groups.hpp)
  int32_t b_column_chunks;  // b_map views B as 64-column chunks (one box per slice)
  int32_t block_parts;      // block_width / block_height, a stage per part
};

}  // namespace bsrmm::cuda::sm90
