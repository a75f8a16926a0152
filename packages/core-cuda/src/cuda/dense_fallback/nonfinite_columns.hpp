// A dense GEMM multiplies B by A's structural zeros too, and 0 * Inf = NaN: where a column of B
// holds a NaN or an infinity, the dense product of that whole column differs from the sparse
// one (which never touches B under a structural zero; tests/reliability/nonfinite_test.cpp).
// Such a column is easy to see afterwards: every element of the dense product's column j sums a
// term with that non-finite element (an infinity times a stored value, or times a structural
// zero: NaN), so it is non-finite in every row, the first included. So after the GEMM one pass
// over the product's first row (N elements, not all of B) flags the columns to recompute over
// A's stored blocks. A column flagged because its first row overflowed with B finite is
// recomputed too, which only costs time: the sparse sum is the product there anyway. Nothing is
// recomputed when the row is finite, which the host never has to know: the repair kernel reads
// the count.
#pragma once

#include "../cuda_backend.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace bsrmm::cuda::dense_fallback {

struct ColumnFlags {
  int32_t* count;  // how many columns are flagged
  int32_t* flags;  // per column of B: 1 when it holds a non-finite value
  int32_t* list;   // the flagged columns, count of them, in no particular order
};

// Scratch bytes for the flags of B's `columns`, and the flags laid out in such scratch.
std::size_t column_flags_bytes(int64_t columns);
ColumnFlags column_flags_at(void* scratch, int64_t columns);

// Zeroes the flags, then flags every column j whose element first_row[j * stride] (of type
// `dtype`: C's, or the staged products' f32/f64) is a NaN or an infinity.
void find_nonfinite_columns(const void* first_row, bsrmm_dtype dtype, int64_t columns,
                            int64_t stride, const ColumnFlags& flags, cudaStream_t stream);

// The direct path's repair (beta == 0, no bias, no activation): every flagged column of C
// becomes alpha * (op(A) * B over A's stored blocks).
void repair_columns(const MatmulArgs& args, const ColumnFlags& flags, int sm_count,
                    cudaStream_t stream);

}  // namespace bsrmm::cuda::dense_fallback
