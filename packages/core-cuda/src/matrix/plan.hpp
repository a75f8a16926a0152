// What a multiply needs beyond the matrix itself, derived once and cached (the way a weight
// matrix is reused): the block-row schedule and the GPU work lists, which depend only on the
// structure (StructurePlan: shared by every matrix with that structure, see
// BsrMatrix::with_values), and, per matrix, the transposed matrix for op_a = TRANSPOSE, f32
// values for the CPU fast path on half-precision matrices, and a dense copy for the GPU's dense
// fallback. Each part is built on first use under a mutex, so concurrent multiplies build it once.
#pragma once

#include "../device/buffer.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace bsrmm::matrix {

class BsrMatrix;
struct BsrStructure;
class WorkLists;
struct TransposedStructure;

struct Schedule {
  // Block rows by block count, longest first (ties keep row order): GPU kernels hand out the
  // heaviest rows first so the last wave is short.
  std::vector<int32_t> row_order;
  // Cumulative CPU work estimate per block row (block_row_count + 1 entries): a row costs its
  // multiply-adds (blocks * block_width per output element) plus a constant epilogue, so rows
  // without blocks still count. The CPU splits rows into chunks of equal work with it.
  std::vector<int64_t> work_prefix;
  // Block columns holding at least one block, ascending, and for each block its position in
  // that list: the CPU packs only the rows of B under used columns, so its memory and time
  // follow A's sparsity, not B's height.
  std::vector<int32_t> used_columns;
  std::vector<int32_t> packed_col_idx;  // nnzb
  detail::Buffer device_row_order;  // row_order on a CUDA matrix's device; none (null) where it is 0, 1, 2, ...
};

// The parts that depend only on the structure and the device.
class StructurePlan {
 public:
  StructurePlan(const BsrStructure& structure, bsrmm_device device);
  ~StructurePlan();

  const Schedule& schedule(void* stream);
  // A^T's structure and where its blocks come from (transpose.hpp).
  const TransposedStructure& transposed(void* stream);
  bool has_transposed();  // built already (a CUDA graph capture can use it, not build it)
  WorkLists& work_lists();

 private:
  const BsrStructure& structure_;
  const bsrmm_device device_;
  std::mutex mutex_;
  std::unique_ptr<Schedule> schedule_;
  std::unique_ptr<TransposedStructure> transposed_;
  std::unique_ptr<WorkLists> work_lists_;
};

class Plan {
 public:
  explicit Plan(StructurePlan& structure_plan);
  ~Plan();

  // `stream` orders device work for CUDA matrices; the plan waits for it before returning, so
  // the cached parts are ready on any stream.
  const Schedule& schedule(void* stream) { return structure_plan_.schedule(stream); }
  // A^T as a BSR matrix on the same device: block (r, c) of A becomes block (c, r), transposed.
  const BsrMatrix& transposed(const BsrMatrix& matrix, void* stream);
  // A^T's structure, shared by every matrix of this structure (built once, on first use).
  const TransposedStructure& transposed_structure(void* stream) { return structure_plan_.transposed(stream); }
  bool has_transposed_structure() { return structure_plan_.has_transposed(); }
  // The values as f32 (CPU matrices): the values themselves for f32, a converted copy for f16
  // and bf16, for fp8 each value times its block's scale. Not available for f64.
  const float* values_f32(const BsrMatrix& matrix);
  // The balanced schedules of the persistent GPU kernels for this matrix (work_lists.hpp).
  WorkLists& work_lists() { return structure_plan_.work_lists(); }
  // The whole matrix as one dense row-major array (rows x cols, ld = cols, zeros outside the
  // blocks) on the matrix's CUDA device, for the dense fallback: rows * cols elements of device
  // memory for the matrix's lifetime. A matrix never changes its values, so it stays valid.
  const void* dense_values(const BsrMatrix& matrix, void* stream);
  // The same for a CPU matrix, in host memory and in `element` (the CPU dense fallback's compute
  // type: f64 for f64, f32 for the others, converted), for cpu_dense_blas.
  const void* dense_host_values(const BsrMatrix& matrix, bsrmm_dtype element);

 private:
  StructurePlan& structure_plan_;
  std::mutex mutex_;
  std::unique_ptr<BsrMatrix> transposed_;
  std::unique_ptr<detail::Buffer> values_f32_;
  std::unique_ptr<detail::Buffer> dense_values_;  // a matrix is on one device: CUDA's or the host's
};

}  // namespace bsrmm::matrix
