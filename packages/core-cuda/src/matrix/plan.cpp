#include "plan.hpp"

#include "../common/checked_math.hpp"
#include "../device/device_runtime.hpp"
#include "../common/dtype.hpp"
#include "../common/error.hpp"
#include "../common/float8.hpp"
#include "../common/half.hpp"
#include "bsr_matrix.hpp"
#include "transpose.hpp"
#include "work_lists.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#if BSRMM_WITH_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace bsrmm::matrix {

using detail::Buffer;

namespace {

// Constant part of a block row's CPU cost, in multiply-add units per output element: the
// epilogue's load, scale, store.
constexpr int64_t epilogue_work = 4;

Schedule build_schedule(const BsrStructure& structure) {
  const BsrShape& shape = structure.shape;
  const std::vector<int32_t>& row_ptr = structure.row_ptr;
  Schedule schedule;
  schedule.row_order.resize(static_cast<size_t>(shape.block_row_count));
  std::iota(schedule.row_order.begin(), schedule.row_order.end(), 0);
  auto blocks = [&](int32_t r) { return row_ptr[static_cast<size_t>(r) + 1] - row_ptr[r]; };
  std::stable_sort(schedule.row_order.begin(), schedule.row_order.end(),
                   [&](int32_t x, int32_t y) { return blocks(x) > blocks(y); });
  schedule.work_prefix.resize(static_cast<size_t>(shape.block_row_count) + 1, 0);
  for (int64_t r = 0; r < shape.block_row_count; ++r) {
    const int64_t work = int64_t{blocks(static_cast<int32_t>(r))} * shape.block_width + epilogue_work;
    schedule.work_prefix[static_cast<size_t>(r) + 1] = schedule.work_prefix[static_cast<size_t>(r)] + work;
  }
  const std::vector<int32_t>& col_idx = structure.col_idx;
  schedule.used_columns = col_idx;
  std::sort(schedule.used_columns.begin(), schedule.used_columns.end());
  schedule.used_columns.erase(std::unique(schedule.used_columns.begin(), schedule.used_columns.end()),
                              schedule.used_columns.end());
  schedule.packed_col_idx.resize(col_idx.size());
  for (size_t p = 0; p < col_idx.size(); ++p) {
    schedule.packed_col_idx[p] = static_cast<int32_t>(
        std::lower_bound(schedule.used_columns.begin(), schedule.used_columns.end(), col_idx[p]) -
        schedule.used_columns.begin());
  }
  return schedule;
}

template <typename Out, typename In>
void densify_host(const BsrStructure& structure, const In* values, Out* dense) {
  const BsrShape& shape = structure.shape;
  std::fill(dense, dense + shape.rows * shape.cols, Out(0));
  const int64_t block = int64_t{shape.block_height} * shape.block_width;
  for (int64_t r = 0; r < shape.block_row_count; ++r) {
    for (int32_t p = structure.row_ptr[static_cast<size_t>(r)]; p < structure.row_ptr[static_cast<size_t>(r) + 1]; ++p) {
      const In* from = values + p * block;
      Out* to = dense + r * shape.block_height * shape.cols + int64_t{structure.col_idx[static_cast<size_t>(p)]} * shape.block_width;
      for (int32_t i = 0; i < shape.block_height; ++i)
        for (int32_t j = 0; j < shape.block_width; ++j)
          to[i * shape.cols + j] = static_cast<Out>(detail::to_double(from[i * shape.block_width + j]));
    }
  }
}

}  // namespace

StructurePlan::StructurePlan(const BsrStructure& structure, bsrmm_device device)
    : structure_(structure), device_(device) {}
StructurePlan::~StructurePlan() = default;

const Schedule& StructurePlan::schedule(void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!schedule_) {
    auto schedule = std::make_unique<Schedule>(build_schedule(structure_));
    // Rows of equal length keep their order (the sort is stable): the kernels then walk rows
    // in place, without loading row_order first (one dependent read of cold memory less in
    // every CTA's prologue, ahead of row_ptr; docs/perf-log.md entries 89 and 91).
    const bool reordered = !std::is_sorted(schedule->row_order.begin(), schedule->row_order.end());
    if (device_.type == BSRMM_DEVICE_CUDA && reordered) {
      schedule->device_row_order =
          Buffer::allocate(schedule->row_order.size() * sizeof(int32_t), device_);
      detail::copy_bytes(schedule->device_row_order.data(), device_, schedule->row_order.data(),
                         bsrmm_device{BSRMM_DEVICE_CPU, 0}, schedule->device_row_order.size(),
                         stream);
      detail::synchronize(device_, stream);
    }
    schedule_ = std::move(schedule);
  }
  return *schedule_;
}

const TransposedStructure& StructurePlan::transposed(void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!transposed_) {
    transposed_ = std::make_unique<TransposedStructure>(transpose_structure(structure_, device_, stream));
  }
  return *transposed_;
}

bool StructurePlan::has_transposed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return transposed_ != nullptr;
}

WorkLists& StructurePlan::work_lists() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!work_lists_) work_lists_ = std::make_unique<WorkLists>(structure_, device_);
  return *work_lists_;
}

Plan::Plan(StructurePlan& structure_plan) : structure_plan_(structure_plan) {}
Plan::~Plan() = default;

const BsrMatrix& Plan::transposed(const BsrMatrix& matrix, void* stream) {
  const TransposedStructure& structure = transposed_structure(stream);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!transposed_) transposed_ = build_transposed(matrix, structure, stream);
  return *transposed_;
}

namespace {

// An fp8 matrix's values as f32: each element times its block's scale (the fast CPU variants
// multiply these; e4m3 / e5m2 times an f32 scale rounds once, to f32).
void dequantise_fp8(const BsrMatrix& matrix, float* to) {
  const matrix::ValueScales& scales = *matrix.scales();
  const std::vector<int32_t>& row_ptr = matrix.row_ptr();
  const int64_t block = int64_t{matrix.shape().block_height} * matrix.shape().block_width;
  const uint8_t* from = matrix.values().as<const uint8_t>();
  const float* decoded = detail::fp8_table(matrix.dtype() == BSRMM_DTYPE_FLOAT8_E4M3);
  for (int64_t r = 0; r + 1 < static_cast<int64_t>(row_ptr.size()); ++r) {
    for (int64_t p = row_ptr[static_cast<size_t>(r)]; p < row_ptr[static_cast<size_t>(r) + 1]; ++p) {
      const float scale = matrix::matrix_scale(scales.values.data(), scales.kind, r, p);
      for (int64_t e = p * block; e < (p + 1) * block; ++e) to[e] = decoded[from[e]] * scale;
    }
  }
}

}  // namespace

const float* Plan::values_f32(const BsrMatrix& matrix) {
  if (matrix.device().type != BSRMM_DEVICE_CPU || matrix.dtype() == BSRMM_DTYPE_F64) {
    detail::fail(BSRMM_STATUS_INTERNAL, "f32 values requested for a ", detail::name(matrix.dtype()),
                 " matrix on ", detail::describe(matrix.device()));
  }
  if (matrix.dtype() == BSRMM_DTYPE_F32) return matrix.values().as<const float>();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!values_f32_) {
    const size_t count = static_cast<size_t>(matrix.shape().value_count());
    auto converted = std::make_unique<Buffer>(Buffer::allocate(count * sizeof(float), matrix.device()));
    const uint16_t* from = matrix.values().as<const uint16_t>();  // f16 / bf16
    float* to = converted->as<float>();
    if (detail::is_fp8(matrix.dtype())) {
      dequantise_fp8(matrix, to);
    } else if (matrix.dtype() == BSRMM_DTYPE_F16) {
      for (size_t i = 0; i < count; ++i) to[i] = detail::f16_bits_to_f32(from[i]);
    } else {
      for (size_t i = 0; i < count; ++i) to[i] = detail::bf16_bits_to_f32(from[i]);
    }
    values_f32_ = std::move(converted);
  }
  return values_f32_->as<const float>();
}

const void* Plan::dense_values(const BsrMatrix& matrix, void* stream) {
  const bsrmm_device device = matrix.device();
  if (device.type != BSRMM_DEVICE_CUDA)
    detail::fail(BSRMM_STATUS_INTERNAL, "dense values requested for a matrix on ", detail::describe(device));
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dense_values_) {
#if BSRMM_WITH_CUDA
    const BsrShape& shape = matrix.shape();
    const size_t bytes = detail::checked_bytes(
        detail::checked_mul(shape.rows, shape.cols, "the dense copy of A"),
        detail::element_size(matrix.dtype()), "the dense copy of A");
    auto dense = std::make_unique<Buffer>(Buffer::allocate(bytes, device));
    cuda::densify_blocks(matrix.device_row_ptr().as<const int32_t>(),
                         matrix.device_col_idx().as<const int32_t>(), matrix.values().data(),
                         shape.block_row_count, shape.block_col_count, shape.block_height,
                         shape.block_width, shape.nnzb, matrix.dtype(), dense->data(), device.ordinal, stream);
    detail::synchronize(device, stream);
    dense_values_ = std::move(dense);
#else
    detail::fail(BSRMM_STATUS_NO_DEVICE, detail::built_without_cuda());
#endif
  }
  return dense_values_->data();
}

const void* Plan::dense_host_values(const BsrMatrix& matrix, bsrmm_dtype element) {
  if (matrix.device().type != BSRMM_DEVICE_CPU)
    detail::fail(BSRMM_STATUS_INTERNAL, "host dense values requested for a matrix on ", detail::describe(matrix.device()));
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dense_values_) {
    const BsrShape& shape = matrix.shape();
    const size_t bytes = detail::checked_bytes(
        detail::checked_mul(shape.rows, shape.cols, "the dense copy of A"),
        detail::element_size(element), "the dense copy of A");
    auto dense = std::make_unique<Buffer>(Buffer::allocate(bytes, matrix.device()));
    const BsrStructure& structure = matrix.structure();
    const void* values = matrix.values().data();
    if (element == BSRMM_DTYPE_F64) {
      densify_host(structure, static_cast<const double*>(values), dense->as<double>());
    } else if (matrix.dtype() == BSRMM_DTYPE_F32) {
      densify_host(structure, static_cast<const float*>(values), dense->as<float>());
    } else if (matrix.dtype() == BSRMM_DTYPE_F16) {
      densify_host(structure, static_cast<const detail::f16_t*>(values), dense->as<float>());
    } else {
      densify_host(structure, static_cast<const detail::bf16_t*>(values), dense->as<float>());
    }
    dense_values_ = std::move(dense);
  }
  return dense_values_->data();
}

}  // namespace bsrmm::matrix
