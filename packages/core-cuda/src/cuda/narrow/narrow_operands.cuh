// The parameter fields the narrow kernels share (and fill_operands in
// ../kernel_parts/simt_operands.cuh fills alike): A's arrays and shape, B and C with their
// element steps, the epilogue. Each kernel's parameter struct extends it with its own fields.
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstdint>

namespace bsrmm::cuda::narrow {

template <typename T>
struct NarrowOperands {
  const int32_t* row_ptr;
  const int32_t* col_idx;
  const T* values;
  const int32_t* row_order;  // longest block rows first (plan); may be null
  int32_t block_height;
  int32_t block_width;
  int64_t block_row_count;
  const T* b;
  int64_t b_row_step;  // elements between B[k][n] and B[k + 1][n]
  int64_t b_col_step;  // elements between B[k][n] and B[k][n + 1]
  T* c;
  int64_t ldc;
  bool c_col_major;
  int64_t n;
  double alpha;
  double beta;
  const T* bias;
  bsrmm_activation activation;
};

}  // namespace bsrmm::cuda::narrow
