// Where the row tiles' pieces live in shared memory (aligned to 1024 bytes for the 128-byte
// swizzle): the ring of kStages stages (each the A slices of its blocks, then the B panel as
// 64-column chunks), each consumer's epilogue staging, then the full and empty mbarriers.
#pragma once

#include "smem.cuh"
#include "swizzled_rows.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

template <typename Config>
struct RowTileSmem {
  uint8_t* base;

  __device__ explicit RowTileSmem(uint8_t* raw) : base(align_1024(raw)) {}

  __device__ uint8_t* stage(int s) const { return base + s * Config::kStageBytes; }
  // Block i's A slice of a stage (i < kBlocksPerStage), BlockH rows of kSliceK.
  __device__ static uint8_t* a_slice(uint8_t* stage, int i) { return stage + i * Config::kASliceBytes; }
  // The stage's B panel: kTileN / 64 chunks of kStageK rows x 64 columns (kBChunkBytes each).
  __device__ static uint8_t* b_panel(uint8_t* stage) { return stage + Config::kABytes; }
  // A consumer's staging: kStagingChunks 64 x 64 chunks, each one TMA store box.
  __device__ SwizzledRows staging(int consumer) const {
    return SwizzledRows{base + Config::kStages * Config::kStageBytes + consumer * Config::kStagingBytes};
  }
  // One per stage: the producer's expect-tx arrival plus TMA bytes fill it.
  __device__ uint64_t* full() const {
    return reinterpret_cast<uint64_t*>(base + Config::kStages * Config::kStageBytes + 2 * Config::kStagingBytes);
  }
  // One per stage: every releasing consumer warp (of every CTA of the cluster) empties it.
  __device__ uint64_t* empty() const { return full() + Config::kStages; }
};

}  // namespace bsrmm::cuda::sm90
