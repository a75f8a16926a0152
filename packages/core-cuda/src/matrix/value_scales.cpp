#include "value_scales.hpp"

#include "../common/dtype.hpp"
#include "../common/error.hpp"
#include "../device/device_runtime.hpp"

#include <cmath>
#include <cstring>

namespace bsrmm::matrix {

using detail::invalid_argument;

namespace {

// The caller's struct up to the fields this version knows (a newer caller's is longer).
bsrmm_scales read_struct(const bsrmm_scales& given, const char* what) {
  if (given.struct_size < sizeof(bsrmm_scales)) {
    invalid_argument(what, "->struct_size = ", given.struct_size, " < ", sizeof(bsrmm_scales),
                     " (initialise it with bsrmm_scales_default())");
  }
  bsrmm_scales scales;
  std::memcpy(&scales, &given, sizeof(scales));
  if (!detail::is_valid(scales.kind)) {
    invalid_argument(what, "->kind = ", static_cast<int>(scales.kind),
                     " is not a bsrmm_scale_kind (0 = PER_TENSOR, 1 = PER_BLOCK, "
                     "2 = PER_BLOCK_ROW, 3 = PER_COLUMN)");
  }
  return scales;
}

// The checks every scale array gets, wherever it lives: count, data, alignment, device.
void check_placed(const bsrmm_scales& scales, int64_t expected, const char* expected_why,
                  const char* what) {
  if (scales.count != expected) {
    invalid_argument(what, "->count = ", scales.count, " but ", detail::name(scales.kind),
                     " scales of this operand are ", expected, " (", expected_why, ")");
  }
  // No stored block, no per-block scale: an empty array's data may be NULL (std::vector's is).
  if (expected == 0) return;
  if (scales.data == nullptr) invalid_argument(what, "->data is NULL but ", expected, " scales are needed");
  if (reinterpret_cast<std::uintptr_t>(scales.data) % alignof(float) != 0)
    invalid_argument(what, "->data is not aligned to 4 bytes (the size of a float)");
  detail::check_device_exists(scales.device);
  detail::check_pointer_on(scales.data, scales.device, what);
}

ValueScales copy_checked(const bsrmm_scales& scales, int64_t expected, const char* expected_why,
                         void* stream, const char* what) {
  check_placed(scales, expected, expected_why, what);
  ValueScales out;
  out.kind = scales.kind;
  if (expected == 0) return out;
  out.values.resize(static_cast<size_t>(expected));
  detail::copy_bytes(out.values.data(), bsrmm_device{BSRMM_DEVICE_CPU, 0}, scales.data,
                     scales.device, out.values.size() * sizeof(float), stream);
  for (size_t i = 0; i < out.values.size(); ++i) {
    if (!std::isfinite(out.values[i]))
      invalid_argument(what, "->data[", i, "] = ", out.values[i], " is not finite");
  }
  return out;
}

// A kind of the other operand's (its count here is -1) is refused, naming the kinds this one
// takes (`is_for_other`).
void refuse_other_operands_kind(int64_t expected, bsrmm_scale_kind kind, const char* what,
                                const char* is_for_other) {
  if (expected < 0) invalid_argument(what, "->kind = ", detail::name(kind), is_for_other);
}

}  // namespace

int64_t matrix_scale_count(bsrmm_scale_kind kind, const BsrShape& shape) {
  switch (kind) {
    case BSRMM_SCALE_PER_TENSOR: return 1;
    case BSRMM_SCALE_PER_BLOCK: return shape.nnzb;
    case BSRMM_SCALE_PER_BLOCK_ROW: return shape.block_row_count;
    case BSRMM_SCALE_PER_COLUMN: break;
  }
  return -1;
}

int64_t dense_scale_count(bsrmm_scale_kind kind, int64_t columns) {
  if (kind == BSRMM_SCALE_PER_TENSOR) return 1;
  if (kind == BSRMM_SCALE_PER_COLUMN) return columns;
  return -1;
}

ValueScales read_matrix_scales(const bsrmm_scales& given, const BsrShape& shape,
                               const std::vector<int64_t>& block_source, void* stream,
                               const char* what) {
  const bsrmm_scales scales = read_struct(given, what);
  const int64_t expected = matrix_scale_count(scales.kind, shape);
  refuse_other_operands_kind(expected, scales.kind, what,
                             " is for B; A's scales are PER_TENSOR, PER_BLOCK or PER_BLOCK_ROW");
  const char* why = scales.kind == BSRMM_SCALE_PER_BLOCK       ? "desc.nnzb"
                    : scales.kind == BSRMM_SCALE_PER_BLOCK_ROW ? "desc.rows / desc.block_height"
                                                               : "one per tensor";
  ValueScales out = copy_checked(scales, expected, why, stream, what);
  if (scales.kind == BSRMM_SCALE_PER_BLOCK && !block_source.empty()) {
    std::vector<float> sorted(out.values.size());
    for (size_t i = 0; i < block_source.size(); ++i)
      sorted[i] = out.values[static_cast<size_t>(block_source[i])];
    out.values = std::move(sorted);
  }
  return out;
}

ValueScales read_dense_scales(const bsrmm_scales& given, int64_t columns, void* stream,
                              const char* what) {
  const bsrmm_scales scales = read_struct(given, what);
  const int64_t expected = dense_scale_count(scales.kind, columns);
  refuse_other_operands_kind(expected, scales.kind, what,
                             " is for A; B's scales are PER_TENSOR or PER_COLUMN");
  const char* why = scales.kind == BSRMM_SCALE_PER_COLUMN ? "B.cols" : "one per tensor";
  if (scales.kind == BSRMM_SCALE_PER_COLUMN && scales.device.type == BSRMM_DEVICE_CUDA) {
    // Read in place by the kernel, like B, and like B's values not checked here: copying them
    // to the host to check would wait for the stream on every multiply (~10 us a call, and no
    // capture into a CUDA graph).
    check_placed(scales, expected, why, what);
    ValueScales out;
    out.kind = scales.kind;
    out.caller_device = static_cast<const float*>(scales.data);
    return out;
  }
  return copy_checked(scales, expected, why, stream, what);
}

std::shared_ptr<const ValueScales> placed_on(std::shared_ptr<const ValueScales> scales,
                                             bsrmm_device target, void* stream) {
  if (scales == nullptr || target.type == BSRMM_DEVICE_CPU) return scales;
  if (scales->device_copy.data() != nullptr && detail::same_device(scales->device_copy.device(), target))
    return scales;
  auto placed = std::make_shared<ValueScales>();
  placed->kind = scales->kind;
  placed->values = scales->values;
  const std::size_t bytes = placed->values.size() * sizeof(float);
  placed->device_copy = detail::Buffer::allocate(bytes, target);
  detail::copy_bytes(placed->device_copy.data(), target, placed->values.data(),
                     bsrmm_device{BSRMM_DEVICE_CPU, 0}, bytes, stream);
  detail::synchronize(target, stream);
  return placed;
}

}  // namespace bsrmm::matrix
