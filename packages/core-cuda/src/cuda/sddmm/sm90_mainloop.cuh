// The Hopper SDDMM's main loop: one consumer warpgroup's wgmma over a pass's stages of the ring,
// into one accumulator of up to 256 columns (the m64n256 layout) for the run of the pass's
// blocks it owns: one wgmma per k16 step spans the whole run (its Y slices are adjacent 64-column
// boxes), so each X tile read from shared memory feeds up to 256 columns. Runs of 64, 128 and 256
// columns are one wgmma, 192 is 128 + 64; the run length is a template parameter (Blocks), picked
// once a pass by the frame. X slices are read K-major (row-major X) or M-major (column-major X),
// Y slices K-major (column-major Y) or N-major (row-major Y), each from 64 x 64 boxes in the
// 128-byte swizzle. Each stage's wgmma group stays in flight while the next is issued; a stage
// goes back to the producer once the group after it was issued (wgmma_wait<1>), the last one when
// the pass's accumulators are complete (finish).
#pragma once

#include "../sm90/mbarrier.cuh"
#include "../sm90/pipeline.cuh"
#include "../sm90/smem.cuh"
#include "../sm90/wgmma.cuh"
#include "sm90_smem.cuh"
#include "sm90_unit.cuh"

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

// One consumer's accumulators for a run of blocks (m64n256 at most): for each of the thread's
// rows, columns c, c + 1 of the run (c even) at element c / 2, so block b of the run starts at
// element b * BlockW / 2 and span<First, Count>() is what a wgmma of 2 Count columns from column
// 2 First writes.
template <class Cfg>
struct Sm90SddmmAccumulators {
  float cols[Cfg::kAccumulators];

  template <int First, int Count>
  __device__ __forceinline__ float (&span())[Count] {
    static_assert(First + Count <= Cfg::kAccumulators);
    return *reinterpret_cast<float(*)[Count]>(&cols[First]);
  }
};

// Which blocks of a pass one consumer computes: blocks first .. first + count - 1.
struct Sm90Share {
  int first;
  int count;
};

template <class Cfg>
struct Sm90SddmmMainloop {
  Sm90SddmmSmem<Cfg> smem;
  int consumer;  // 0 or 1
  int lane;
  sm90::RingPosition<Cfg::kStages> ring;

  // Blocks 128 high: every block, 64 rows each. Blocks 64 high: the first half (rounded up) to
  // consumer 0, the rest to consumer 1 (which may have none; it still releases every stage).
  __device__ __forceinline__ Sm90Share share_of(int pass_count) const {
    if (Cfg::kSplitRows) return {0, pass_count};
    const int first_half = (pass_count + 1) / 2;
    return consumer == 0 ? Sm90Share{0, first_half} : Sm90Share{first_half, pass_count - first_half};
  }

  // Descriptor of k16 step k of an operand whose first 64-row (or -column) box starts at `box`:
  // K-major boxes move 32 bytes along their 128-byte rows (8-row groups 1024 bytes apart, so
  // boxes side by side are one taller operand), MN-major ones 16 rows of 128 bytes (64-element
  // chunks one box apart).
  template <bool KMajor>
  __device__ __forceinline__ static uint64_t operand(uint32_t box, int k) {
    return KMajor ? sm90::wgmma_descriptor(box + k * 32, 16, 1024, sm90::Swizzle::b128)
                  : sm90::wgmma_descriptor(box + k * 16 * 128, Cfg::kBoxBytes, 1024, sm90::Swizzle::b128);
  }

  // Columns Done .. Cols - 1 of the run at step k, widest wgmma first (256, 128, 64).
  template <int Cols, int Done = 0>
  __device__ __forceinline__ static void mma_columns(Sm90SddmmAccumulators<Cfg>& acc, uint64_t a, uint32_t y, int k) {
    if constexpr (Done < Cols) {
      constexpr int left = Cols - Done;
      constexpr int width = left >= 256 ? 256 : left >= 128 ? 128 : 64;
      sm90::wgmma_m64k16<typename Cfg::T, width, Cfg::kXColMajor ? 1 : 0, Cfg::kYColMajor ? 0 : 1>(
          acc.template span<Done / 2, width / 2>(), a,
          operand<Cfg::kYColMajor>(y + uint32_t(Done / 64 * Cfg::kBoxBytes), k));
      mma_columns<Cols, Done + width>(acc, a, y, k);
    }
  }

  // x, y: the offsets of this consumer's X rows and its run's first Y slice in every stage.
  template <int Blocks>
  __device__ __forceinline__ void issue_stage(Sm90SddmmAccumulators<Cfg>& acc, uint32_t x, uint32_t y) {
    const uint32_t stage = sm90::smem_address(smem.stage(ring.stage));
    sm90::wgmma_fence();
#pragma unroll
    for (int k = 0; k < Cfg::kStageT / 16; ++k)
      mma_columns<Blocks * Cfg::kBlockW>(acc, operand<!Cfg::kXColMajor>(stage + x, k), stage + y, k);
    sm90::wgmma_commit();
  }

  __device__ __forceinline__ void release(int stage) {
    if (lane == 0) sm90::mbarrier_arrive(&smem.empty()[stage]);
  }

  // Zeroes the run's accumulators and issues the pass's `steps` stages on a run of Blocks blocks
  // starting at `first`; returns the stage still held (-1 when there are no stages; the variants
  // take T >= 1, so never) for finish(). Blocks == 0 (a consumer without a share) only waits for
  // and releases the stages.
  template <int Blocks>
  __device__ __forceinline__ int run(Sm90SddmmAccumulators<Cfg>& acc, int first, int steps) {
#pragma unroll
    for (int e = 0; e < Blocks * Cfg::kBlockW / 2; ++e) acc.cols[e] = 0.0f;
    // Consumer 1's 64 rows of a block 128 high are the second box of the X slice.
    const uint32_t x = Cfg::kSplitRows ? uint32_t(consumer * Cfg::kBoxBytes) : 0u;
    const uint32_t y = uint32_t(Cfg::kXSliceBytes + first * Cfg::kYSliceBytes);
    int previous = -1;
    for (int step = 0; step < steps; ++step) {
      sm90::mbarrier_wait(&smem.full()[ring.stage], ring.phase);
      if constexpr (Blocks > 0) issue_stage<Blocks>(acc, x, y);
      sm90::wgmma_wait<1>();
      if (previous >= 0) release(previous);
      previous = ring.stage;
      ring.advance();
    }
    return previous;
  }

  // Waits for the last wgmma group and hands its stage back.
  template <int Blocks>
  __device__ __forceinline__ void finish(Sm90SddmmAccumulators<Cfg>& acc, int previous) {
    sm90::wgmma_wait<0>();
    if constexpr (Blocks > 0) sm90::wgmma_fence_operands(acc.template span<0, Blocks * Cfg::kBlockW / 2>());
    if (previous >= 0) release(previous);
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
