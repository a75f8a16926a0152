// Splits block rows into contiguous chunks of (nearly) equal work for the CPU threads, using
// the plan's cumulative work estimate, so a few long rows do not leave threads idle.
#pragma once

#include <cstdint>
#include <vector>

namespace bsrmm::cpu {

struct RowRange {
  int64_t begin;
  int64_t end;
};

// At most `parts` non-empty ranges covering [0, row_count), in order. `work_prefix` has
// row_count + 1 non-decreasing entries starting at 0; null means every row costs the same.
std::vector<RowRange> split_rows(const int64_t* work_prefix, int64_t row_count, int64_t parts);

}  // namespace bsrmm::cpu
