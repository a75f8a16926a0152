#include "bsr_matrix.hpp"

#include "../device/device_runtime.hpp"
#include "../common/dtype.hpp"
#include "../common/error.hpp"
#include "bsr_validation.hpp"
#include "plan.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace bsrmm::matrix {

using detail::Buffer;
using detail::invalid_argument;

namespace {

// Host copies of an index array that may live on a GPU; `host` points at usable host memory.
struct HostIndices {
  std::vector<unsigned char> storage;
  const void* host = nullptr;
};

HostIndices indices_on_host(const void* data, int64_t count, bsrmm_index_type type,
                            bsrmm_device device, void* stream, const char* what) {
  HostIndices out;
  if (data == nullptr || device.type == BSRMM_DEVICE_CPU) {
    out.host = data;
    return out;
  }
  detail::check_pointer_on(data, device, what);
  out.storage.resize(static_cast<size_t>(count) * detail::index_size(type));
  detail::copy_bytes(out.storage.data(), bsrmm_device{BSRMM_DEVICE_CPU, 0}, data, device,
                     out.storage.size(), stream);
  out.host = out.storage.data();
  return out;
}

// Blocks in stored order from the caller's order: block i = source block block_source[i].
std::vector<unsigned char> gather_blocks(const unsigned char* source,
                                         const std::vector<int64_t>& block_source,
                                         std::size_t block_bytes) {
  std::vector<unsigned char> out(block_source.size() * block_bytes);
  for (size_t i = 0; i < block_source.size(); ++i) {
    std::memcpy(out.data() + i * block_bytes,
                source + static_cast<size_t>(block_source[i]) * block_bytes, block_bytes);
  }
  return out;
}

void check_aligned(const void* ptr, std::size_t alignment, const char* what) {
  if (reinterpret_cast<std::uintptr_t>(ptr) % alignment != 0) {
    invalid_argument(what, " is not aligned to ", alignment, " bytes (its element size)");
  }
}

}  // namespace

namespace {

int64_t longest_row(const std::vector<int32_t>& row_ptr) {
  int64_t longest = 0;
  for (std::size_t r = 0; r + 1 < row_ptr.size(); ++r) longest = std::max<int64_t>(longest, row_ptr[r + 1] - row_ptr[r]);
  return longest;
}

}  // namespace

SharedStructure::SharedStructure(BsrStructure s, bsrmm_device d)
    : structure(std::move(s)),
      max_row_blocks(longest_row(structure.row_ptr)),
      device(d),
      plan(std::make_unique<StructurePlan>(structure, device)) {}

SharedStructure::~SharedStructure() = default;

BsrMatrix::BsrMatrix(std::shared_ptr<SharedStructure> shared, bsrmm_dtype dtype, Buffer values)
    : shared_(std::move(shared)),
      dtype_(dtype),
      values_(std::move(values)),
      plan_(std::make_unique<Plan>(*shared_->plan)) {}

BsrMatrix::~BsrMatrix() = default;

std::size_t BsrMatrix::value_bytes() const {
  return static_cast<std::size_t>(shape().value_count()) * detail::element_size(dtype_);
}

std::unique_ptr<BsrMatrix> BsrMatrix::create(const bsrmm_bsr_desc& desc, uint32_t flags,
                                             bsrmm_device target, void* stream,
                                             const bsrmm_scales* scales) {
  validate_flags(flags);
  const BsrShape shape = validate_shape(desc, scales != nullptr);
  detail::check_device_exists(desc.device);
  detail::check_device_exists(target);

  const bool borrow = (flags & BSRMM_CREATE_BORROW_VALUES) != 0;
  if (borrow && (target.type != BSRMM_DEVICE_CUDA || !detail::same_device(desc.device, target))) {
    invalid_argument("BSRMM_CREATE_BORROW_VALUES needs desc.values on the context's CUDA device;"
                     " desc.device is ",
                     detail::describe(desc.device), ", the context is on ",
                     detail::describe(target));
  }

  const HostIndices row_ptr = indices_on_host(desc.row_ptr, shape.block_row_count + 1,
                                              desc.index_type, desc.device, stream, "desc.row_ptr");
  const HostIndices col_idx =
      indices_on_host(desc.col_idx, shape.nnzb, desc.index_type, desc.device, stream, "desc.col_idx");
  ReadStructure read = read_structure(shape, row_ptr.host, col_idx.host, desc.index_type, flags);
  std::shared_ptr<const ValueScales> value_scales;
  if (scales != nullptr) {
    value_scales = placed_on(std::make_shared<const ValueScales>(read_matrix_scales(
                                 *scales, shape, read.block_source, stream, "scales")),
                             target, stream);
  }

  const std::size_t element_bytes = detail::element_size(desc.dtype);
  const std::size_t bytes = static_cast<std::size_t>(shape.value_count()) * element_bytes;
  if (desc.values != nullptr) {
    check_aligned(desc.values, element_bytes, "desc.values");
    detail::check_pointer_on(desc.values, desc.device, "desc.values");
  }

  if (!read.block_source.empty()) {
    if (borrow) {
      invalid_argument("BSRMM_CREATE_SORT_INDICES had to move blocks, which borrowed values"
                       " (BSRMM_CREATE_BORROW_VALUES) do not allow; pass sorted indices");
    }
    std::vector<unsigned char> source(bytes);
    detail::copy_bytes(source.data(), bsrmm_device{BSRMM_DEVICE_CPU, 0}, desc.values,
                       desc.device, bytes, stream);
    const std::vector<unsigned char> sorted = gather_blocks(
        source.data(), read.block_source,
        static_cast<std::size_t>(shape.block_elements()) * element_bytes);
    return from_host(std::move(read.structure), desc.dtype, sorted.data(), target, stream,
                     std::move(value_scales));
  }

  Buffer values;
  if (borrow) {
    values = Buffer::borrow(const_cast<void*>(desc.values), bytes, target);
  } else {
    values = Buffer::allocate(bytes, target);
    detail::copy_bytes(values.data(), target, desc.values, desc.device, bytes, stream);
  }
  std::unique_ptr<BsrMatrix> matrix =
      assemble(std::move(read.structure), desc.dtype, std::move(values), stream);
  matrix->scales_ = std::move(value_scales);
  return matrix;
}

std::unique_ptr<BsrMatrix> BsrMatrix::from_host(BsrStructure structure, bsrmm_dtype dtype,
                                                const void* host_values, bsrmm_device target,
                                                void* stream,
                                                std::shared_ptr<const ValueScales> scales) {
  const std::size_t bytes =
      static_cast<std::size_t>(structure.shape.value_count()) * detail::element_size(dtype);
  Buffer values = Buffer::allocate(bytes, target);
  detail::copy_bytes(values.data(), target, host_values, bsrmm_device{BSRMM_DEVICE_CPU, 0}, bytes,
                     stream);
  std::unique_ptr<BsrMatrix> matrix = assemble(std::move(structure), dtype, std::move(values), stream);
  matrix->scales_ = placed_on(std::move(scales), target, stream);
  return matrix;
}

std::shared_ptr<SharedStructure> share_structure(BsrStructure structure, bsrmm_device device, void* stream) {
  auto shared = std::make_shared<SharedStructure>(std::move(structure), device);
  if (device.type == BSRMM_DEVICE_CUDA) {
    const bsrmm_device host{BSRMM_DEVICE_CPU, 0};
    const std::vector<int32_t>& row_ptr = shared->structure.row_ptr;
    const std::vector<int32_t>& col_idx = shared->structure.col_idx;
    shared->device_row_ptr = Buffer::allocate(row_ptr.size() * sizeof(int32_t), device);
    shared->device_col_idx = Buffer::allocate(col_idx.size() * sizeof(int32_t), device);
    detail::copy_bytes(shared->device_row_ptr.data(), device, row_ptr.data(), host,
                       shared->device_row_ptr.size(), stream);
    detail::copy_bytes(shared->device_col_idx.data(), device, col_idx.data(), host,
                       shared->device_col_idx.size(), stream);
  }
  return shared;
}

std::unique_ptr<BsrMatrix> BsrMatrix::assemble(BsrStructure structure, bsrmm_dtype dtype,
                                               Buffer values, void* stream,
                                               std::shared_ptr<const ValueScales> scales) {
  const bsrmm_device device = values.device();
  return over(share_structure(std::move(structure), device, stream), dtype, std::move(values), stream,
              std::move(scales));
}

std::unique_ptr<BsrMatrix> BsrMatrix::over(std::shared_ptr<SharedStructure> shared, bsrmm_dtype dtype,
                                           Buffer values, void* stream,
                                           std::shared_ptr<const ValueScales> scales) {
  const bsrmm_device device = values.device();
  // A matrix is used from any stream later; finish what was ordered on `stream` once, here.
  if (device.type == BSRMM_DEVICE_CUDA) detail::synchronize(device, stream);
  std::unique_ptr<BsrMatrix> matrix(new BsrMatrix(std::move(shared), dtype, std::move(values)));
  matrix->scales_ = placed_on(std::move(scales), device, stream);
  return matrix;
}

std::unique_ptr<BsrMatrix> BsrMatrix::with_values(const void* values, bsrmm_device values_device,
                                                  uint32_t flags, bsrmm_device target,
                                                  void* stream) const {
  if ((flags & ~uint32_t{BSRMM_CREATE_BORROW_VALUES}) != 0) {
    invalid_argument("flags = ", flags, " has bits bsrmm_matrix_with_values does not take (only",
                     " BSRMM_CREATE_BORROW_VALUES = 2: the structure is already validated and sorted)");
  }
  if (detail::is_fp8(dtype_)) {
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "like is ", detail::name(dtype_),
                 ": new fp8 values need new scales; create the matrix with "
                 "bsrmm_matrix_create_scaled");
  }
  if (!detail::same_device(target, device())) {
    invalid_argument("like is on ", detail::describe(device()), " but the context is on ",
                     detail::describe(target), "; copy it there first (bsrmm_matrix_copy_to)");
  }
  detail::check_device_exists(values_device);
  const std::size_t bytes = value_bytes();
  const std::size_t element_bytes = detail::element_size(dtype_);
  if (values == nullptr && bytes > 0) {
    invalid_argument("values is NULL but like has ", shape().nnzb, " blocks to fill");
  }
  if (values != nullptr) {
    check_aligned(values, element_bytes, "values");
    detail::check_pointer_on(values, values_device, "values");
  }
  Buffer storage;
  if ((flags & BSRMM_CREATE_BORROW_VALUES) != 0) {
    // On the host too: torch's CPU steps borrow their weights, where a copy into fresh memory
    // cost 13.9 ms for 32 MB (page faults) against a 1.3 ms multiply (perf-log 64).
    if (!detail::same_device(values_device, device())) {
      invalid_argument("BSRMM_CREATE_BORROW_VALUES needs values where like is; values_device is ",
                       detail::describe(values_device), ", like is on ", detail::describe(device()));
    }
    storage = Buffer::borrow(const_cast<void*>(values), bytes, device());
  } else {
    storage = Buffer::allocate(bytes, device());
    detail::copy_bytes(storage.data(), device(), values, values_device, bytes, stream);
    // The caller may free or change its values on return, and the matrix is used from any stream.
    if (device().type == BSRMM_DEVICE_CUDA || values_device.type == BSRMM_DEVICE_CUDA)
      detail::synchronize(device().type == BSRMM_DEVICE_CUDA ? device() : values_device, stream);
  }
  return std::unique_ptr<BsrMatrix>(new BsrMatrix(shared_, dtype_, std::move(storage)));
}

void BsrMatrix::copy_values_to_host(void* dst) const {
  detail::copy_bytes(dst, bsrmm_device{BSRMM_DEVICE_CPU, 0}, values_.data(), values_.device(),
                     value_bytes(), nullptr);
}

void BsrMatrix::export_to(bsrmm_index_type index_type, void* row_ptr_out, void* col_idx_out,
                          void* values_out) const {
  if (!detail::is_valid(index_type)) {
    invalid_argument("index_type = ", static_cast<int>(index_type),
                     " is not a bsrmm_index_type (0 = I32, 1 = I64)");
  }
  auto write = [index_type](const std::vector<int32_t>& from, void* to) {
    // An empty vector's data() may be NULL, which memcpy may not be given even for 0 bytes.
    if (to == nullptr || from.empty()) return;
    if (index_type == BSRMM_INDEX_I32) {
      std::memcpy(to, from.data(), from.size() * sizeof(int32_t));
    } else {
      int64_t* out = static_cast<int64_t*>(to);
      for (size_t i = 0; i < from.size(); ++i) out[i] = from[i];
    }
  };
  write(row_ptr(), row_ptr_out);
  write(col_idx(), col_idx_out);
  if (values_out != nullptr) copy_values_to_host(values_out);
}

}  // namespace bsrmm::matrix
