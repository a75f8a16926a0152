#include "group_columns.hpp"

#include "../common/error.hpp"

#include <algorithm>
#include <utility>

namespace bsrmm::matrix {

GroupColumns group_columns(const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& col_idx,
                           int32_t rows_per_group) {
  if (rows_per_group < 1 || rows_per_group > 32 || row_ptr.empty())
    detail::fail(BSRMM_STATUS_INTERNAL, "group columns: ", rows_per_group, " rows per group over ",
                 row_ptr.size(), " row_ptr entries (1..32 rows, row_ptr not empty)");
  const int64_t rows = static_cast<int64_t>(row_ptr.size()) - 1;
  const int64_t groups = (rows + rows_per_group - 1) / rows_per_group;
  GroupColumns result;
  result.begin.reserve(static_cast<size_t>(groups) + 1);
  result.begin.push_back(0);
  std::vector<std::pair<int32_t, uint32_t>> blocks;  // (column, row bit) of one group
  for (int64_t g = 0; g < groups; ++g) {
    blocks.clear();
    const int64_t first = g * rows_per_group, last = std::min(rows, first + rows_per_group);
    for (int64_t r = first; r < last; ++r)
      for (int32_t q = row_ptr[static_cast<size_t>(r)]; q < row_ptr[static_cast<size_t>(r) + 1]; ++q)
        blocks.push_back({col_idx[static_cast<size_t>(q)], 1u << (r - first)});
    std::sort(blocks.begin(), blocks.end());
    for (size_t i = 0; i < blocks.size();) {
      uint32_t rows_here = 0;
      const int32_t column = blocks[i].first;
      for (; i < blocks.size() && blocks[i].first == column; ++i) rows_here |= blocks[i].second;
      result.entries.push_back(static_cast<uint32_t>(column));
      result.entries.push_back(rows_here);
    }
    result.begin.push_back(static_cast<int32_t>(result.entries.size() / 2));
  }
  return result;
}

}  // namespace bsrmm::matrix
