#include "dense_conversion.hpp"

#include "../device/device_runtime.hpp"
#include "../common/dtype.hpp"
#include "../common/error.hpp"
#include "bsr_validation.hpp"
#include "dense_operand.hpp"

#include <cstring>
#include <limits>
#include <vector>

namespace bsrmm::matrix {

using detail::invalid_argument;

namespace {

constexpr bsrmm_device host{BSRMM_DEVICE_CPU, 0};

// Unsigned integers of each element width: the conversions move bits, never values.
template <typename Bits>
constexpr Bits magnitude_mask() {
  return static_cast<Bits>(std::numeric_limits<Bits>::max() >> 1);
}

template <typename Bits>
BsrStructure collect_blocks(const bsrmm_dense& dense, const Bits* data, BsrShape shape,
                            std::vector<unsigned char>& values) {
  BsrStructure structure;
  structure.row_ptr.assign(static_cast<size_t>(shape.block_row_count) + 1, 0);
  std::vector<Bits> packed;
  const int32_t bh = shape.block_height;
  const int32_t bw = shape.block_width;
  auto at = [&](int64_t i, int64_t j) { return data[dense_offset(dense, i, j)]; };
  for (int64_t br = 0; br < shape.block_row_count; ++br) {
    for (int64_t bc = 0; bc < shape.block_col_count; ++bc) {
      bool nonzero = false;
      for (int32_t i = 0; i < bh && !nonzero; ++i) {
        for (int32_t j = 0; j < bw; ++j) {
          if ((at(br * bh + i, bc * bw + j) & magnitude_mask<Bits>()) != 0) {
            nonzero = true;
            break;
          }
        }
      }
      if (!nonzero) continue;
      if (structure.col_idx.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
        invalid_argument("dense has more than INT32_MAX non-zero blocks: bsrmm stores block"
                         " indices as int32");
      }
      structure.col_idx.push_back(static_cast<int32_t>(bc));
      for (int32_t i = 0; i < bh; ++i) {
        for (int32_t j = 0; j < bw; ++j) packed.push_back(at(br * bh + i, bc * bw + j));
      }
    }
    structure.row_ptr[static_cast<size_t>(br) + 1] = static_cast<int32_t>(structure.col_idx.size());
  }
  shape.nnzb = static_cast<int64_t>(structure.col_idx.size());
  structure.shape = shape;
  values.resize(packed.size() * sizeof(Bits));
  if (!packed.empty()) std::memcpy(values.data(), packed.data(), values.size());
  return structure;
}

template <typename Bits>
void write_blocks(const BsrMatrix& matrix, const Bits* values, const bsrmm_dense& out, Bits* data) {
  const BsrShape& shape = matrix.shape();
  for (int64_t i = 0; i < out.rows; ++i) {
    for (int64_t j = 0; j < out.cols; ++j) data[dense_offset(out, i, j)] = 0;
  }
  const int32_t bh = shape.block_height;
  const int32_t bw = shape.block_width;
  for (int64_t br = 0; br < shape.block_row_count; ++br) {
    for (int32_t p = matrix.row_ptr()[static_cast<size_t>(br)];
         p < matrix.row_ptr()[static_cast<size_t>(br) + 1]; ++p) {
      const int64_t bc = matrix.col_idx()[static_cast<size_t>(p)];
      const Bits* block = values + static_cast<int64_t>(p) * bh * bw;
      for (int32_t i = 0; i < bh; ++i) {
        for (int32_t j = 0; j < bw; ++j) {
          data[dense_offset(out, br * bh + i, bc * bw + j)] = block[i * bw + j];
        }
      }
    }
  }
}

void check_on(const bsrmm_dense& dense, const char* name, bsrmm_device target, bool host_ok) {
  if (detail::same_device(dense.device, target)) return;
  if (host_ok && dense.device.type == BSRMM_DEVICE_CPU) return;
  invalid_argument(name, ".device is ", detail::describe(dense.device), " but the context is on ",
                   detail::describe(target));
}

}  // namespace

std::unique_ptr<BsrMatrix> from_dense(const bsrmm_dense& dense, int32_t block_height,
                                      int32_t block_width, bsrmm_device target, void* stream) {
  validate_dense(dense, "dense");
  check_on(dense, "dense", target, true);
  check_block_side(block_height, "block_height");
  check_block_side(block_width, "block_width");
  if (dense.rows % block_height != 0) {
    invalid_argument("dense.rows = ", dense.rows, " is not a multiple of block_height = ",
                     block_height);
  }
  if (dense.cols % block_width != 0) {
    invalid_argument("dense.cols = ", dense.cols, " is not a multiple of block_width = ",
                     block_width);
  }
  BsrShape shape{dense.rows, dense.cols, block_height, block_width,
                 dense.rows / block_height, dense.cols / block_width, 0};
  if (shape.block_row_count > std::numeric_limits<int32_t>::max() ||
      shape.block_col_count > std::numeric_limits<int32_t>::max()) {
    invalid_argument("dense has ", shape.block_row_count, " x ", shape.block_col_count,
                     " blocks, more than INT32_MAX in one dimension: bsrmm stores block indices"
                     " as int32");
  }

  std::vector<unsigned char> staging;
  const void* data = dense.data;
  if (dense.device.type == BSRMM_DEVICE_CUDA) {
    detail::check_pointer_on(dense.data, dense.device, "dense.data");
    staging.resize(dense_extent_bytes(dense));
    detail::copy_bytes(staging.data(), host, dense.data, dense.device, staging.size(), stream);
    data = staging.data();
  }

  std::vector<unsigned char> values;
  BsrStructure structure;
  switch (detail::element_size(dense.dtype)) {
    case 8: structure = collect_blocks(dense, static_cast<const uint64_t*>(data), shape, values); break;
    case 4: structure = collect_blocks(dense, static_cast<const uint32_t*>(data), shape, values); break;
    default: structure = collect_blocks(dense, static_cast<const uint16_t*>(data), shape, values); break;
  }
  return BsrMatrix::from_host(std::move(structure), dense.dtype, values.data(), target, stream);
}

void to_dense(const BsrMatrix& matrix, const bsrmm_dense& out, bsrmm_device target, void* stream) {
  validate_dense(out, "out");
  check_on(out, "out", target, false);
  const BsrShape& shape = matrix.shape();
  if (out.rows != shape.rows || out.cols != shape.cols) {
    invalid_argument("out is ", out.rows, " x ", out.cols, " but the matrix is ", shape.rows,
                     " x ", shape.cols);
  }
  if (out.dtype != matrix.dtype()) {
    invalid_argument("out.dtype is ", detail::name(out.dtype), " but the matrix is ",
                     detail::name(matrix.dtype()));
  }
  if (is_empty(out)) return;

  std::vector<unsigned char> host_values;
  const void* values = matrix.values().data();
  if (matrix.device().type != BSRMM_DEVICE_CPU) {
    host_values.resize(matrix.value_bytes());
    matrix.copy_values_to_host(host_values.data());
    values = host_values.data();
  }

  const bool on_gpu = out.device.type == BSRMM_DEVICE_CUDA;
  std::vector<unsigned char> staging;
  void* data = out.data;
  if (on_gpu) {
    detail::check_pointer_on(out.data, out.device, "out.data");
    staging.resize(dense_extent_bytes(out));
    // Read first so the padding between rows survives the write-back.
    detail::copy_bytes(staging.data(), host, out.data, out.device, staging.size(), stream);
    data = staging.data();
  }
  switch (detail::element_size(out.dtype)) {
    case 8: write_blocks(matrix, static_cast<const uint64_t*>(values), out, static_cast<uint64_t*>(data)); break;
    case 4: write_blocks(matrix, static_cast<const uint32_t*>(values), out, static_cast<uint32_t*>(data)); break;
    default: write_blocks(matrix, static_cast<const uint16_t*>(values), out, static_cast<uint16_t*>(data)); break;
  }
  if (on_gpu) {
    detail::copy_bytes(out.data, out.device, staging.data(), host, staging.size(), stream);
  }
}

}  // namespace bsrmm::matrix
