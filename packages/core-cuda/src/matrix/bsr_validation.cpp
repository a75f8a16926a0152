#include "bsr_validation.hpp"

#include "../common/checked_math.hpp"
#include "../common/dtype.hpp"
#include "../common/error.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace bsrmm::matrix {

using detail::invalid_argument;

namespace {

constexpr int64_t int32_max = std::numeric_limits<int32_t>::max();

void check_device_value(bsrmm_device device, const char* name) {
  if (device.type == BSRMM_DEVICE_CPU) {
    if (device.ordinal != 0) {
      invalid_argument(name, ".ordinal = ", device.ordinal, " for a CPU device, must be 0");
    }
  } else if (device.type == BSRMM_DEVICE_CUDA) {
    if (device.ordinal < 0) invalid_argument(name, ".ordinal = ", device.ordinal, " is negative");
  } else {
    invalid_argument(name, ".type = ", static_cast<int>(device.type),
                     " is not a bsrmm_device_type (0 = CPU, 1 = CUDA)");
  }
}

// Reads entry i of an index array of either width.
class IndexReader {
 public:
  IndexReader(const void* data, bsrmm_index_type type) : data_(data), type_(type) {}
  int64_t operator[](int64_t i) const {
    return type_ == BSRMM_INDEX_I32 ? static_cast<const int32_t*>(data_)[i]
                                    : static_cast<const int64_t*>(data_)[i];
  }

 private:
  const void* data_;
  bsrmm_index_type type_;
};

void check_fits_int32(int64_t value, const char* array, int64_t i) {
  if (value > int32_max) {
    invalid_argument("desc.", array, "[", i, "] = ", value,
                     " exceeds INT32_MAX: bsrmm stores block indices as int32");
  }
}

std::vector<int32_t> read_row_ptr(const BsrShape& shape, const void* data,
                                  bsrmm_index_type type) {
  std::vector<int32_t> row_ptr(static_cast<size_t>(shape.block_row_count + 1), 0);
  if (data == nullptr) return row_ptr;  // only allowed for zero block rows: {0}
  const IndexReader in(data, type);
  const int64_t first = in[0];
  if (first != 0) invalid_argument("desc.row_ptr[0] = ", first, ", must be 0");
  int64_t previous = 0;
  for (int64_t r = 1; r <= shape.block_row_count; ++r) {
    const int64_t value = in[r];
    check_fits_int32(value, "row_ptr", r);
    if (value < previous) {
      invalid_argument("desc.row_ptr is not monotone: row_ptr[", r - 1, "] = ", previous,
                       " > row_ptr[", r, "] = ", value);
    }
    if (value > shape.nnzb) {
      invalid_argument("desc.row_ptr[", r, "] = ", value, " > desc.nnzb = ", shape.nnzb);
    }
    row_ptr[static_cast<size_t>(r)] = static_cast<int32_t>(value);
    previous = value;
  }
  if (previous != shape.nnzb) {
    invalid_argument("desc.row_ptr[", shape.block_row_count, "] = ", previous,
                     " (its last entry) must equal desc.nnzb = ", shape.nnzb);
  }
  return row_ptr;
}

// Sorts the columns of block row `row` (entries [begin, end)), recording where each block came
// from, then rejects duplicates by naming both original positions.
void sort_row(std::vector<int32_t>& col_idx, std::vector<int64_t>& block_source, int64_t row,
              int64_t begin, int64_t end) {
  std::vector<int64_t> order(static_cast<size_t>(end - begin));
  std::iota(order.begin(), order.end(), begin);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return col_idx[static_cast<size_t>(x)] < col_idx[static_cast<size_t>(y)];
  });
  std::vector<int32_t> sorted(order.size());
  std::vector<int64_t> source(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    sorted[i] = col_idx[static_cast<size_t>(order[i])];
    source[i] = block_source[static_cast<size_t>(order[i])];
  }
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1]) {
      invalid_argument("duplicate block in block row ", row, ": column ", sorted[i],
                       " appears at desc.col_idx[", std::min(source[i - 1], source[i]),
                       "] and desc.col_idx[", std::max(source[i - 1], source[i]),
                       "] (each block may appear once)");
    }
  }
  std::copy(sorted.begin(), sorted.end(), col_idx.begin() + begin);
  std::copy(source.begin(), source.end(), block_source.begin() + begin);
}

}  // namespace

void check_block_side(int32_t side, const char* name) {
  if (side < 1 || side > max_block_side) {
    invalid_argument(name, " = ", side, " is outside 1..", max_block_side,
                     " (GPU kernels keep a block's tile on chip; express larger blocks as several"
                     " blocks)");
  }
}

void validate_flags(uint32_t flags) {
  const uint32_t known = BSRMM_CREATE_SORT_INDICES | BSRMM_CREATE_BORROW_VALUES;
  if ((flags & ~known) != 0) {
    invalid_argument("flags = ", flags, " has unknown bits ", (flags & ~known),
                     " (known: BSRMM_CREATE_SORT_INDICES = 1, BSRMM_CREATE_BORROW_VALUES = 2)");
  }
}

BsrShape validate_shape(const bsrmm_bsr_desc& desc, bool fp8_allowed) {
  if (detail::is_fp8(desc.dtype) && !fp8_allowed) {
    invalid_argument("desc.dtype = ", detail::name(desc.dtype),
                     " needs scales: create fp8 matrices with bsrmm_matrix_create_scaled");
  }
  if (fp8_allowed && !detail::is_fp8(desc.dtype)) {
    invalid_argument("desc.dtype = ", static_cast<int>(desc.dtype),
                     " is not fp8 (4 = FLOAT8_E4M3, 5 = FLOAT8_E5M2): only fp8 values take "
                     "scales (create this matrix with bsrmm_matrix_create)");
  }
  if (!detail::is_valid(desc.dtype) && !detail::is_fp8(desc.dtype)) {
    invalid_argument("desc.dtype = ", static_cast<int>(desc.dtype), detail::dtype_rule(desc.dtype));
  }
  if (!detail::is_valid(desc.index_type)) {
    invalid_argument("desc.index_type = ", static_cast<int>(desc.index_type),
                     " is not a bsrmm_index_type (0 = I32, 1 = I64)");
  }
  check_device_value(desc.device, "desc.device");
  if (desc.rows < 0) invalid_argument("desc.rows = ", desc.rows, " is negative");
  if (desc.cols < 0) invalid_argument("desc.cols = ", desc.cols, " is negative");
  check_block_side(desc.block_height, "desc.block_height");
  check_block_side(desc.block_width, "desc.block_width");
  if (desc.rows % desc.block_height != 0) {
    invalid_argument("desc.rows = ", desc.rows, " is not a multiple of desc.block_height = ",
                     desc.block_height);
  }
  if (desc.cols % desc.block_width != 0) {
    invalid_argument("desc.cols = ", desc.cols, " is not a multiple of desc.block_width = ",
                     desc.block_width);
  }

  BsrShape shape;
  shape.rows = desc.rows;
  shape.cols = desc.cols;
  shape.block_height = desc.block_height;
  shape.block_width = desc.block_width;
  shape.block_row_count = desc.rows / desc.block_height;
  shape.block_col_count = desc.cols / desc.block_width;
  shape.nnzb = desc.nnzb;

  // Block row and column numbers are stored as int32 (A^T's column indices are A's block rows).
  if (shape.block_row_count > int32_max) {
    invalid_argument("desc.rows / desc.block_height = ", shape.block_row_count,
                     " block rows exceeds INT32_MAX: bsrmm stores block indices as int32");
  }
  if (shape.block_col_count > int32_max) {
    invalid_argument("desc.cols / desc.block_width = ", shape.block_col_count,
                     " block columns exceeds INT32_MAX: bsrmm stores block indices as int32");
  }
  if (desc.nnzb < 0) invalid_argument("desc.nnzb = ", desc.nnzb, " is negative");
  if (desc.nnzb > int32_max) {
    invalid_argument("desc.nnzb = ", desc.nnzb,
                     " exceeds INT32_MAX: bsrmm stores block indices as int32");
  }
  int64_t capacity = 0;
  if (!__builtin_mul_overflow(shape.block_row_count, shape.block_col_count, &capacity) &&
      desc.nnzb > capacity) {
    invalid_argument("desc.nnzb = ", desc.nnzb, " exceeds block_row_count * block_col_count = ",
                     shape.block_row_count, " * ", shape.block_col_count, " = ", capacity);
  }
  detail::checked_bytes(detail::checked_mul(shape.nnzb, shape.block_elements(), "desc.values size"),
                        detail::element_size(desc.dtype), "desc.values");

  if (desc.row_ptr == nullptr && shape.block_row_count > 0) {
    invalid_argument("desc.row_ptr is NULL but the matrix has ", shape.block_row_count,
                     " block rows (row_ptr needs block_row_count + 1 entries)");
  }
  if (desc.col_idx == nullptr && shape.nnzb > 0) {
    invalid_argument("desc.col_idx is NULL but desc.nnzb = ", shape.nnzb);
  }
  if (desc.values == nullptr && shape.nnzb > 0) {
    invalid_argument("desc.values is NULL but desc.nnzb = ", shape.nnzb);
  }
  return shape;
}

ReadStructure read_structure(const BsrShape& shape, const void* row_ptr_data,
                             const void* col_idx_data, bsrmm_index_type type, uint32_t flags) {
  ReadStructure out;
  out.structure.shape = shape;
  out.structure.row_ptr = read_row_ptr(shape, row_ptr_data, type);
  const std::vector<int32_t>& row_ptr = out.structure.row_ptr;

  std::vector<int32_t>& col_idx = out.structure.col_idx;
  col_idx.resize(static_cast<size_t>(shape.nnzb));
  const bool sort = (flags & BSRMM_CREATE_SORT_INDICES) != 0;
  const IndexReader in(col_idx_data, type);
  for (int64_t row = 0; row < shape.block_row_count; ++row) {
    const int64_t begin = row_ptr[static_cast<size_t>(row)];
    const int64_t end = row_ptr[static_cast<size_t>(row + 1)];
    bool sorted = true;
    for (int64_t p = begin; p < end; ++p) {
      const int64_t column = in[p];
      check_fits_int32(column, "col_idx", p);
      if (column < 0) invalid_argument("desc.col_idx[", p, "] = ", column, " is negative");
      if (column >= shape.block_col_count) {
        invalid_argument("desc.col_idx[", p, "] = ", column, " >= block column count ",
                         shape.block_col_count);
      }
      col_idx[static_cast<size_t>(p)] = static_cast<int32_t>(column);
      if (p == begin) continue;
      const int64_t previous = col_idx[static_cast<size_t>(p - 1)];
      if (column == previous && !sort) {
        invalid_argument("duplicate block in block row ", row, ": desc.col_idx[", p, "] = ",
                         column, " repeats desc.col_idx[", p - 1,
                         "] (each block may appear once)");
      }
      if (column < previous) {
        if (!sort) {
          invalid_argument("desc.col_idx not sorted in block row ", row, ": col_idx[", p,
                           "] = ", column, " after col_idx[", p - 1, "] = ", previous,
                           " (pass BSRMM_CREATE_SORT_INDICES to sort)");
        }
        sorted = false;
      }
    }
    if (sort) {
      if (sorted) {
        for (int64_t p = begin + 1; p < end; ++p) {
          if (col_idx[static_cast<size_t>(p)] == col_idx[static_cast<size_t>(p - 1)]) {
            invalid_argument("duplicate block in block row ", row, ": column ",
                             col_idx[static_cast<size_t>(p)], " appears at desc.col_idx[", p - 1,
                             "] and desc.col_idx[", p, "] (each block may appear once)");
          }
        }
      } else {
        if (out.block_source.empty()) {
          out.block_source.resize(static_cast<size_t>(shape.nnzb));
          std::iota(out.block_source.begin(), out.block_source.end(), int64_t{0});
        }
        sort_row(col_idx, out.block_source, row, begin, end);
      }
    }
  }
  return out;
}

}  // namespace bsrmm::matrix
