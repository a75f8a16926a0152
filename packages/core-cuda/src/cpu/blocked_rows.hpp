// The inner part of cpu_blocked_simd: computes a range of block rows x a range of columns of C
// from A's values and B packed in column strips, both already in the compute type (f32 or f64).
// Compiled once per instruction set and picked at run time (see blocked_rows.cpp).
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstdint>

namespace bsrmm::cpu {

// Register tile of the micro-kernel: MR rows of C x NV SIMD vectors of columns. 4 x 3 vectors
// uses 12 of AVX2's 16 registers for accumulators, 3 for B and 1 for the broadcast A element:
// 7 loads per 12 FMAs, within the two load ports of current cores.
constexpr int tile_rows = 4;
constexpr int tile_vectors = 3;
constexpr int vector_bytes = 32;

template <typename T>
constexpr int lanes() {
  return vector_bytes / static_cast<int>(sizeof(T));
}
template <typename T>
constexpr int tile_cols() {
  return tile_vectors * lanes<T>();
}

struct BlockedProblem {
  int32_t block_height;
  int32_t block_width;
  const int32_t* row_ptr;
  const int32_t* col_idx;  // into the packed rows of B: block column p covers rows p * bw..
  const void* a_values;  // compute type, blocks row-major
  // B packed in strips of tile_cols columns: strip s starts at element s * tile_cols * b_rows
  // and holds b_rows rows of min(tile_cols, b_width - s * tile_cols) contiguous elements.
  // b_width is B's column count rounded up to whole vectors (zeros beyond B).
  const void* b;
  int64_t b_rows;
  int64_t b_width;
  bsrmm_dense c;  // output in the operation's dtype
  double alpha;
  double beta;
  const void* bias;
  bsrmm_activation activation;
};

// Block rows [row_begin, row_end) x columns [col_begin, col_end) of C. col_begin is a multiple
// of tile_cols<T>(); col_end may pass C.cols up to b_width (the surplus is computed, not stored).
void blocked_rows_f32(const BlockedProblem& problem, int64_t row_begin, int64_t row_end,
                      int64_t col_begin, int64_t col_end);
void blocked_rows_f64(const BlockedProblem& problem, int64_t row_begin, int64_t row_end,
                      int64_t col_begin, int64_t col_end);

}  // namespace bsrmm::cpu
