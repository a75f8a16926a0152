#include "dense_operand.hpp"

#include "../common/checked_math.hpp"
#include "../common/dtype.hpp"
#include "../common/error.hpp"

#include <cstdint>
#include <string>

namespace bsrmm::matrix {

using detail::invalid_argument;

void validate_dense(const bsrmm_dense& dense, const char* name, bool fp8_allowed) {
  if (detail::is_fp8(dense.dtype) && !fp8_allowed) {
    detail::fail(BSRMM_STATUS_UNSUPPORTED, name, ".dtype = ", detail::name(dense.dtype),
                 detail::dtype_rule(dense.dtype));
  }
  if (!detail::is_valid(dense.dtype) && !detail::is_fp8(dense.dtype)) {
    invalid_argument(name, ".dtype = ", static_cast<int>(dense.dtype),
                     detail::dtype_rule(dense.dtype));
  }
  if (!detail::is_valid(dense.layout)) {
    invalid_argument(name, ".layout = ", static_cast<int>(dense.layout),
                     " is not a bsrmm_layout (0 = ROW_MAJOR, 1 = COL_MAJOR)");
  }
  if (dense.device.type != BSRMM_DEVICE_CPU && dense.device.type != BSRMM_DEVICE_CUDA) {
    invalid_argument(name, ".device.type = ", static_cast<int>(dense.device.type),
                     " is not a bsrmm_device_type (0 = CPU, 1 = CUDA)");
  }
  if (dense.device.type == BSRMM_DEVICE_CPU && dense.device.ordinal != 0) {
    invalid_argument(name, ".device.ordinal = ", dense.device.ordinal, " for a CPU device, must be 0");
  }
  if (dense.device.ordinal < 0) {
    invalid_argument(name, ".device.ordinal = ", dense.device.ordinal, " is negative");
  }
  if (dense.rows < 0) invalid_argument(name, ".rows = ", dense.rows, " is negative");
  if (dense.cols < 0) invalid_argument(name, ".cols = ", dense.cols, " is negative");
  const bool row_major = dense.layout == BSRMM_LAYOUT_ROW_MAJOR;
  const int64_t inner = row_major ? dense.cols : dense.rows;
  if (dense.ld < inner) {
    invalid_argument(name, ".ld = ", dense.ld, " < ", name, row_major ? ".cols = " : ".rows = ",
                     inner, " (", detail::name(dense.layout), ": ld must be >= ",
                     row_major ? "cols" : "rows", ")");
  }
  const std::string what = std::string(name) + " extent";
  const std::size_t bytes = detail::checked_bytes(dense_extent(dense, name),
                                                  detail::element_size(dense.dtype), what.c_str());
  if (bytes == 0) return;
  if (dense.data == nullptr) {
    invalid_argument(name, ".data is NULL but ", name, " is ", dense.rows, " x ", dense.cols);
  }
  const std::size_t alignment = detail::element_size(dense.dtype);
  if (reinterpret_cast<std::uintptr_t>(dense.data) % alignment != 0) {
    invalid_argument(name, ".data is not aligned to ", alignment, " bytes (the size of ",
                     detail::name(dense.dtype), ")");
  }
}

int64_t dense_extent(const bsrmm_dense& dense, const char* name) {
  if (is_empty(dense)) return 0;
  const bool row_major = dense.layout == BSRMM_LAYOUT_ROW_MAJOR;
  const int64_t outer = row_major ? dense.rows : dense.cols;
  const int64_t inner = row_major ? dense.cols : dense.rows;
  const std::string what = std::string(name) + " extent";
  return detail::checked_add(detail::checked_mul(outer - 1, dense.ld, what.c_str()), inner,
                             what.c_str());
}

std::size_t dense_extent_bytes(const bsrmm_dense& dense) {
  return static_cast<std::size_t>(dense_extent(dense)) * detail::element_size(dense.dtype);
}

bool dense_overlaps(const bsrmm_dense& x, const bsrmm_dense& y) {
  if (!detail::same_device(x.device, y.device)) return false;
  const auto begin_x = reinterpret_cast<std::uintptr_t>(x.data);
  const auto begin_y = reinterpret_cast<std::uintptr_t>(y.data);
  const std::uintptr_t end_x = begin_x + dense_extent_bytes(x);
  const std::uintptr_t end_y = begin_y + dense_extent_bytes(y);
  if (end_x == begin_x || end_y == begin_y) return false;
  return begin_x < end_y && begin_y < end_x;
}

}  // namespace bsrmm::matrix
