// The merged column lists of row groups (src/matrix/group_columns): every block exactly once, as
// one bit of the entry for its column in its group (the bit of the block's row's place in the
// group); columns ascending within a group.
#include "../../src/common/error.hpp"
#include "../../src/matrix/group_columns.hpp"
#include "../../src/matrix/row_groups.hpp"
#include "../support/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace bsrmm::test {
namespace {

using matrix::consecutive_row_groups;
using matrix::group_columns;
using matrix::GroupColumns;
using matrix::RowGroups;

TEST(GroupColumns, SmallExample) {
  // 5 block rows: {0, 2}, {}, {2, 3}, {1}, {0, 1, 2, 3}; groups of 2: rows 0-1, 2-3, 4.
  const GroupColumns merged =
      group_columns({0, 2, 2, 4, 5, 9}, {0, 2, 2, 3, 1, 0, 1, 2, 3}, consecutive_row_groups(5, 2));
  EXPECT_EQ(merged.begin, (std::vector<int32_t>{0, 2, 5, 9}));
  EXPECT_EQ(merged.entries, (std::vector<uint32_t>{0, 1, 2, 1,  // group 0: row 0 only
                                                   1, 2, 2, 1, 3, 1,  // group 1: row 3 has 1; row 2 has 2, 3
                                                   0, 1, 1, 1, 2, 1, 3, 1}));
}

TEST(GroupColumns, FollowsTheGroupsRowOrder) {
  // The same rows grouped {4, 1}, {3, 0}, {2}: bit i is the group's row i, not its row number.
  const GroupColumns merged = group_columns({0, 2, 2, 4, 5, 9}, {0, 2, 2, 3, 1, 0, 1, 2, 3},
                                            RowGroups{2, {4, 1, 3, 0, 2}});
  EXPECT_EQ(merged.begin, (std::vector<int32_t>{0, 4, 7, 9}));
  EXPECT_EQ(merged.entries, (std::vector<uint32_t>{0, 1, 1, 1, 2, 1, 3, 1,  // group 0: row 4 only
                                                   0, 2, 1, 1, 2, 2,        // row 3 has 1; row 0 has 0, 2
                                                   2, 1, 3, 1}));           // row 2
}

TEST(GroupColumns, EveryBlockIsOneBitOfItsColumnsEntry) {
  Random random(31);
  for (int32_t rows_per_group : {1, 3, 16, 32}) {
    const int64_t rows = 1 + random.below(200), columns = 1 + random.below(300);
    std::vector<int32_t> row_ptr{0}, col_idx;
    for (int64_t r = 0; r < rows; ++r) {
      for (int32_t c = 0; c < columns; ++c)
        if (random.chance(r % 7 == 0 ? 0.0 : 0.1)) col_idx.push_back(c);
      row_ptr.push_back(static_cast<int32_t>(col_idx.size()));
    }
    // Rows in a shuffled order, so that a group's bit i is not its row number.
    RowGroups shuffled = consecutive_row_groups(rows, rows_per_group);
    for (size_t i = shuffled.rows.size(); i > 1; --i)
      std::swap(shuffled.rows[i - 1], shuffled.rows[static_cast<size_t>(random.below(static_cast<int64_t>(i)))]);
    const GroupColumns merged = group_columns(row_ptr, col_idx, shuffled);
    const int64_t groups = (rows + rows_per_group - 1) / rows_per_group;
    ASSERT_EQ(merged.begin.size(), static_cast<size_t>(groups) + 1);
    ASSERT_EQ(merged.entries.size(), 2 * static_cast<size_t>(merged.begin.back()));
    int64_t bits = 0;
    for (int64_t g = 0; g < groups; ++g) {
      for (int32_t e = merged.begin[static_cast<size_t>(g)]; e < merged.begin[static_cast<size_t>(g) + 1]; ++e) {
        const int32_t column = static_cast<int32_t>(merged.entries[2 * static_cast<size_t>(e)]);
        const uint32_t rows_here = merged.entries[2 * static_cast<size_t>(e) + 1];
        if (e > merged.begin[static_cast<size_t>(g)]) {
          EXPECT_LT(static_cast<int32_t>(merged.entries[2 * static_cast<size_t>(e) - 2]), column);
        }
        EXPECT_NE(rows_here, 0u);
        EXPECT_EQ(rows_here >> (rows_per_group - 1) >> 1, 0u) << "a bit past the group";
        for (int32_t i = 0; i < rows_per_group; ++i) {
          const int64_t slot = g * rows_per_group + i;
          const int64_t r = slot < rows ? shuffled.rows[static_cast<size_t>(slot)] : -1;
          const bool has = r >= 0 && std::binary_search(col_idx.begin() + row_ptr[static_cast<size_t>(r)],
                                                          col_idx.begin() + row_ptr[static_cast<size_t>(r) + 1], column);
          EXPECT_EQ(((rows_here >> i) & 1u) != 0, has) << "group " << g << " column " << column << " row " << r;
          bits += (rows_here >> i) & 1u;
        }
      }
    }
    EXPECT_EQ(bits, static_cast<int64_t>(col_idx.size())) << "rows per group " << rows_per_group;
  }
}

TEST(GroupColumns, RejectsGroupsWiderThanAWordOrNotCoveringTheRows) {
  EXPECT_THROW(group_columns({0, 0}, {}, RowGroups{33, {0}}), detail::Error);
  EXPECT_THROW(group_columns({0, 0}, {}, RowGroups{0, {0}}), detail::Error);
  EXPECT_THROW(group_columns({0, 0, 0}, {}, RowGroups{2, {0}}), detail::Error);
  EXPECT_EQ(group_columns({0, 0, 0}, {}, consecutive_row_groups(2, 4)).begin, (std::vector<int32_t>{0, 0}));
}

}  // namespace
}  // namespace bsrmm::test
