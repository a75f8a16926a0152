// Values of A^T: block t of the result is the transpose of source block src_block[t].
// Elements are moved as raw bits of their width, so one kernel serves all dtypes.
#include "cuda_backend.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_guard.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace bsrmm::cuda {
namespace {

// Blocks at least this high and wide go through shared memory in square tiles of this side.
constexpr int tile_side = 32;
constexpr int tile_rows_per_pass = 8;  // a CTA is tile_side x tile_rows_per_pass threads

// The tile a CTA's work item `work` names: tiles_across x tiles_down tiles of `side` a block,
// blocks in destination order, each read from its source block (src_block).
template <typename Bits>
struct BlockTile {
  const Bits* from;  // the source block
  Bits* to;          // the destination block
  int row0, col0;    // the tile's first row and column in the source block
};

template <typename Bits>
__device__ BlockTile<Bits> block_tile(int64_t work, int64_t tiles_per_block, int tiles_across, int side,
                                      const Bits* src, Bits* dst, const int32_t* src_block,
                                      int64_t block_size) {
  const int64_t t = work / tiles_per_block;
  const int within = int(work - t * tiles_per_block);
  return BlockTile<Bits>{src + int64_t(__ldg(src_block + t)) * block_size, dst + t * block_size,
                         (within / tiles_across) * side, (within % tiles_across) * side};
}

// Small blocks: one thread per destination element. Writes are contiguous, reads stride by the
// block width inside one block of a few sectors, which L1 serves.
template <typename Bits>
__global__ void transpose_small_blocks_kernel(const Bits* src, Bits* dst, const int32_t* src_block,
                                              int64_t elements, int32_t block_height,
                                              int32_t block_width) {
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

// Large blocks: a CTA moves one tile_side x tile_side tile of a block at a time, reading the
// source's rows and writing the destination's rows whole (both coalesced) through a padded
// shared tile, one element per thread and step.
template <typename Bits>
__global__ void transpose_tiled_blocks_kernel(const Bits* src, Bits* dst, const int32_t* src_block,
                                              int64_t nnzb, int32_t block_height,
                                              int32_t block_width) {
  __shared__ Bits tile[tile_side][tile_side + 1];  // +1: the column reads hit 32 banks
  const int tiles_down = (block_height + tile_side - 1) / tile_side;
  const int tiles_across = (block_width + tile_side - 1) / tile_side;
  const int64_t tiles_per_block = int64_t(tiles_down) * tiles_across;
  const int64_t block_size = int64_t(block_height) * block_width;
  const int x = threadIdx.x, y = threadIdx.y;
  for (int64_t work = blockIdx.x; work < nnzb * tiles_per_block; work += gridDim.x) {
    const auto [from, to, row0, col0] =
        block_tile(work, tiles_per_block, tiles_across, tile_side, src, dst, src_block, block_size);
    for (int r = y; r < tile_side; r += tile_rows_per_pass) {
      if (row0 + r < block_height && col0 + x < block_width)
        tile[r][x] = from[int64_t(row0 + r) * block_width + col0 + x];
    }
    __syncthreads();
    // Destination row col0 + r holds source column col0 + r; it is block_height long.
    for (int r = y; r < tile_side; r += tile_rows_per_pass) {
      if (col0 + r < block_width && row0 + x < block_height)
        to[int64_t(col0 + r) * block_height + row0 + x] = tile[x][r];
    }
    __syncthreads();  // the next tile overwrites this one
  }
}

// Blocks whose sides are multiples of 64 (the training cases, 64 and 128 wide), 2-8 byte
// elements: the tiled kernel with 16-byte loads and stores, all of a thread's loads issued
// before any is used. One element per thread and step kept too few bytes in flight: 896 blocks
// of 128 x 128 bf16 took 56 us (1.0 TB/s of the copy's 58 MB; docs/perf-log.md entry 85).
constexpr int vector_tile_side = 64;
constexpr int vector_threads = 256;

template <typename Bits>
__global__ void __launch_bounds__(vector_threads)
    transpose_vector_blocks_kernel(const Bits* src, Bits* dst, const int32_t* src_block, int64_t nnzb,
                                   int32_t block_height, int32_t block_width) {
  constexpr int side = vector_tile_side;
  constexpr int per_vector = 16 / sizeof(Bits);
  constexpr int vectors_per_row = side / per_vector;
  constexpr int loads = side * vectors_per_row / vector_threads;  // per thread: sizeof(Bits)
  // One 4-byte word (an 8-byte element) of padding per row spreads a column over the banks.
  constexpr int pitch = side + (sizeof(Bits) >= 4 ? 1 : 4 / sizeof(Bits));
  __shared__ Bits tile[side * pitch];
  const int tiles_across = block_width / side;
  const int64_t tiles_per_block = int64_t(block_height / side) * tiles_across;
  const int64_t block_size = int64_t(block_height) * block_width;
  for (int64_t work = blockIdx.x; work < nnzb * tiles_per_block; work += gridDim.x) {
    const auto [from, to, row0, col0] =
        block_tile(work, tiles_per_block, tiles_across, side, src, dst, src_block, block_size);
    uint4 chunks[loads];
#pragma unroll
    for (int i = 0; i < loads; ++i) {
      const int v = int(threadIdx.x) + i * vector_threads;
      const int r = v / vectors_per_row, c = (v % vectors_per_row) * per_vector;
      chunks[i] = *reinterpret_cast<const uint4*>(from + int64_t(row0 + r) * block_width + col0 + c);
    }
#pragma unroll
    for (int i = 0; i < loads; ++i) {
      const int v = int(threadIdx.x) + i * vector_threads;
      const int r = v / vectors_per_row, c = (v % vectors_per_row) * per_vector;
      const Bits* parts = reinterpret_cast<const Bits*>(&chunks[i]);
#pragma unroll
      for (int k = 0; k < per_vector; ++k) tile[r * pitch + c + k] = parts[k];
    }
    __syncthreads();
    // Destination row col0 + r is source column col0 + r; its elements are source rows.
#pragma unroll
    for (int i = 0; i < loads; ++i) {
      const int v = int(threadIdx.x) + i * vector_threads;
      const int r = v / vectors_per_row, c = (v % vectors_per_row) * per_vector;
      uint4 chunk;
      Bits* parts = reinterpret_cast<Bits*>(&chunk);
#pragma unroll
      for (int k = 0; k < per_vector; ++k) parts[k] = tile[(c + k) * pitch + r];
      *reinterpret_cast<uint4*>(to + int64_t(col0 + r) * block_height + row0 + c) = chunk;
    }
    __syncthreads();  // the next tile overwrites this one
  }
}

bool vector_tiles_fit(const void* src, const void* dst, int32_t block_height, int32_t block_width,
                      std::size_t element_bytes) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return element_bytes >= 2 && block_height % vector_tile_side == 0 &&
         block_width % vector_tile_side == 0 && aligned(src) && aligned(dst);
}

template <typename Bits>
void launch(const void* src, void* dst, const int32_t* src_block, int64_t nnzb,
            int32_t block_height, int32_t block_width, cudaStream_t stream) {
  const Bits* from = static_cast<const Bits*>(src);
  Bits* to = static_cast<Bits*>(dst);
  if (vector_tiles_fit(src, dst, block_height, block_width, sizeof(Bits))) {
    const int64_t tiles = nnzb * (block_height / vector_tile_side) * (block_width / vector_tile_side);
    const int64_t ctas = std::min<int64_t>(tiles, 65536);
    transpose_vector_blocks_kernel<Bits><<<unsigned(ctas), vector_threads, 0, stream>>>(
        from, to, src_block, nnzb, block_height, block_width);
    check_launch("transpose_vector_blocks_kernel");
    return;
  }
  if (block_height >= tile_side && block_width >= tile_side) {
    const int64_t tiles = nnzb * ((block_height + tile_side - 1) / tile_side) *
                          ((block_width + tile_side - 1) / tile_side);
    const dim3 threads(tile_side, tile_rows_per_pass);
    const int64_t ctas = std::min<int64_t>(tiles, 65536);
    transpose_tiled_blocks_kernel<Bits><<<unsigned(ctas), threads, 0, stream>>>(
        from, to, src_block, nnzb, block_height, block_width);
    check_launch("transpose_tiled_blocks_kernel");
    return;
  }
  constexpr int threads = 256;
  const int64_t elements = nnzb * block_height * block_width;
  const int64_t ctas = std::min<int64_t>((elements + threads - 1) / threads, 65536);
  transpose_small_blocks_kernel<Bits><<<unsigned(ctas), threads, 0, stream>>>(
      from, to, src_block, elements, block_height, block_width);
  check_launch("transpose_small_blocks_kernel");
}

}  // namespace

void transpose_blocks(const void* src, void* dst, const int32_t* src_block, int64_t nnzb,
                      int32_t block_height, int32_t block_width, bsrmm_dtype dtype, int device,
                      void* stream) {
  if (nnzb == 0) return;
  DeviceGuard guard(device);
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case BSRMM_DTYPE_F16:
    case BSRMM_DTYPE_BF16:
      return launch<uint16_t>(src, dst, src_block, nnzb, block_height, block_width, cuda_stream);
    case BSRMM_DTYPE_F32:
      return launch<uint32_t>(src, dst, src_block, nnzb, block_height, block_width, cuda_stream);
    case BSRMM_DTYPE_F64:
      return launch<uint64_t>(src, dst, src_block, nnzb, block_height, block_width, cuda_stream);
    case BSRMM_DTYPE_FLOAT8_E4M3:
    case BSRMM_DTYPE_FLOAT8_E5M2:
      return launch<uint8_t>(src, dst, src_block, nnzb, block_height, block_width, cuda_stream);
  }
  detail::invalid_argument("transpose_blocks: dtype ", int(dtype), " is not a bsrmm dtype");
}

}  // namespace bsrmm::cuda
