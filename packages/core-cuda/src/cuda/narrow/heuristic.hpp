// When the narrow kernels are the untuned choice, and how many columns of C a warp computes.
// Plain C++ (no CUDA header): the registry and the CPU-side tests use it.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::narrow {

// Columns of C per warp: each column is one accumulator per lane, so N above this is covered by
// several warps per row slice, each reading the slice's A again (from L2: they run side by side).
constexpr int kMaxCols = 16;

inline int columns_per_warp(int64_t n) {
  int cols = 1;
  while (cols < kMaxCols && cols < n) cols *= 2;
  return cols;
}

// The narrow kernel reads A once per 16 columns at memory speed, the tensor-core families once
// per 64-256 columns at their tile's rate: at N <= 16 the narrow kernel moves the fewest bytes
// (docs/perf-log.md entry 39). Blocks that no tensor-core family takes (a side not a multiple of
// 16) would otherwise go to the generic kernel, whose 64 x 64 tile a small block fills poorly.
inline bool preferred(int32_t block_height, int32_t block_width, int64_t n) {
  const bool tensor_core_shape = block_height % 16 == 0 && block_width % 16 == 0;
  return n <= kMaxCols || !tensor_core_shape;
}

}  // namespace bsrmm::cuda::narrow
