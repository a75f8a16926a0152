// ldmatrix (sm_75+): a warp loads four 8x8 tiles of 16-bit elements from shared memory straight
// into the register layout of an mma.sync fragment. Each lane supplies one 16-byte row address
// (lanes 0-7 tile 0, 8-15 tile 1, 16-23 tile 2, 24-31 tile 3). `.trans` hands out columns
// instead of rows, which turns a k-major (row-major B) tile into the k-pairs mma expects.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::sm80 {

__device__ inline void ldmatrix_x4(uint32_t (&r)[4], const void* row_address) {
  const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(row_address));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

__device__ inline void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row_address) {
  const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(row_address));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

}  // namespace bsrmm::cuda::sm80
