// The validated shape and host-side index arrays of a BSR matrix. Indices are int32 inside
// bsrmm (validation guarantees every count fits), blocks are stored row-major.
#pragma once

#include "../common/limits.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <vector>

namespace bsrmm::matrix {

using detail::max_block_side;

struct BsrShape {
  int64_t rows = 0;
  int64_t cols = 0;
  int32_t block_height = 1;
  int32_t block_width = 1;
  int64_t block_row_count = 0;
  int64_t block_col_count = 0;
  int64_t nnzb = 0;

  int64_t block_elements() const { return int64_t{block_height} * block_width; }
  int64_t value_count() const { return nnzb * block_elements(); }
  // The shape of A^T: rows and columns swap, each block transposed.
  BsrShape transposed() const {
    return BsrShape{cols, rows, block_width, block_height, block_col_count, block_row_count, nnzb};
  }
};

struct BsrStructure {
  BsrShape shape;
  std::vector<int32_t> row_ptr;  // block_row_count + 1
  std::vector<int32_t> col_idx;  // nnzb, sorted and unique within each block row
};

}  // namespace bsrmm::matrix
