// Every rule a BSR description must meet before bsrmm touches it (DESIGN.md, "Rules the core
// enforces"). Each failure is an INVALID_ARGUMENT whose message names the argument, the value
// and the rule, e.g. "desc.col_idx[17] = 40 >= block column count 32".
#pragma once

#include "bsr_structure.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <vector>

namespace bsrmm::matrix {

// Sizes, block shape, enum values, pointer presence and overflow of the value array's size.
// Reads no array. An fp8 dtype is INVALID_ARGUMENT unless `fp8_allowed`
// (bsrmm_matrix_create_scaled), which also requires one.
BsrShape validate_shape(const bsrmm_bsr_desc& desc, bool fp8_allowed = false);

// A block side must lie in 1..max_block_side; `name` is the argument ("desc.block_height").
void check_block_side(int32_t side, const char* name);

// Rejects unknown flag bits.
void validate_flags(uint32_t flags);

struct ReadStructure {
  BsrStructure structure;
  // Non-empty when sorting moved blocks: stored block i is the caller's block block_source[i].
  std::vector<int64_t> block_source;
};

// Reads row_ptr and col_idx (host arrays of `index_type`) into int32, checking monotonicity,
// bounds, order and uniqueness. With BSRMM_CREATE_SORT_INDICES the columns of each block row are
// sorted (duplicates are still an error).
ReadStructure read_structure(const BsrShape& shape, const void* row_ptr, const void* col_idx,
                             bsrmm_index_type index_type, uint32_t flags);

}  // namespace bsrmm::matrix
