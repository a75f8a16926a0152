// The row tiles' main loop: one consumer warpgroup's wgmma over a tile's stages of the ring,
// into its 64 x kConsumerN accumulators. Each stage's wgmma group stays in flight while the
// next stage is issued; a stage goes back to the producer once the group after it was issued
// (wgmma_wait<1>), and the last one when the tile's accumulators are complete (finish).
//
// fp8 (run_scaled): a stage is one block. The tensor cores keep fp8 products to about 14 bits
// of the largest partial sum (DeepSeek-V3's report; 2^-15 of the magnitude measured here over a
// 128-deep block), so a sum over a whole block row inside the accumulators would lose what f32
// keeps. Each stage's product goes into a second set of accumulators instead (its first k32
// step overwrites them, so they are never zeroed), which the consumer waits for and adds to the
// f32 sum times the block's scale, as DeepGEMM promotes its fp8 partial sums. That second set
// covers 128 columns at a time (kPartN), so a consumer's 256 columns take 128 + 64 registers,
// not 2 x 128; the other consumer's wgmma run while this one adds.
#pragma once

#include "cluster.cuh"
#include "mbarrier.cuh"
#include "pipeline.cuh"
#include "row_tile_operands.cuh"
#include "row_tile_smem.cuh"
#include "smem.cuh"
#include "wgmma.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

template <typename T, typename Config>
struct RowTileMainloop {
  static constexpr int kN = Config::kConsumerN;
  // fp8: the columns of a stage's product promoted at a time (run_scaled).
  static constexpr int kPartN = kN < 128 ? kN : 128;
  RowTileSmem<Config> smem;
  int consumer;   // 0 or 1
  int lane;
  uint32_t rank;  // the cluster peer is rank ^ 1
  RingPosition<Config::kStages> ring;

  // A consumer warp frees a stage in this CTA and, with a cluster, in the peer (whose A half
  // the stage also holds).
  __device__ __forceinline__ void release(int stage) {
    if (lane != 0) return;
    mbarrier_arrive(&smem.empty()[stage]);
    if constexpr (Config::kCluster > 1) mbarrier_arrive_cluster(&smem.empty()[stage], rank ^ 1u);
  }

  // The wgmma k16 (fp8: k32) steps of the stage at the ring's position into W columns of
  // accumulators: A (this consumer's 64 rows) K-major from its slices; B from the panel (this
  // consumer's half of it when the N tile is split; of that, W-column part `part`), N-major, or
  // K-major when B is column-major. `accumulate` 0: the first step overwrites acc (fp8 only).
  template <int W = kN>
  __device__ __forceinline__ void issue_stage(float (&acc)[W / 2], int part = 0, int accumulate = 1) {
    uint8_t* stage = smem.stage(ring.stage);
    const uint32_t a_start = smem_address(stage) + (Config::kSplitM ? consumer * 64 * Config::kSliceRowBytes : 0);
    const uint32_t b_start = smem_address(stage + Config::kABytes) +
                             (Config::kSplitN ? consumer * (kN / 64) * Config::kBChunkBytes : 0) +
                             part * (W / 64) * Config::kBChunkBytes;
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < Config::kStageK / Config::kStepK; ++k) {
      // Step k reads A slice k / kStepsPerSlice, 32 bytes (16 or 32 columns) at a time along its rows.
      const uint32_t a_at = a_start + (k / Config::kStepsPerSlice) * Config::kASliceBytes +
                            (k % Config::kStepsPerSlice) * 32;
      const uint64_t a =
          wgmma_descriptor(a_at, 16, 8 * Config::kSliceRowBytes, swizzle_for_row(Config::kSliceRowBytes));
      const uint64_t b =
          Config::kColMajorB
              ? wgmma_descriptor(b_start + k * 32, 16, 8 * Config::kBRowBytes, swizzle_for_row(Config::kBRowBytes))
              : wgmma_descriptor(b_start + k * 16 * 128, Config::kBChunkBytes, 1024, Swizzle::b128);
      if constexpr (RowTileTypes<T>::kFp8)
        wgmma_m64k32_fp8<typename RowTileTypes<T>::A, typename RowTileTypes<T>::B, W>(acc, a, b,
                                                                                     k > 0 ? 1 : accumulate);
      else
        wgmma_m64k16<T, W, 0, Config::kColMajorB ? 0 : 1>(acc, a, b);
    }
    wgmma_commit();
  }

  // Zeroes the accumulators and issues the tile's `steps` stages; returns the stage still
  // held (-1 for an empty row) for finish().
  __device__ __forceinline__ int run(float (&acc)[kN / 2], int steps) {
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) acc[i] = 0.0f;
    int previous = -1;
    for (int step = 0; step < steps; ++step) {
      mbarrier_wait(&smem.full()[ring.stage], ring.phase);
      issue_stage(acc);
      wgmma_wait<1>();
      if (previous >= 0) release(previous);
      previous = ring.stage;
      ring.advance();
    }
    return previous;
  }

  // fp8: the tile's `steps` stages (one block each), each block's product (kPartN columns at a
  // time, into `part_acc`) added to acc times its scale, scales[step * scale_stride] (stride 0:
  // one scale for the row). Every stage is handed back here; finish() then has none to wait for
  // (pass it -1).
  __device__ __forceinline__ void run_scaled(float (&acc)[kN / 2], float (&part_acc)[kPartN / 2], int steps,
                                             const float* scales, int scale_stride) {
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) acc[i] = 0.0f;
    for (int step = 0; step < steps; ++step) {
      const float scale = __ldg(scales + step * scale_stride);  // in flight during the wait
      mbarrier_wait(&smem.full()[ring.stage], ring.phase);
#pragma unroll
      for (int part = 0; part < kN / kPartN; ++part) {
        issue_stage<kPartN>(part_acc, part, 0);
        wgmma_wait<0>();
        wgmma_fence_operands(part_acc);
        if (part == kN / kPartN - 1) release(ring.stage);
#pragma unroll
        for (int i = 0; i < kPartN / 2; ++i)
          acc[part * (kPartN / 2) + i] = fmaf(scale, part_acc[i], acc[part * (kPartN / 2) + i]);
      }
      ring.advance();
    }
  }

  // Waits for the last wgmma group and hands its stage back.
  __device__ __forceinline__ void finish(float (&acc)[kN / 2], int previous) {
    wgmma_wait<0>();
    wgmma_fence_operands(acc);
    if (previous >= 0) release(previous);
  }
};

}  // namespace bsrmm::cuda::sm90
