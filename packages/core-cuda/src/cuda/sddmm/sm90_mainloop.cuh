// The Hopper SDDMM's main loop: one consumer warpgroup's wgmma over a unit's stages of the ring,
// into a 64 x BlockW accumulator per block it owns. X slices are read K-major (row-major X) or
// M-major (column-major X), Y slices K-major (column-major Y) or N-major (row-major Y), each
// from its 64 x 64 boxes in the 128-byte swizzle. Each stage's wgmma group stays in flight while
// the next is issued; a stage goes back to the producer once the group after it was issued
// (wgmma_wait<1>), the last one when the unit's accumulators are complete (finish).
#pragma once

#include "../sm90/mbarrier.cuh"
#include "../sm90/pipeline.cuh"
#include "../sm90/smem.cuh"
#include "../sm90/wgmma.cuh"
#include "sm90_smem.cuh"
#include "sm90_unit.cuh"

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

template <class Cfg>
struct Sm90SddmmAccumulators {
  float block[Cfg::kConsumerBlocks][Cfg::kN / 2];
};

template <class Cfg>
struct Sm90SddmmMainloop {
  Sm90SddmmSmem<Cfg> smem;
  int consumer;  // 0 or 1
  int lane;
  sm90::RingPosition<Cfg::kStages> ring;

  // The unit's block that this consumer's b-th accumulator belongs to.
  __device__ __forceinline__ int block_of(int b) const {
    return Cfg::kSplitRows ? b : consumer * Cfg::kConsumerBlocks + b;
  }

  // Descriptor of k16 step k of a 64-row (or -column) operand whose box starts at `box`:
  // K-major boxes move 32 bytes along their 128-byte rows, MN-major ones 16 rows of 128 bytes.
  template <bool KMajor>
  __device__ __forceinline__ static uint64_t operand(uint32_t box, int k) {
    return KMajor ? sm90::wgmma_descriptor(box + k * 32, 16, 1024, sm90::Swizzle::b128)
                  : sm90::wgmma_descriptor(box + k * 16 * 128, Cfg::kBoxBytes, 1024, sm90::Swizzle::b128);
  }

  // Where this consumer's operands sit in every stage of a unit, as byte offsets from the stage:
  // per accumulator the X rows it reads (consumer 1's 64 rows are the second box of each X
  // slice of a block 128 high) and the Y slice of its block.
  struct Offsets {
    uint32_t x[Cfg::kConsumerBlocks];
    uint32_t y[Cfg::kConsumerBlocks];
  };

  __device__ __forceinline__ Offsets offsets_of(const Sm90Unit<Cfg>& unit) const {
    Offsets o;
#pragma unroll
    for (int b = 0; b < Cfg::kConsumerBlocks; ++b) {
      const int i = block_of(b);
      o.x[b] = uint32_t(unit.slot_of(i) * Cfg::kXSliceBytes) + (Cfg::kSplitRows ? consumer * Cfg::kBoxBytes : 0);
      o.y[b] = uint32_t(Cfg::kXBytes + i * Cfg::kYSliceBytes);
    }
    return o;
  }

  __device__ __forceinline__ void issue_stage(Sm90SddmmAccumulators<Cfg>& acc, const Offsets& o) {
    const uint32_t stage = sm90::smem_address(smem.stage(ring.stage));
    sm90::wgmma_fence();
#pragma unroll
    for (int k = 0; k < Cfg::kStageT / 16; ++k) {
#pragma unroll
      for (int b = 0; b < Cfg::kConsumerBlocks; ++b)
        sm90::wgmma_m64k16<typename Cfg::T, Cfg::kN, Cfg::kXColMajor ? 1 : 0, Cfg::kYColMajor ? 0 : 1>(
            acc.block[b], operand<!Cfg::kXColMajor>(stage + o.x[b], k),
            operand<Cfg::kYColMajor>(stage + o.y[b], k));
    }
    sm90::wgmma_commit();
  }

  __device__ __forceinline__ void release(int stage) {
    if (lane == 0) sm90::mbarrier_arrive(&smem.empty()[stage]);
  }

  // Zeroes the accumulators and issues the unit's `steps` stages; returns the stage still held
  // (-1 when there are no stages; the variants take T >= 1, so never) for finish().
  __device__ __forceinline__ int run(Sm90SddmmAccumulators<Cfg>& acc, const Sm90Unit<Cfg>& unit, int steps) {
#pragma unroll
    for (int b = 0; b < Cfg::kConsumerBlocks; ++b)
#pragma unroll
      for (int e = 0; e < Cfg::kN / 2; ++e) acc.block[b][e] = 0.0f;
    const Offsets offsets = offsets_of(unit);
    int previous = -1;
    for (int step = 0; step < steps; ++step) {
      sm90::mbarrier_wait(&smem.full()[ring.stage], ring.phase);
      issue_stage(acc, offsets);
      sm90::wgmma_wait<1>();
      if (previous >= 0) release(previous);
      previous = ring.stage;
      ring.advance();
    }
    return previous;
  }

  // Waits for the last wgmma group and hands its stage back.
  __device__ __forceinline__ void finish(Sm90SddmmAccumulators<Cfg>& acc, int previous) {
    sm90::wgmma_wait<0>();
#pragma unroll
    for (int b = 0; b < Cfg::kConsumerBlocks; ++b) sm90::wgmma_fence_operands(acc.block[b]);
    if (previous >= 0) release(previous);
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
