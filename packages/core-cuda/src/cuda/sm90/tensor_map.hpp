// Host side of TMA: tensor maps (the copy engine's description of a global 2D tensor and the box
// it moves) for the sm90 kernels. cuTensorMapEncodeTiled is a driver API function; the library
// links the runtime statically and never links libcuda, so the function is fetched from the
// driver at first use through cudaGetDriverEntryPointByVersion.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace bsrmm::cuda::sm90 {

enum class TmaSwizzle { b32, b64, b128 };

// The swizzle for boxes whose rows are `row_bytes` (32, 64 or 128) long: one swizzle row each.
constexpr TmaSwizzle tma_swizzle_for_row(int row_bytes) {
  return row_bytes == 32 ? TmaSwizzle::b32 : row_bytes == 64 ? TmaSwizzle::b64 : TmaSwizzle::b128;
}

struct Tensor2d {
  const void* data;        // 16-byte aligned
  uint64_t cols;           // innermost extent, elements
  uint64_t rows;
  uint64_t row_bytes;      // stride between rows: a multiple of 16
  uint32_t element_bytes;  // 2: f16 / bf16; 1: fp8
};

// A map whose box is box_cols x box_rows elements, landing in shared memory with `swizzle`
// (box_cols * element_bytes must not exceed the swizzle width). Elements outside the tensor
// read as zero. Throws bsrmm::detail::Error when the driver rejects the description.
CUtensorMap make_tensor_map_2d(const Tensor2d& tensor, uint32_t box_cols, uint32_t box_rows,
                               TmaSwizzle swizzle);

// The same tensor seen as 64-column chunks, [cols / 64][rows][64] (cols % 64 == 0): one box of
// box_rows x 64 x box_chunks lands as box_chunks consecutive box_rows x 64 tiles, each in the
// 128-byte swizzle, as box_chunks loads through a 2D map with a 64-wide box would place them.
// So one TMA request fetches what took box_chunks.
CUtensorMap make_tensor_map_column_chunks(const Tensor2d& tensor, uint32_t box_rows,
                                          uint32_t box_chunks);

}  // namespace bsrmm::cuda::sm90
