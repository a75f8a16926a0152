// mbarrier: the shared-memory barriers that pair the TMA producer with the wgmma consumers.
// A "full" barrier completes when its arrivals and the bytes announced by expect_tx have all
// landed; an "empty" barrier completes when every consumer warp has released the stage.
// Waits are on the phase parity: a fresh barrier counts its (virtual) previous phase, parity 1,
// as complete, so a producer's first wait on an empty stage passes at once.
#pragma once

#include "smem.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

__device__ inline void mbarrier_init(uint64_t* barrier, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(barrier)),
               "r"(arrivals));
}

// Makes the initialised barriers visible to the async proxy (the TMA unit) before first use.
__device__ inline void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival plus `bytes` the copies completing on this barrier will deliver.
__device__ inline void mbarrier_arrive_expect_tx(uint64_t* barrier, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   smem_address(barrier)),
               "r"(bytes)
               : "memory");
}

__device__ inline void mbarrier_arrive(uint64_t* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(barrier))
               : "memory");
}

__device__ inline void mbarrier_wait(uint64_t* barrier, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(smem_address(barrier)),
      "r"(parity)
      : "memory");
}

}  // namespace bsrmm::cuda::sm90
