// op(A) written out densely for the plan (cuda_backend.hpp: densify_blocks): the buffer is
// zeroed, then each CTA copies the blocks of one block row to their places. Runs once per
// matrix, so it is written for clarity: reads are contiguous, writes contiguous per block row.
#include "../../common/dtype.hpp"
#include "../cuda_backend.hpp"
#include "../runtime/cuda_check.hpp"
#include "../runtime/device_guard.hpp"

#include <algorithm>
#include <cstdint>

namespace bsrmm::cuda {
namespace {

template <typename Bits>
__global__ void densify_kernel(const int32_t* row_ptr, const int32_t* col_idx, const Bits* values,
                               int64_t block_rows, int32_t block_height, int32_t block_width,
                               int64_t ld, Bits* dst) {
  const int64_t block_size = int64_t(block_height) * block_width;
  for (int64_t r = blockIdx.x; r < block_rows; r += gridDim.x) {
    for (int32_t p = row_ptr[r]; p < row_ptr[r + 1]; ++p) {
      const Bits* block = values + int64_t(p) * block_size;
      Bits* corner = dst + r * block_height * ld + int64_t(col_idx[p]) * block_width;
      for (int64_t e = threadIdx.x; e < block_size; e += blockDim.x) {
        const int64_t i = e / block_width;
        corner[i * ld + (e - i * block_width)] = block[e];
      }
    }
  }
}

template <typename Bits>
void launch(const int32_t* row_ptr, const int32_t* col_idx, const void* values, int64_t block_rows,
            int32_t block_height, int32_t block_width, int64_t ld, void* dst, cudaStream_t stream) {
  const unsigned grid = unsigned(std::min<int64_t>(block_rows, 65535));
  densify_kernel<Bits><<<grid, 256, 0, stream>>>(row_ptr, col_idx, static_cast<const Bits*>(values),
                                                 block_rows, block_height, block_width, ld,
                                                 static_cast<Bits*>(dst));
  check_launch("densify_kernel");
}

}  // namespace

void densify_blocks(const int32_t* row_ptr, const int32_t* col_idx, const void* values,
                    int64_t block_rows, int64_t block_cols, int32_t block_height,
                    int32_t block_width, bsrmm_dtype dtype, void* dst, int device, void* stream) {
  const int64_t ld = block_cols * block_width;
  const std::size_t element = detail::element_size(dtype);
  const std::size_t bytes = std::size_t(block_rows) * block_height * std::size_t(ld) * element;
  if (bytes == 0) return;
  DeviceGuard guard(device);
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  check_cuda(cudaMemsetAsync(dst, 0, bytes, cuda_stream), "cudaMemsetAsync(dense copy of A)");
  switch (element) {
    case 2:
      return launch<uint16_t>(row_ptr, col_idx, values, block_rows, block_height, block_width, ld, dst, cuda_stream);
    case 4:
      return launch<uint32_t>(row_ptr, col_idx, values, block_rows, block_height, block_width, ld, dst, cuda_stream);
    default:
      return launch<uint64_t>(row_ptr, col_idx, values, block_rows, block_height, block_width, ld, dst, cuda_stream);
  }
}

}  // namespace bsrmm::cuda
