// What every SDDMM kernel receives, and the frame: which stored block and which tile of it a CTA
// computes. Tiles of one block are consecutive in the grid and blocks come in the pattern's
// stored order, so CTAs that run together read the same rows of X (one block row) from L2.
#pragma once

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

template <typename T>
struct Params {
  const int32_t* row_ptr;  // block_row_count + 1
  const int32_t* col_idx;  // nnzb
  int64_t block_row_count;
  int32_t block_height;
  int32_t block_width;
  int64_t nnzb;
  // Element (i, t) of X at x[i * x_row_step + t * x_t_step]; (t, k) of Y at
  // y[t * y_t_step + k * y_col_step]. One step of each pair is 1 (row- or column-major).
  const T* x;
  int64_t x_row_step;
  int64_t x_t_step;
  const T* y;
  int64_t y_t_step;
  int64_t y_col_step;
  int64_t t_count;
  T* values;  // nnzb blocks of block_height x block_width, row-major
  double alpha;
  double beta;  // 0: values are only written
  // Tiles per block along its rows and columns (the kernel's tile shape).
  int32_t tiles_m;
  int32_t tiles_n;
};

struct Frame {
  int64_t block;      // index into the stored blocks (and into values)
  int64_t row0;       // first row of X: block row * block_height + tile row offset
  int64_t col0;       // first column of Y: block column * block_width + tile column offset
  int32_t m0;         // the tile's first row and column inside the block
  int32_t n0;
};

// The block row that stores `block`: the last r with row_ptr[r] <= block (binary search; every
// thread of a CTA asks the same addresses, served by L1 after the first).
__device__ inline int64_t block_row_of(const int32_t* row_ptr, int64_t block_row_count, int64_t block) {
  int64_t low = 0, high = block_row_count;  // row_ptr[low] <= block < row_ptr[high]
  while (high - low > 1) {
    const int64_t mid = (low + high) / 2;
    if (row_ptr[mid] <= block)
      low = mid;
    else
      high = mid;
  }
  return low;
}

template <typename T>
__device__ inline Frame frame_of(const Params<T>& p, int64_t tile, int tile_m_size, int tile_n_size) {
  const int64_t per_block = int64_t(p.tiles_m) * p.tiles_n;
  Frame f;
  f.block = tile / per_block;
  const int64_t within = tile % per_block;
  f.m0 = int32_t(within / p.tiles_n) * tile_m_size;
  f.n0 = int32_t(within % p.tiles_n) * tile_n_size;
  const int64_t block_row = block_row_of(p.row_ptr, p.block_row_count, f.block);
  f.row0 = block_row * p.block_height + f.m0;
  f.col0 = int64_t(p.col_idx[f.block]) * p.block_width + f.n0;
  return f;
}

}  // namespace bsrmm::cuda::sddmm_kernels
