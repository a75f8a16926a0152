// Where the Hopper SDDMM's pieces live in shared memory (aligned to 1024 bytes for the 128-byte
// swizzle): the ring of kStages stages, each the pass's X slice then its blocks' Y slices side by
// side, then the full and empty mbarriers.
#pragma once

#include "../sm90/smem.cuh"

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

template <class Cfg>
struct Sm90SddmmSmem {
  uint8_t* base;

  __device__ explicit Sm90SddmmSmem(uint8_t* raw) : base(sm90::align_1024(raw)) {}

  __device__ uint8_t* stage(int s) const { return base + s * Cfg::kStageBytes; }
  // The X slice: BlockH / 64 boxes of 64 x 64 (the first 64 rows, then the next 64).
  __device__ static uint8_t* x_slice(uint8_t* stage) { return stage; }
  // Block i's Y slice: BlockW / 64 boxes of 64 x 64, right after block i - 1's, so the Y slices
  // of blocks i .. j are one run of 64-column boxes.
  __device__ static uint8_t* y_slice(uint8_t* stage, int i) {
    return stage + Cfg::kXSliceBytes + i * Cfg::kYSliceBytes;
  }
  // One per stage: the producer's expect-tx arrival plus the TMA bytes fill it.
  __device__ uint64_t* full() const {
    return reinterpret_cast<uint64_t*>(base + Cfg::kStages * Cfg::kStageBytes);
  }
  // One per stage: every consumer warp's release empties it.
  __device__ uint64_t* empty() const { return full() + Cfg::kStages; }
};

}  // namespace bsrmm::cuda::sddmm_kernels
