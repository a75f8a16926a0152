// TMA (cp.async.bulk.tensor): one thread asks the copy engine for a 2D (3D) box of a global tensor;
// a load lands in shared memory in the tensor map's swizzle and completes on an mbarrier, a
// store reads shared memory in that swizzle and completes in a bulk group.
// The tensor maps live in the kernel's __grid_constant__ parameters (tensor_map.hpp builds them).
#pragma once

#include "smem.cuh"

#include <cuda.h>

#include <cstdint>

namespace bsrmm::cuda::sm90 {

__device__ inline void tma_prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Box at element coordinates (x = innermost, y) into `destination`; completes on `barrier`.
__device__ inline void tma_load_2d(void* destination, const CUtensorMap* map, int32_t x, int32_t y,
                                   uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_address(destination)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_address(barrier))
      : "memory");
}

// A 3D box at element coordinates (x = innermost, y, z) into `destination`.
__device__ inline void tma_load_3d(void* destination, const CUtensorMap* map, int32_t x, int32_t y,
                                   int32_t z, uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_address(destination)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_address(barrier))
      : "memory");
}

// Shared -> global: the box at (x, y) of the map's tensor from `source` (written in the map's
// swizzle); elements outside the tensor are skipped. Completes asynchronously in a bulk group.
__device__ inline void tma_store_2d(const CUtensorMap* map, const void* source, int32_t x, int32_t y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(smem_address(source)), "r"(x), "r"(y)
      : "memory");
}

__device__ inline void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// Until at most `Pending` of this thread's bulk groups still read shared memory.
template <int Pending>
__device__ inline void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
}

// Until at most `Pending` of this thread's bulk groups are incomplete (writes done).
template <int Pending>
__device__ inline void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// Orders this thread's ordinary shared-memory writes before later async-proxy (TMA) reads.
__device__ inline void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace bsrmm::cuda::sm90
