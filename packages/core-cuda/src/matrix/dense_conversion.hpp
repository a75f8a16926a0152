// Conversions between BSR and dense: keep the non-zero blocks of a dense matrix, or write a
// BSR matrix out densely. Both run on the host; GPU operands are staged through host memory
// (these are setup-time operations, not the hot path).
#pragma once

#include "bsr_matrix.hpp"

#include <bsrmm/bsrmm.h>

#include <memory>

namespace bsrmm::matrix {

// Keeps every block_height x block_width block holding a non-zero: any element whose bits,
// sign aside, are not all zero (so NaN counts, -0.0 does not). `dense` lives on the host or on
// `target`; the matrix is stored on `target`.
std::unique_ptr<BsrMatrix> from_dense(const bsrmm_dense& dense, int32_t block_height,
                                      int32_t block_width, bsrmm_device target, void* stream);

// Writes `matrix` into `out` (its shape and dtype, on `target`): zeros, then the blocks.
// Padding between rows (ld beyond the logical size) is left untouched.
void to_dense(const BsrMatrix& matrix, const bsrmm_dense& out, bsrmm_device target, void* stream);

}  // namespace bsrmm::matrix
