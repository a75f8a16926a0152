// Shared-memory addresses as the PTX below wants them: 32-bit offsets in the shared window.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::sm90 {

__device__ inline uint32_t smem_address(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

}  // namespace bsrmm::cuda::sm90

namespace bsrmm::cuda::sm90 {

// Dynamic shared memory is only 16-byte aligned; 128B-swizzled tiles must start on 1024 bytes.
// An offset from the shared array itself (not an integer round trip) keeps the pointer known to
// be shared: its loads and stores stay LDS/STS and its addresses need no conversion each time.
__device__ inline uint8_t* align_1024(uint8_t* pointer) {
  return pointer + ((1024 - (smem_address(pointer) & 1023)) & 1023);
}

}  // namespace bsrmm::cuda::sm90
