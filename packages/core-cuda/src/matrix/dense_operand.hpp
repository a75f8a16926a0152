// Rules for a dense operand (bsrmm_dense) on its own: enum values, sizes, leading dimension,
// byte size, data pointer and alignment. Rules that relate it to other operands (shapes vs
// op(A), dtypes, devices, aliasing) live with the operation that has them.
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstddef>
#include <cstdint>

namespace bsrmm::matrix {

// `name` is how messages call the operand ("B", "C", "dense", "out"). An fp8 dtype is
// UNSUPPORTED unless `fp8_allowed` (B of a multiply).
void validate_dense(const bsrmm_dense& dense, const char* name, bool fp8_allowed = false);

inline bool is_empty(const bsrmm_dense& dense) { return dense.rows == 0 || dense.cols == 0; }

// Elements from data to one past the last element (0 when empty); an overflow is an
// INVALID_ARGUMENT naming the operand.
int64_t dense_extent(const bsrmm_dense& dense, const char* name = "dense");
std::size_t dense_extent_bytes(const bsrmm_dense& dense);

inline int64_t dense_offset(const bsrmm_dense& dense, int64_t row, int64_t col) {
  return dense.layout == BSRMM_LAYOUT_ROW_MAJOR ? row * dense.ld + col : col * dense.ld + row;
}

// True when the memory spans of two operands intersect (same device only).
bool dense_overlaps(const bsrmm_dense& x, const bsrmm_dense& y);

}  // namespace bsrmm::matrix
