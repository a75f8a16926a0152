// The merged column lists of row groups, for the GPU kernels that compute a group of block rows
// at once (the sm90 transposed kernel: e.g. 64 C rows = 4 block rows of 16): for each row group
// (row_groups.hpp), its distinct block columns in ascending order, each with the bit set of the
// group's rows that hold a block there. Built once per matrix (the plan keeps it), so the
// kernel's producer reads the merge instead of computing it per tile: on an H100 that merge,
// redone by every producer warp for every N tile, was two thirds of the producer's time. Pure
// host code.
#pragma once

#include "row_groups.hpp"

#include <cstdint>
#include <vector>

namespace bsrmm::matrix {

struct GroupColumns {
  // Group g's entries are entries[2 * e], entries[2 * e + 1] for e in begin[g] .. begin[g + 1] - 1:
  // (block column, rows) with bit i of rows for the group's row i (groups.rows[g * rows_per_group + i]).
  std::vector<int32_t> begin;
  std::vector<uint32_t> entries;
};

// Throws INTERNAL unless 1 <= rows_per_group <= 32 and groups has every block row of row_ptr.
GroupColumns group_columns(const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& col_idx,
                           const RowGroups& groups);

}  // namespace bsrmm::matrix
