// The operands as every backend sees them: one BsrView of op(A), the C ABI's own bsrmm_dense for
// B and C, one MatmulArgs. Plain C++ on top of the C header only, so the CUDA backend (compiled
// by nvcc), the CPU backend and the core that fills them all include it; src/api builds the
// views once per call from the matrix and its plan (api/execution.cpp).
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstdint>

namespace bsrmm::backend {

// A dense operand is described by the C ABI's struct itself: data, shape, ld, layout, dtype and
// the device its memory is on (the context's, checked before a backend sees it).
using DenseView = bsrmm_dense;

// op(A) in BSR form on its device (a transposed multiply passes the plan's A^T), int32
// indices, blocks row-major. Arrays live where A does: host memory for a CPU matrix, its device
// for a CUDA one. Beyond the matrix itself it carries the plan's aids for A's device; the
// other device's stay null (each backend reads only its own).
struct BsrView {
  int64_t block_row_count = 0;
  int64_t block_col_count = 0;
  int32_t block_height = 0;
  int32_t block_width = 0;
  int64_t nnzb = 0;
  const int32_t* row_ptr = nullptr;  // block_row_count + 1
  const int32_t* col_idx = nullptr;  // nnzb
  const void* values = nullptr;      // nnzb * block_height * block_width, dtype
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  // fp8 values only: their fp32 scales (matrix/value_scales.hpp) in host memory, whatever the
  // device (the CPU reference reads them), and for a CUDA matrix a copy on its device (the
  // generic CUDA kernel reads that one).
  const float* scales = nullptr;
  const float* device_scales = nullptr;
  bsrmm_scale_kind scale_kind = BSRMM_SCALE_PER_TENSOR;

  // GPU aids (plan): block rows by block count, longest first (may be null); on both devices
  // the most blocks in one block row (0: not known).
  const int32_t* row_order = nullptr;
  int64_t max_row_blocks = 0;

  // CPU aids (plan): the same values as f32 (f32/f16/bf16 matrices; the fast variants read
  // them), the cumulative work per block row for balancing (block_row_count + 1), and the block
  // columns in use, ascending, with each block's index into them (the blocked variant packs only
  // the rows of B under them).
  const float* values_f32 = nullptr;
  const int64_t* work_prefix = nullptr;
  const int32_t* used_columns = nullptr;
  int64_t used_column_count = 0;
  const int32_t* packed_col_idx = nullptr;  // nnzb
};

// op(A) as one dense row-major array on A's device (block_row_count * block_height rows of
// block_col_count * block_width elements, zeros outside the blocks), for the dense variants: in
// A's dtype on a GPU (cuBLASLt multiplies halves), in the CPU BLAS's type on the host (f64 for
// f64, f32 for the others). The matrix's plan owns it: built on the first get() (which waits
// for `stream`), freed with the matrix; like the matrix, it never changes once built.
class DenseCopy {
 public:
  virtual const void* get(void* stream) = 0;
  // Whether the plan should keep one (get()). Not for a GPU matrix that borrows its caller's
  // values: that is a step's matrix (torch builds one per call, the values being a parameter
  // that changes), used once, so a kept copy would cost a device allocation, a wait and a free
  // (a device-wide wait) on every step. The dense variant writes op(A) into stream-ordered
  // scratch of its own for that one call instead (densify_blocks, no wait).
  virtual bool kept() const = 0;

 protected:
  ~DenseCopy() = default;
};

// A balanced static schedule for a persistent GPU kernel (the plan builds one per matrix and
// shape of request, src/matrix/work_schedule.hpp). Items are (N tile, slot), a slot being a
// block row (rows_per_slot 1) or a group of rows_per_slot block rows (src/matrix/row_groups.hpp:
// rows with similar columns, not necessarily consecutive); an item costs cost_per_block x the
// distinct block columns of its rows + cost_per_item (its epilogue). n_tiles == 0 asks for no
// schedule (the kernel goes round robin), only the row groups below.
struct WorkRequest {
  int32_t rows_per_slot;
  int32_t n_tiles;
  int32_t ctas;
  int32_t cost_per_block;
  int32_t cost_per_item;
};
// Device arrays: CTA c runs items[begin[c]] .. items[begin[c + 1] - 1] in order, each item
// n_tile * slot_count + slot. With rows_per_slot > 1 also the slots' rows and merged block
// columns (src/matrix/group_columns.hpp): slot s holds block rows group_rows[s * rows_per_slot + i]
// (i < rows_per_slot, while the index is below the block row count) and has the (column, rows)
// pairs columns[2e], columns[2e + 1] for e in column_begin[s] .. column_begin[s + 1] - 1,
// ascending, bit i of rows for its row i; columns is 8-byte aligned.
struct WorkList {
  const int32_t* items;
  const int32_t* begin;
  const int32_t* column_begin;
  const uint32_t* columns;
  const int32_t* group_rows;
};
class WorkListSource {
 public:
  // Built and uploaded on the first request of each shape (ordered on `stream`), then cached.
  virtual WorkList get(const WorkRequest& request, void* stream) = 0;

 protected:
  ~WorkListSource() = default;
};

// C = alpha * op(A) * B + beta * C (+ bias per row of C, then the activation).
struct MatmulArgs {
  BsrView a;
  DenseCopy* a_dense = nullptr;  // null: no dense copy for this call (the dense variants decline)
  DenseView b{};                 // a.block_col_count * block_width rows
  // fp8 B only: its fp32 scales, in host memory (1, or b.cols with PER_COLUMN) or, where the
  // caller's PER_COLUMN ones are in the memory of B's CUDA device, only there (read by a GPU
  // kernel in place, like B; `b_scales` is then null). An fp8 multiply has A and B in fp8 and
  // C in f32, f16 or bf16 (the bias in C's dtype).
  const float* b_scales = nullptr;
  const float* device_b_scales = nullptr;
  bool has_b_scales() const { return b_scales != nullptr || device_b_scales != nullptr; }
  bsrmm_scale_kind b_scale_kind = BSRMM_SCALE_PER_TENSOR;
  DenseView c{};                 // a.block_row_count * block_height rows, b.cols columns
  double alpha = 1.0;            // double, as the C ABI passes them: the f64 kernels need every bit
  double beta = 0.0;             // 0: C is only written
  const void* bias = nullptr;    // C.rows entries in C's dtype, on C's device, or null
  bsrmm_activation activation = BSRMM_ACTIVATION_NONE;
  bsrmm_f32_mode f32_mode = BSRMM_F32_EXACT;  // GPU: whether f32 may run as tf32
  int device = 0;                             // GPU ordinal
  void* stream = nullptr;                     // GPU stream (a cudaStream_t) the work is ordered on
  int32_t sm_budget = 0;  // GPU: the most SMs the kernels may occupy (bsrmm_context_set_sm_budget); 0: all
  WorkListSource* work_lists = nullptr;  // GPU: the matrix's balanced schedules; null: round robin
};

// The SDDMM (bsrmm_sddmm): for every stored block b of `pattern`,
//   values[b] = alpha * (X Y)[rows and columns of block b] + beta * values[b].
// Only the pattern's structure is read (its values and plan aids are not).
struct SddmmArgs {
  BsrView pattern;         // row_ptr / col_idx where the pattern lives
  DenseView x{};           // block_row_count * block_height rows, T columns
  DenseView y{};           // T rows, block_col_count * block_width columns
  DenseView values{};      // nnzb rows of block_height * block_width, row-major, ld = cols
  double alpha = 1.0;
  double beta = 0.0;       // 0: values are only written
  int device = 0;          // GPU ordinal
  void* stream = nullptr;  // GPU stream the work is ordered on
  int32_t sm_budget = 0;   // GPU: as MatmulArgs::sm_budget
};

}  // namespace bsrmm::backend
