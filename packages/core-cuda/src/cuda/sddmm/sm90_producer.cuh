// The Hopper SDDMM's producer: one thread walks the CTA's units, pass by pass, and TMA-loads
// each pass's stages into the ring, a stage once every consumer warp has released it. Stage s of
// a pass holds t = 64 s .. 64 s + 63 of the pass's X slice and of each of its blocks' Y slices;
// past T the boxes arrive zero-filled (the tensor maps end at T), so a partial last stage adds
// nothing and needs no branch in the main loop.
#pragma once

#include "../sm90/mbarrier.cuh"
#include "../sm90/pipeline.cuh"
#include "../sm90/tma.cuh"
#include "sm90_smem.cuh"
#include "sm90_unit.cuh"

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

template <class Cfg>
struct Sm90SddmmProducer {
  const Sm90SddmmParams& p;
  Sm90SddmmSmem<Cfg> smem;
  sm90::RingPosition<Cfg::kStages> ring;

  // 64 x 64 box `box` of an X slice (rows row + 64 box): T-contiguous for row-major X, whose map
  // is [M][T]; M-contiguous for column-major X ([T][M]).
  __device__ __forceinline__ void load_x(uint8_t* slice, int row, int t0, uint64_t* full) const {
#pragma unroll
    for (int box = 0; box < Cfg::kBlockH / 64; ++box) {
      uint8_t* at = slice + box * Cfg::kBoxBytes;
      if constexpr (Cfg::kXColMajor) sm90::tma_load_2d(at, &p.x_map, row + 64 * box, t0, full);
      else sm90::tma_load_2d(at, &p.x_map, t0, row + 64 * box, full);
    }
  }

  // The same for a Y slice (columns col + 64 box): T-contiguous for column-major Y ([K][T]),
  // K-contiguous for row-major Y ([T][K]).
  __device__ __forceinline__ void load_y(uint8_t* slice, int col, int t0, uint64_t* full) const {
#pragma unroll
    for (int box = 0; box < Cfg::kBlockW / 64; ++box) {
      uint8_t* at = slice + box * Cfg::kBoxBytes;
      if constexpr (Cfg::kYColMajor) sm90::tma_load_2d(at, &p.y_map, t0, col + 64 * box, full);
      else sm90::tma_load_2d(at, &p.y_map, col + 64 * box, t0, full);
    }
  }

  __device__ __forceinline__ void load_stage(const Sm90Pass<Cfg>& pass, uint32_t bytes, int t0) {
    ring.wait_released(smem.empty());
    uint8_t* stage = smem.stage(ring.stage);
    uint64_t* full = &smem.full()[ring.stage];
    sm90::mbarrier_arrive_expect_tx(full, bytes);
    load_x(Sm90SddmmSmem<Cfg>::x_slice(stage), pass.x_row, t0, full);
#pragma unroll
    for (int i = 0; i < Cfg::kBlocks; ++i)
      if (i < pass.count) load_y(Sm90SddmmSmem<Cfg>::y_slice(stage, i), pass.y_col[i], t0, full);
    ring.advance();
  }

  __device__ __forceinline__ void run() {
    for (int64_t u = blockIdx.x; u < p.units; u += gridDim.x) {
      for (Sm90Pass<Cfg> pass = Sm90Pass<Cfg>::first_of(p, u); pass.count > 0; pass = pass.next(p, u)) {
        const uint32_t bytes = pass.stage_bytes();
#pragma unroll 1
        for (int s = 0; s < p.t_stages; ++s) load_stage(pass, bytes, s * Cfg::kStageT);
      }
    }
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
