// A validated BSR matrix with its values on one device, plus its lazily built execution plan.
// The host always keeps the int32 structure (validation needs it, the CPU backend runs on it,
// export reads it); CUDA matrices also hold device copies of the indices and their values.
// Immutable after construction: any number of threads may multiply with one matrix at once.
#pragma once

#include "../common/buffer.hpp"
#include "bsr_structure.hpp"

#include <bsrmm/bsrmm.h>

#include <memory>
#include <vector>

namespace bsrmm::matrix {

class Plan;

class BsrMatrix {
 public:
  // Validates `desc` (its arrays live on desc.device) and stores the matrix on `target`.
  // `stream` orders the copies on a CUDA target; construction waits for them to finish so
  // the matrix is ready on any stream.
  static std::unique_ptr<BsrMatrix> create(const bsrmm_bsr_desc& desc, uint32_t flags,
                                           bsrmm_device target, void* stream);
  // A matrix from a validated structure and host values (row-major blocks, in structure order).
  static std::unique_ptr<BsrMatrix> from_host(BsrStructure structure, bsrmm_dtype dtype,
                                              const void* host_values, bsrmm_device target,
                                              void* stream);
  // A matrix whose values are already on `values.device()`.
  static std::unique_ptr<BsrMatrix> assemble(BsrStructure structure, bsrmm_dtype dtype,
                                             detail::Buffer values, void* stream);
  ~BsrMatrix();

  const BsrShape& shape() const { return structure_.shape; }
  const std::vector<int32_t>& row_ptr() const { return structure_.row_ptr; }
  const std::vector<int32_t>& col_idx() const { return structure_.col_idx; }
  const BsrStructure& structure() const { return structure_; }
  bsrmm_dtype dtype() const { return dtype_; }
  bsrmm_device device() const { return values_.device(); }
  std::size_t value_bytes() const;

  // On device(): values always; row_ptr and col_idx mirrors for CUDA matrices only.
  const detail::Buffer& values() const { return values_; }
  const detail::Buffer& device_row_ptr() const { return device_row_ptr_; }
  const detail::Buffer& device_col_idx() const { return device_col_idx_; }

  // Copies the values to host memory `dst` (value_bytes() bytes).
  void copy_values_to_host(void* dst) const;
  // Host arrays; any may be null to skip it.
  void export_to(bsrmm_index_type index_type, void* row_ptr, void* col_idx, void* values) const;

  Plan& plan() const { return *plan_; }

 private:
  BsrMatrix(BsrStructure structure, bsrmm_dtype dtype, detail::Buffer values);

  BsrStructure structure_;
  bsrmm_dtype dtype_;
  detail::Buffer values_;
  detail::Buffer device_row_ptr_;
  detail::Buffer device_col_idx_;
  std::unique_ptr<Plan> plan_;
};

}  // namespace bsrmm::matrix
