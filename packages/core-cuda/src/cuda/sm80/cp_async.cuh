// cp.async (sm_80): global -> shared copies that bypass registers and complete in groups, the
// engine of the multi-stage pipelines.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::sm80 {

// Copies `valid_bytes` (0..16) of the 16 at `global` and zero-fills the rest, so a tile that
// crosses the end of N reads nothing past it. .cg: keep it in L2 only; every operand tile is
// staged in shared memory, L1 would only hold a second copy.
__device__ inline void cp_async_16(void* shared, const void* global, int valid_bytes) {
  const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global),
               "r"(valid_bytes)
               : "memory");
}

__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

}  // namespace bsrmm::cuda::sm80
