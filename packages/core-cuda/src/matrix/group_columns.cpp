#include "group_columns.hpp"

#include "../common/error.hpp"

#include <algorithm>
#include <utility>

namespace bsrmm::matrix {

GroupColumns group_columns(const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& col_idx,
                           const RowGroups& groups) {
  const int32_t rows_per_group = groups.rows_per_group;
  if (rows_per_group < 1 || rows_per_group > 32 || row_ptr.size() != groups.rows.size() + 1)
    detail::fail(BSRMM_STATUS_INTERNAL, "group columns: ", rows_per_group, " rows per group, ",
                 groups.rows.size(), " rows over ", row_ptr.size(),
                 " row_ptr entries (1..32 rows per group, every block row once)");
  const int64_t rows = static_cast<int64_t>(groups.rows.size());
  const int64_t count = groups.group_count();
  GroupColumns result;
  result.begin.reserve(static_cast<size_t>(count) + 1);
  result.begin.push_back(0);
  std::vector<std::pair<int32_t, uint32_t>> blocks;  // (column, row bit) of one group
  for (int64_t g = 0; g < count; ++g) {
    blocks.clear();
    const int64_t first = g * rows_per_group, last = std::min(rows, first + rows_per_group);
    for (int64_t i = first; i < last; ++i) {
      const size_t r = static_cast<size_t>(groups.rows[static_cast<size_t>(i)]);
      for (int32_t q = row_ptr[r]; q < row_ptr[r + 1]; ++q)
        blocks.push_back({col_idx[static_cast<size_t>(q)], 1u << (i - first)});
    }
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
