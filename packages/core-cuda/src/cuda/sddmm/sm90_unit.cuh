// What the Hopper SDDMM kernel receives (a __grid_constant__ block: the TMA maps must live in
// parameter memory), and the passes of a unit of work.
//
// Units take consecutive stored blocks in the pattern's order: the first head_units kBlocks
// each, the rest tail_blocks each (fewer for the last). The CTAs of the persistent grid take
// units round robin, so CTAs running together read neighbouring blocks (the same block rows of
// X) while L2 holds them. Every unit is T deep, so a grid whose last wave holds a few units of
// kBlocks waits a whole unit on them (3 waves for 267 pairs on 132 SMs: 1.5x the time of 264,
// docs/perf-log.md entry 54); the host (sm90_variants.cu, split_units) makes the head every
// full wave and spreads the last wave's blocks evenly, tail_blocks = ceil(those / grid).
// A unit runs as passes: a pass is the unit's blocks of one block row (a run of consecutive
// stored blocks), T deep, so a stage holds one X slice, read by every block of the pass. A unit
// inside one block row is one pass; one that spans a row boundary is two (or more, past short
// rows), each loading its own X slice (the bytes a unit spanning rows needs in any layout) over
// its own T stages; the ring runs on across passes (the producer fills the next pass's stages
// while the consumers store).
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
  int64_t units;        // head_units + the tail's units
  int64_t head_units;   // units of kBlocks blocks
  int32_t tail_blocks;  // blocks in each unit after them (1 .. kBlocks)
  int32_t t_stages;     // ceil(T / 64): stages per pass
  void* values;         // nnzb blocks of BlockH x BlockW, row-major
  float alpha;
  float beta;           // 0: values are only written
};

template <class Cfg>
struct Sm90Pass {
  int64_t first;                // the pass's first stored block
  int32_t count;                // its blocks (1 .. kBlocks; 0: the unit is done)
  int32_t x_row;                // first row of X of its block row
  int32_t y_col[Cfg::kBlocks];  // first column of Y of each block (count of them set)

  // The pass of the unit ending before block `unit_end` that starts at block `start`.
  __device__ Sm90Pass(const Sm90SddmmParams& p, int64_t start, int64_t unit_end) : first(start) {
    count = 0;
    x_row = 0;
    if (start >= unit_end) return;
    const int64_t row = block_row_of(p.row_ptr, p.block_row_count, start);
    const int64_t row_end = __ldg(p.row_ptr + row + 1);
    count = int32_t((row_end < unit_end ? row_end : unit_end) - start);
    x_row = int32_t(row * Cfg::kBlockH);
#pragma unroll
    for (int i = 0; i < Cfg::kBlocks; ++i)
      y_col[i] = i < count ? __ldg(p.col_idx + start + i) * Cfg::kBlockW : 0;
  }

  // The unit's first pass, and the one after this.
  __device__ static Sm90Pass first_of(const Sm90SddmmParams& p, int64_t unit) {
    return Sm90Pass(p, unit_start_of(p, unit), unit_end_of(p, unit));
  }
  __device__ Sm90Pass next(const Sm90SddmmParams& p, int64_t unit) const {
    return Sm90Pass(p, first + count, unit_end_of(p, unit));
  }
  __device__ static int64_t unit_start_of(const Sm90SddmmParams& p, int64_t unit) {
    return unit < p.head_units ? unit * Cfg::kBlocks
                               : p.head_units * Cfg::kBlocks + (unit - p.head_units) * p.tail_blocks;
  }
  __device__ static int64_t unit_end_of(const Sm90SddmmParams& p, int64_t unit) {
    const int64_t end = unit_start_of(p, unit) + (unit < p.head_units ? Cfg::kBlocks : p.tail_blocks);
    return end < p.nnzb ? end : p.nnzb;
  }

  // Bytes one stage of this pass receives: its X slice and its blocks' Y slices.
  __device__ uint32_t stage_bytes() const {
    return uint32_t(Cfg::kXSliceBytes + count * Cfg::kYSliceBytes);
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
