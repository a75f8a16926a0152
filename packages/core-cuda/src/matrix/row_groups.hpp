// Which block rows share a row group, for the GPU kernels that compute a group of block rows at
// once (the sm90 transposed kernel). Such a kernel loads each B slice once per group for every
// row of the group that has that block column, so what it reads is the sum over groups of the
// group's distinct block columns (its union). Rows with similar columns grouped together make
// that sum smaller: on an H100 the transposed kernels are bound by those B reads (perf-log entry
// 28), and grouping by similarity cut the union 10-17% and the time 7-12% on uniform random
// patterns at blocks 16 and 32. Built once per matrix and group size (the plan keeps it). Pure
// host code.
#pragma once

#include <cstdint>
#include <vector>

namespace bsrmm::matrix {

struct RowGroups {
  int32_t rows_per_group = 1;
  // Every block row once, in group order: group g holds rows[g * rows_per_group + i] for
  // i < rows_per_group (the last group may be short). Row i of a group is its bit i in
  // group_columns' row sets.
  std::vector<int32_t> rows;

  int64_t group_count() const {
    return (static_cast<int64_t>(rows.size()) + rows_per_group - 1) / rows_per_group;
  }
};

// Groups of consecutive block rows: 0..R-1, R..2R-1, ...
RowGroups consecutive_row_groups(int64_t block_rows, int32_t rows_per_group);

// Groups of similar rows, greedily: a group starts at the first row not yet placed and takes, one
// at a time, the row that overlaps its union most for the fewest new columns (the highest
// (overlap + 1) / (new + 1)), among the next few hundred unplaced rows (fewer for matrices with
// millions of blocks, to bound the build at ~10^8 steps). The rows' original order breaks ties,
// so structured patterns (bands, block diagonals) keep their consecutive groups. Returns the
// consecutive groups when the greedy ones have no fewer union columns in total.
// row_ptr/col_idx: a validated BSR structure. Throws INTERNAL unless 1 <= rows_per_group <= 32.
RowGroups similar_row_groups(const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& col_idx,
                             int32_t rows_per_group);

// The distinct block columns of each group (the size of its union).
std::vector<int64_t> distinct_columns(const std::vector<int32_t>& row_ptr,
                                      const std::vector<int32_t>& col_idx, const RowGroups& groups);

}  // namespace bsrmm::matrix
