// Which block row holds a stored block: for kernels that walk the stored blocks flat (one
// thread or CTA per block) and need the block's row (its place in C, a per-row scale).
#pragma once

#include <cstdint>

namespace bsrmm::cuda {

// The block row holding stored block p: the last r with row_ptr[r] <= p (binary search over the
// block_rows + 1 row pointers).
__device__ inline int64_t block_row_of(const int32_t* row_ptr, int64_t block_rows, int64_t p) {
  int64_t low = 0, high = block_rows;  // row_ptr[low] <= p < row_ptr[high]
  while (high - low > 1) {
    const int64_t mid = (low + high) / 2;
    if (row_ptr[mid] <= p) low = mid; else high = mid;
  }
  return low;
}

}  // namespace bsrmm::cuda
