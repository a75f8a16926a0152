// Values of op(A) = A^T for the plan: block t of the result is the transpose of source block
// src_block[t]. Elements are moved as raw bits of their width, so one kernel serves all dtypes.
#include "cuda_backend.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_guard.hpp"

#include <algorithm>
#include <cstdint>

namespace bsrmm::cuda {
namespace {

// One thread per destination element: writes are contiguous, reads stride by the block width
// (each block is small and read once, from L2).
template <typename Bits>
__global__ void transpose_blocks_kernel(const Bits* src, Bits* dst, const int32_t* src_block,
                                        int64_t elements, int32_t block_height, int32_t block_width) {
  const int64_t block_size = int64_t(block_height) * block_width;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < elements;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = e / block_size;
    const int64_t within = e - t * block_size;
    const int64_t dst_row = within / block_height;  // destination is block_width x block_height
    const int64_t dst_col = within - dst_row * block_height;
    const int64_t source = int64_t(__ldg(src_block + t)) * block_size + dst_col * block_width + dst_row;
    dst[e] = src[source];
  }
}

template <typename Bits>
void launch(const void* src, void* dst, const int32_t* src_block, int64_t elements,
            int32_t block_height, int32_t block_width, cudaStream_t stream) {
  constexpr int threads = 256;
  const int64_t blocks = std::min<int64_t>((elements + threads - 1) / threads, 65536);
  transpose_blocks_kernel<Bits><<<unsigned(blocks), threads, 0, stream>>>(
      static_cast<const Bits*>(src), static_cast<Bits*>(dst), src_block, elements, block_height,
      block_width);
  check_launch("transpose_blocks_kernel");
}

}  // namespace

void transpose_blocks(const void* src, void* dst, const int32_t* src_block, int64_t nnzb,
                      int32_t block_height, int32_t block_width, bsrmm_dtype dtype, int device,
                      void* stream) {
  const int64_t elements = nnzb * block_height * block_width;
  if (elements == 0) return;
  DeviceGuard guard(device);
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case BSRMM_DTYPE_F16:
    case BSRMM_DTYPE_BF16:
      return launch<uint16_t>(src, dst, src_block, elements, block_height, block_width, cuda_stream);
    case BSRMM_DTYPE_F32:
      return launch<uint32_t>(src, dst, src_block, elements, block_height, block_width, cuda_stream);
    case BSRMM_DTYPE_F64:
      return launch<uint64_t>(src, dst, src_block, elements, block_height, block_width, cuda_stream);
    case BSRMM_DTYPE_FLOAT8_E4M3:
    case BSRMM_DTYPE_FLOAT8_E5M2:
      return launch<uint8_t>(src, dst, src_block, elements, block_height, block_width, cuda_stream);
  }
  detail::invalid_argument("transpose_blocks: dtype ", int(dtype), " is not a bsrmm dtype");
}

}  // namespace bsrmm::cuda
