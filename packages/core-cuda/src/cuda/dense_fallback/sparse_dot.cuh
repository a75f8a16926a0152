// One element of op(A) * B summed over A's stored blocks only, as the sparse kernels sum it:
// the dense fallback's answer for the columns where the dense GEMM's 0 * Inf would differ.
// Device code; slow by design (one thread per element) and used only where B is not finite.
#pragma once

#include "../kernel_parts/element.cuh"
#include "../cuda_backend.hpp"

#include <cstdint>

namespace bsrmm::cuda::dense_fallback {

template <typename T>
struct SparseOperands {
  const int32_t* row_ptr;
  const int32_t* col_idx;
  const T* values;  // blocks row-major, block_height x block_width each
  int32_t block_height;
  int32_t block_width;
  const T* b;
  int64_t ldb;
  bool b_col_major;
};

template <typename T>
__device__ typename Element<T>::Acc sparse_dot(const SparseOperands<T>& s, int64_t i, int64_t j) {
  using Acc = typename Element<T>::Acc;
  const int64_t block_row = i / s.block_height;
  const int64_t within = i - block_row * s.block_height;
  Acc sum = Acc(0);
  for (int32_t p = s.row_ptr[block_row]; p < s.row_ptr[block_row + 1]; ++p) {
    const T* a_row = s.values + (int64_t(p) * s.block_height + within) * s.block_width;
    const int64_t k0 = int64_t(s.col_idx[p]) * s.block_width;
    for (int32_t kk = 0; kk < s.block_width; ++kk) {
      const int64_t k = k0 + kk;
      const T b = s.b_col_major ? s.b[j * s.ldb + k] : s.b[k * s.ldb + j];
      sum += Element<T>::to_acc(a_row[kk]) * Element<T>::to_acc(b);
    }
  }
  return sum;
}

template <typename T>
SparseOperands<T> sparse_operands(const MatmulArgs& args) {
  return {args.a.row_ptr,
          args.a.col_idx,
          static_cast<const T*>(args.a.values),
          args.a.block_height,
          args.a.block_width,
          static_cast<const T*>(args.b.data),
          args.b.ld,
          args.b.layout == BSRMM_LAYOUT_COL_MAJOR};
}

}  // namespace bsrmm::cuda::dense_fallback
