// The Hopper SDDMM (sm_90a: TMA + wgmma): values[b] = alpha * (X Y)[block b] + beta * values[b]
// for every stored block b, each block an output tile of a GEMM whose K is the token dimension
// T. Warp-specialised and persistent, as the sm90 row tiles (../sm90/row_tile_kernel.cuh):
// warpgroup 0 is the producer (one thread issues TMA), warpgroups 1 and 2 the consumers (wgmma,
// then the epilogue); one CTA per SM, units of kBlocks consecutive stored blocks round robin,
// each run as passes of same-row blocks (sm90_unit.cuh).
//
// The pieces: this file is the frame (shared memory, barriers, role dispatch) and the
// consumers' unit loop; sm90_producer.cuh the TMA loads into the ring, sm90_mainloop.cuh the
// wgmma over it, sm90_epilogue.cuh the stores to values; sm90_config.cuh the shape and what
// follows from it, sm90_smem.cuh where each piece lives, sm90_unit.cuh the parameters and the
// passes of a unit. The hardware primitives are the sm90 frame's (../sm90: mbarrier, tma,
// wgmma, warpgroup, pipeline, smem).
#pragma once

#include "../sm90/mbarrier.cuh"
#include "../sm90/tma.cuh"
#include "../sm90/warpgroup.cuh"
#include "sm90_config.cuh"
#include "sm90_epilogue.cuh"
#include "sm90_mainloop.cuh"
#include "sm90_producer.cuh"
#include "sm90_smem.cuh"
#include "sm90_unit.cuh"

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

// One pass for a run of Blocks blocks: the main loop over its T stages, then the epilogue.
// Blocks is the share's count (or, when the count is smaller, the next candidate down): wgmma's
// width is part of the instruction, so each run length is its own instantiation, picked once a
// pass, uniformly across the warpgroup. Each has its own accumulators, dead after its stores, so
// no accumulator register is defined outside a wgmma between runs (ptxas would otherwise
// serialize every wgmma: C7511 / C7515).
template <class Cfg, int Blocks = Cfg::kConsumerBlocks>
__device__ __forceinline__ void run_pass(Sm90SddmmMainloop<Cfg>& mainloop, const Sm90SddmmEpilogue<Cfg>& epilogue,
                                         int64_t first, Sm90Share share, int steps) {
  if constexpr (Blocks > 0) {
    if (share.count != Blocks) return run_pass<Cfg, Blocks - 1>(mainloop, epilogue, first, share, steps);
  }
  Sm90SddmmAccumulators<Cfg> acc;
  const int previous = mainloop.template run<Blocks>(acc, share.first, steps);
  mainloop.template finish<Blocks>(acc, previous);
  epilogue.store(acc, first + share.first, Blocks);
}

// One consumer warpgroup's units, pass by pass, each on its share of the pass's blocks. The
// epilogue's stores run while the producer already fills the ring for the next pass.
template <class Cfg>
__device__ __forceinline__ void consume_units(const Sm90SddmmParams& p, Sm90SddmmSmem<Cfg> smem, int consumer) {
  const int warp = (threadIdx.x / 32) % 4;
  const int lane = threadIdx.x % 32;
  Sm90SddmmMainloop<Cfg> mainloop{smem, consumer, lane, {}};
  const Sm90SddmmEpilogue<Cfg> epilogue{p, consumer, warp, lane};
  for (int64_t u = blockIdx.x; u < p.units; u += gridDim.x) {
    for (Sm90Pass<Cfg> pass = Sm90Pass<Cfg>::first_of(p, u); pass.count > 0; pass = pass.next(p, u))
      run_pass<Cfg>(mainloop, epilogue, pass.first, mainloop.share_of(pass.count), p.t_stages);
  }
}

// The frame: barriers, then the roles. setmaxnreg needs each role to be one branch of this
// if/else (../sm90/warpgroup.cuh).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) sm90_sddmm_kernel(const __grid_constant__ Sm90SddmmParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  const Sm90SddmmSmem<Cfg> smem(smem_raw);
  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      sm90::mbarrier_init(&smem.full()[s], 1);
      sm90::mbarrier_init(&smem.empty()[s], Cfg::kReleasingWarps);
    }
    sm90::mbarrier_init_fence();
    sm90::tma_prefetch_map(&p.x_map);
    sm90::tma_prefetch_map(&p.y_map);
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    sm90::warpgroup_release_registers<Cfg::kProducerRegisters>();
    if (threadIdx.x == 0) Sm90SddmmProducer<Cfg>{p, smem, {}}.run();
  } else {
    sm90::warpgroup_claim_registers<Cfg::kConsumerRegisters>();
    consume_units<Cfg>(p, smem, warpgroup - 1);
  }
#endif
}

}  // namespace bsrmm::cuda::sddmm_kernels
