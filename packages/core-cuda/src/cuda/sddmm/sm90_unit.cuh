// What the Hopper SDDMM kernel receives (a __grid_constant__ block: the TMA maps must live in
// parameter memory) and which stored blocks a unit of work holds.
//
// Unit u is stored blocks u * kBlocks .. u * kBlocks + kBlocks - 1, in the pattern's order; the
// CTAs of the persistent grid take units round robin, so CTAs running together read
// neighbouring blocks (the same block rows of X) while L2 holds them, and every unit costs the
// same (T deep). A unit past the last block repeats the last block (loaded, never stored).
// Consecutive blocks of one block row share their X slice: slot[i] names the unit's block whose
// X slice block i reads (the first of its row within the unit), and only those are loaded.
#pragma once

#include "sddmm_params.cuh"

#include <cuda.h>

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

struct Sm90SddmmParams {
  CUtensorMap x_map;  // X as stored (contiguous dimension innermost), 64 x 64 boxes
  CUtensorMap y_map;  // Y as stored, 64 x 64 boxes
  const int32_t* row_ptr;
  const int32_t* col_idx;
  int64_t block_row_count;
  int64_t nnzb;
  int64_t units;     // ceil(nnzb / kBlocks)
  int32_t t_stages;  // ceil(T / 64): stages per unit
  void* values;      // nnzb blocks of BlockH x BlockW, row-major
  float alpha;
  float beta;        // 0: values are only written
};

template <class Cfg>
struct Sm90Unit {
  int64_t first;                // the unit's first stored block
  int32_t x_row[Cfg::kBlocks];  // first row of X of each block
  int32_t y_col[Cfg::kBlocks];  // first column of Y of each block
  int32_t slot[Cfg::kBlocks];   // the X slice each block reads

  __device__ Sm90Unit(const Sm90SddmmParams& p, int64_t unit) : first(unit * Cfg::kBlocks) {
#pragma unroll
    for (int i = 0; i < Cfg::kBlocks; ++i) {
      const int64_t block = min(first + i, p.nnzb - 1);
      const int64_t row = block_row_of(p.row_ptr, p.block_row_count, block);
      x_row[i] = int32_t(row * Cfg::kBlockH);
      y_col[i] = __ldg(p.col_idx + block) * Cfg::kBlockW;
      slot[i] = i > 0 && x_row[i] == x_row[i - 1] ? slot[i - 1] : i;
    }
  }

  // slot[i] for a block index known only at run time, without indexing the array (which would
  // put it in local memory).
  __device__ __forceinline__ int slot_of(int i) const {
    int s = 0;
#pragma unroll
    for (int j = 0; j < Cfg::kBlocks; ++j) s = j == i ? slot[j] : s;
    return s;
  }

  // Bytes one stage of this unit receives: the X slices it loads and every Y slice.
  __device__ uint32_t stage_bytes() const {
    int x_slices = 0;
#pragma unroll
    for (int i = 0; i < Cfg::kBlocks; ++i) x_slices += slot[i] == i ? 1 : 0;
    return uint32_t(x_slices * Cfg::kXSliceBytes + Cfg::kBlocks * Cfg::kYSliceBytes);
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
