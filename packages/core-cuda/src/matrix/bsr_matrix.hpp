// A validated BSR matrix with its values on one device, plus its lazily built execution plan.
// The host always keeps the int32 structure (validation needs it, the CPU backend runs on it,
// export reads it); CUDA matrices also hold device copies of the indices and their values.
// Immutable after construction: any number of threads may multiply with one matrix at once.
//
// The structure, its device mirrors and the plan parts that depend on nothing else (schedules,
// work lists) live in a SharedStructure that with_values() hands to a matrix with other values:
// weights that change every training step reuse all of it instead of validating, uploading and
// scheduling the same pattern again.
#pragma once

#include "../device/buffer.hpp"
#include "bsr_structure.hpp"
#include "value_scales.hpp"

#include <bsrmm/bsrmm.h>

#include <memory>
#include <vector>

namespace bsrmm::matrix {

class Plan;
class StructurePlan;

// What every matrix made from one validated structure on one device shares.
struct SharedStructure {
  SharedStructure(BsrStructure s, bsrmm_device d);
  ~SharedStructure();
  const BsrStructure structure;
  const int64_t max_row_blocks;  // blocks of the longest block row: read by every tuned call
  const bsrmm_device device;
  detail::Buffer device_row_ptr;  // CUDA only
  detail::Buffer device_col_idx;  // CUDA only
  const std::unique_ptr<StructurePlan> plan;  // refers to `structure`, so declared after it
};

// A validated structure on `device`, its index mirrors uploaded on `stream` (not waited for).
std::shared_ptr<SharedStructure> share_structure(BsrStructure structure, bsrmm_device device, void* stream);

class BsrMatrix {
 public:
  // Validates `desc` (its arrays live on desc.device) and stores the matrix on `target`.
  // `stream` orders the copies on a CUDA target; construction waits for them to finish so
  // the matrix is ready on any stream. An fp8 desc needs `scales` (bsrmm_matrix_create_scaled);
  // other dtypes take none.
  static std::unique_ptr<BsrMatrix> create(const bsrmm_bsr_desc& desc, uint32_t flags,
                                           bsrmm_device target, void* stream,
                                           const bsrmm_scales* scales = nullptr);
  // A matrix from a validated structure and host values (row-major blocks, in structure order),
  // with the scales of fp8 values.
  static std::unique_ptr<BsrMatrix> from_host(BsrStructure structure, bsrmm_dtype dtype,
                                              const void* host_values, bsrmm_device target,
                                              void* stream,
                                              std::shared_ptr<const ValueScales> scales = nullptr);
  // A matrix whose values are already on `values.device()`, with the scales of fp8 values.
  static std::unique_ptr<BsrMatrix> assemble(BsrStructure structure, bsrmm_dtype dtype,
                                             detail::Buffer values, void* stream,
                                             std::shared_ptr<const ValueScales> scales = nullptr);
  // A matrix over a structure already shared (its mirrors on values.device()), with values
  // written there on `stream`: waits for the stream, so the matrix is ready on any stream.
  static std::unique_ptr<BsrMatrix> over(std::shared_ptr<SharedStructure> shared, bsrmm_dtype dtype,
                                         detail::Buffer values, void* stream,
                                         std::shared_ptr<const ValueScales> scales = nullptr);
  // This matrix's structure, dtype and device with other values (value_bytes() bytes, blocks in
  // this matrix's order) on `values_device`: copied, or used in place with
  // BSRMM_CREATE_BORROW_VALUES. Checks that `target` (the caller's context) is device(). Shares
  // the structure and its plan parts; the value-derived ones (transposed, dense copy) start empty.
  // UNSUPPORTED for fp8 matrices (new values need new scales).
  std::unique_ptr<BsrMatrix> with_values(const void* values, bsrmm_device values_device,
                                         uint32_t flags, bsrmm_device target, void* stream) const;
  ~BsrMatrix();

  const BsrShape& shape() const { return shared_->structure.shape; }
  const std::vector<int32_t>& row_ptr() const { return shared_->structure.row_ptr; }
  const std::vector<int32_t>& col_idx() const { return shared_->structure.col_idx; }
  const BsrStructure& structure() const { return shared_->structure; }
  // Blocks of the longest block row, counted once per structure (a scan per call cost ~0.2 ms of
  // host time at 2^18 block rows, more than the multiply at N = 1; docs/perf-log.md entry 82).
  int64_t max_row_blocks() const { return shared_->max_row_blocks; }
  bsrmm_dtype dtype() const { return dtype_; }
  bsrmm_device device() const { return values_.device(); }
  std::size_t value_bytes() const;
  // The scales of fp8 values (null for other dtypes); shared by copies of the matrix.
  const std::shared_ptr<const ValueScales>& scales() const { return scales_; }

  // On device(): values always; row_ptr and col_idx mirrors for CUDA matrices only.
  const detail::Buffer& values() const { return values_; }
  const detail::Buffer& device_row_ptr() const { return shared_->device_row_ptr; }
  const detail::Buffer& device_col_idx() const { return shared_->device_col_idx; }

  // Copies the values to host memory `dst` (value_bytes() bytes).
  void copy_values_to_host(void* dst) const;
  // Host arrays; any may be null to skip it.
  void export_to(bsrmm_index_type index_type, void* row_ptr, void* col_idx, void* values) const;

  Plan& plan() const { return *plan_; }

 private:
  BsrMatrix(std::shared_ptr<SharedStructure> shared, bsrmm_dtype dtype, detail::Buffer values);

  std::shared_ptr<SharedStructure> shared_;
  bsrmm_dtype dtype_;
  detail::Buffer values_;
  std::shared_ptr<const ValueScales> scales_;
  std::unique_ptr<Plan> plan_;
};

}  // namespace bsrmm::matrix
