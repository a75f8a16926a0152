// Thread-block clusters: the CTA's rank, the cluster-wide barrier, arrivals on a peer CTA's
// mbarrier, and TMA loads multicast into every CTA of a mask (same shared-memory offset, each
// destination's own mbarrier at the same offset counts the bytes).
#pragma once

#include "smem.cuh"

#include <cuda.h>

#include <cstdint>

namespace bsrmm::cuda::sm90 {

__device__ inline uint32_t cluster_cta_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// Every thread of every CTA in the cluster meets here; shared-memory writes before it (barrier
// inits included) are visible cluster-wide after it. Not .aligned: the producer warp's lanes
// reach it at different points.
__device__ inline void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// One arrival on the mbarrier at `barrier`'s offset in CTA `rank` of the cluster. The default
// .release.cta semantics: a .cluster-scoped release here (a fence over every earlier memory
// operation of the thread) made the first cluster kernel 1.5x slower than the plain one.
__device__ inline void mbarrier_arrive_cluster(uint64_t* barrier, uint32_t rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(smem_address(barrier)),
      "r"(rank)
      : "memory");
}

// tma_load_2d into `destination` of every CTA in `cta_mask`; each completes on its own mbarrier
// at `barrier`'s offset.
__device__ inline void tma_load_2d_multicast(void* destination, const CUtensorMap* map, int32_t x,
                                             int32_t y, uint64_t* barrier, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_address(destination)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_address(barrier)),
      "h"(cta_mask)
      : "memory");
}

}  // namespace bsrmm::cuda::sm90
