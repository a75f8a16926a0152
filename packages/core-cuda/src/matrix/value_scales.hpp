// The fp32 scales of fp8 values (bsrmm_scales): which elements share one, checked against the
// operand's shape. A's scales belong to the matrix (read once, at bsrmm_matrix_create_scaled);
// B's come with each multiply (bsrmm_matmul_options::b_scales).
#pragma once

#include "../device/buffer.hpp"
#include "bsr_structure.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace bsrmm::matrix {

// A copy of an operand's scales in host memory (the CPU reference reads them there, export
// writes them from there), and where a GPU kernel reads them: A's own copy on its CUDA device
// (`device_copy`), or B's as the caller passed them when those are in device memory
// (`caller_device`: read in place, like B itself, and then never copied: `values` is empty).
struct ValueScales {
  bsrmm_scale_kind kind = BSRMM_SCALE_PER_TENSOR;
  std::vector<float> values;
  detail::Buffer device_copy;
  const float* caller_device = nullptr;
};

// `scales` for a matrix on `target`: themselves on the host or when their device copy is
// already there, else a copy with a device copy on `target` (ordered on `stream`, then waited
// for: matrices are ready on any stream). Null stays null.
std::shared_ptr<const ValueScales> placed_on(std::shared_ptr<const ValueScales> scales,
                                             bsrmm_device target, void* stream);

// How many scales `kind` implies for A of `shape` (PER_COLUMN is B's only: -1).
int64_t matrix_scale_count(bsrmm_scale_kind kind, const BsrShape& shape);
// And for B of `columns` columns (PER_BLOCK and PER_BLOCK_ROW are A's only: -1).
int64_t dense_scale_count(bsrmm_scale_kind kind, int64_t columns);

// Reads and checks A's scales: struct_size, kind, count, pointer, device, finiteness. A
// PER_BLOCK set follows the blocks that sorting moved (`block_source`, empty when none did).
// `what` names the argument in messages ("scales").
ValueScales read_matrix_scales(const bsrmm_scales& given, const BsrShape& shape,
                               const std::vector<int64_t>& block_source, void* stream,
                               const char* what);
// The same for B of `columns` columns ("options->b_scales").
ValueScales read_dense_scales(const bsrmm_scales& given, int64_t columns, void* stream,
                              const char* what);

// The scale of A's element in block `block` of block row `block_row`, and of B's column `column`.
inline float matrix_scale(const float* scales, bsrmm_scale_kind kind, int64_t block_row,
                          int64_t block) {
  switch (kind) {
    case BSRMM_SCALE_PER_BLOCK: return scales[block];
    case BSRMM_SCALE_PER_BLOCK_ROW: return scales[block_row];
    default: return scales[0];
  }
}
inline float dense_scale(const float* scales, bsrmm_scale_kind kind, int64_t column) {
  return kind == BSRMM_SCALE_PER_COLUMN ? scales[column] : scales[0];
}

}  // namespace bsrmm::matrix
