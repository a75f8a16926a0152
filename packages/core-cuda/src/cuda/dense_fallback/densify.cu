// op(A) written out densely (cuda_backend.hpp: densify_blocks): the buffer is zeroed, then every
// stored element is copied to its place. One thread per 16-byte piece of a block (one element
// where a block's rows or the dense rows are not 16-byte multiples), over all stored blocks at
// once, so the copy runs at memory speed whatever the shape: a plan built it once per matrix,
// but a step's matrix (torch's per-call path, values borrowed) builds it on every multiply, and
// the first version, one CTA per block row walking its blocks in turn, took 933 us for 27 block
// rows of 128 blocks of 64 x 64 (28 MB, H200; perf-log 60).
#include "../../common/dtype.hpp"
#include "../cuda_backend.hpp"
#include "../kernel_parts/block_row_of.cuh"
#include "../runtime/cuda_check.hpp"
#include "../runtime/device_guard.hpp"

#include <algorithm>
#include <cstdint>

namespace bsrmm::cuda {
namespace {

// Piece: the unit copied (uint4 when rows are 16-byte multiples and aligned, else the element).
// Widths and ld are in pieces.
template <typename Piece>
__global__ void densify_kernel(const int32_t* row_ptr, const int32_t* col_idx, const Piece* values,
                               int64_t block_rows, int64_t nnzb, int32_t block_height, int32_t block_width,
                               int64_t ld, Piece* dst) {
  const int64_t per_block = int64_t(block_height) * block_width;
  const int64_t total = nnzb * per_block;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += int64_t(gridDim.x) * blockDim.x) {
    const int64_t p = t / per_block;
    const int64_t e = t - p * per_block;
    const int64_t i = e / block_width;
    const int64_t r = block_row_of(row_ptr, block_rows, p);
    dst[(r * block_height + i) * ld + int64_t(col_idx[p]) * block_width + (e - i * block_width)] = values[t];
  }
}

template <typename Piece>
void launch(const int32_t* row_ptr, const int32_t* col_idx, const void* values, int64_t block_rows,
            int64_t nnzb, int32_t block_height, int32_t block_width, int64_t ld, void* dst,
            cudaStream_t stream) {
  const int64_t total = nnzb * block_height * block_width;
  const unsigned grid = unsigned(std::min<int64_t>((total + 255) / 256, int64_t(1) << 20));
  densify_kernel<Piece><<<grid, 256, 0, stream>>>(row_ptr, col_idx, static_cast<const Piece*>(values),
                                                  block_rows, nnzb, block_height, block_width, ld,
                                                  static_cast<Piece*>(dst));
  check_launch("densify_kernel");
}

}  // namespace

void densify_blocks(const int32_t* row_ptr, const int32_t* col_idx, const void* values,
                    int64_t block_rows, int64_t block_cols, int32_t block_height,
                    int32_t block_width, int64_t nnzb, bsrmm_dtype dtype, void* dst, int device,
                    void* stream) {
  const int64_t ld = block_cols * block_width;
  const std::size_t element = detail::element_size(dtype);
  const std::size_t bytes = std::size_t(block_rows) * block_height * std::size_t(ld) * element;
  if (bytes == 0) return;
  DeviceGuard guard(device);
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  check_cuda(cudaMemsetAsync(dst, 0, bytes, cuda_stream), "cudaMemsetAsync(dense copy of A)");
  if (nnzb == 0) return;
  const std::size_t row_bytes = std::size_t(block_width) * element;
  const bool whole_pieces = row_bytes % 16 == 0 && (std::size_t(ld) * element) % 16 == 0 &&
                            reinterpret_cast<std::uintptr_t>(values) % 16 == 0 &&
                            reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
  if (whole_pieces) {
    const auto per_piece = int32_t(16 / element);
    return launch<uint4>(row_ptr, col_idx, values, block_rows, nnzb, block_height, block_width / per_piece,
                         ld / per_piece, dst, cuda_stream);
  }
  switch (element) {
    case 1:
      return launch<uint8_t>(row_ptr, col_idx, values, block_rows, nnzb, block_height, block_width, ld, dst, cuda_stream);
    case 2:
      return launch<uint16_t>(row_ptr, col_idx, values, block_rows, nnzb, block_height, block_width, ld, dst, cuda_stream);
    case 4:
      return launch<uint32_t>(row_ptr, col_idx, values, block_rows, nnzb, block_height, block_width, ld, dst, cuda_stream);
    default:
      return launch<uint64_t>(row_ptr, col_idx, values, block_rows, nnzb, block_height, block_width, ld, dst, cuda_stream);
  }
}

}  // namespace bsrmm::cuda
