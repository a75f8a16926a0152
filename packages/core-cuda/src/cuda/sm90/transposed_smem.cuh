// Where the transposed tiles' pieces live in shared memory (aligned to 1024 bytes for the
// 128-byte swizzle): each consumer's epilogue staging (up to 128 rows x 64 columns), the ring
// of kStages stages (the B slice as 64-column chunks, then one A slot per row of the group),
// the full and empty mbarriers, and per stage its rows (meta) and the slots still holding an
// older column's block (dirty, the producer's own).
#pragma once

#include "smem.cuh"
#include "swizzled_rows.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

template <typename Config>
struct TransposedSmem {
  uint8_t* base;

  __device__ explicit TransposedSmem(uint8_t* raw) : base(align_1024(raw)) {}

  // A consumer's staging: kStagingRows rows of 128 bytes (64 columns of C).
  __device__ SwizzledRows staging(int consumer) const {
    return SwizzledRows{base + consumer * (Config::kStagingRows * 128)};
  }
  __device__ uint8_t* stage(int s) const { return base + Config::kStagingBytes + s * Config::kStageBytes; }
  // The stage's B slice, 64-column chunk `chunk`: kBlock K rows x 64 columns.
  __device__ static uint8_t* b_chunk(uint8_t* stage, int chunk) { return stage + chunk * Config::kBChunkBytes; }
  // The stage's A slot of the group's row `slot`: one kBlock x kBlock block.
  __device__ static uint8_t* a_slot(uint8_t* stage, int slot) {
    return stage + Config::kBBytes + slot * Config::kABytes;
  }
  __device__ uint64_t* full() const { return reinterpret_cast<uint64_t*>(stage(Config::kStages)); }
  __device__ uint64_t* empty() const { return full() + Config::kStages; }
  // Per stage: the bit set of the group's rows it holds a block of; 0 ends the tile.
  __device__ uint32_t* meta() const { return reinterpret_cast<uint32_t*>(empty() + Config::kStages); }
  __device__ uint32_t* dirty() const { return meta() + Config::kStages; }
};

}  // namespace bsrmm::cuda::sm90
