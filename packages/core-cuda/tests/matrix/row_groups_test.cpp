// Row groups (src/matrix/row_groups): every block row exactly once; similar rows grouped
// together, never more union columns in total than consecutive groups, and structured patterns
// left in their consecutive groups.
#include "../../src/common/error.hpp"
#include "../../src/matrix/row_groups.hpp"
#include "../support/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace bsrmm::test {
namespace {

using matrix::consecutive_row_groups;
using matrix::distinct_columns;
using matrix::RowGroups;
using matrix::similar_row_groups;

struct Pattern {
  std::vector<int32_t> row_ptr{0};
  std::vector<int32_t> col_idx;
  void add_row(const std::vector<int32_t>& columns) {
    col_idx.insert(col_idx.end(), columns.begin(), columns.end());
    row_ptr.push_back(static_cast<int32_t>(col_idx.size()));
  }
};

// Each row holds `per_row` distinct columns of `columns`, drawn uniformly (the benchmark's
// "uniform" pattern).
Pattern uniform_pattern(Random& random, int64_t rows, int32_t columns, int32_t per_row) {
  Pattern pattern;
  std::vector<int32_t> all(static_cast<size_t>(columns));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(all.begin(), all.end(), 0);
    for (int32_t i = 0; i < per_row; ++i)
      std::swap(all[static_cast<size_t>(i)], all[static_cast<size_t>(i + random.below(columns - i))]);
    std::vector<int32_t> row(all.begin(), all.begin() + per_row);
    std::sort(row.begin(), row.end());
    pattern.add_row(row);
  }
  return pattern;
}

int64_t union_total(const Pattern& pattern, const RowGroups& groups) {
  const std::vector<int64_t> counts = distinct_columns(pattern.row_ptr, pattern.col_idx, groups);
  return std::accumulate(counts.begin(), counts.end(), int64_t{0});
}

void expect_every_row_once(const RowGroups& groups, int64_t rows) {
  std::vector<int32_t> sorted = groups.rows;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> expected(static_cast<size_t>(rows));
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(sorted, expected);
}

TEST(RowGroups, ConsecutiveGroupsAreTheRowsInOrder) {
  const RowGroups groups = consecutive_row_groups(5, 2);
  EXPECT_EQ(groups.rows, (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(groups.group_count(), 3);
  EXPECT_EQ(consecutive_row_groups(0, 4).group_count(), 0);
}

TEST(RowGroups, AlternatingRowsGoTogether) {
  // Rows alternate between columns 0-3 and 4-7: consecutive pairs need all 8 columns each,
  // pairs of like rows 4.
  Pattern pattern;
  for (int r = 0; r < 8; ++r)
    pattern.add_row(r % 2 == 0 ? std::vector<int32_t>{0, 1, 2, 3} : std::vector<int32_t>{4, 5, 6, 7});
  const RowGroups groups = similar_row_groups(pattern.row_ptr, pattern.col_idx, 2);
  EXPECT_EQ(groups.rows, (std::vector<int32_t>{0, 2, 1, 3, 4, 6, 5, 7}));
  EXPECT_EQ(union_total(pattern, groups), 16);
  EXPECT_EQ(union_total(pattern, consecutive_row_groups(8, 2)), 32);
}

TEST(RowGroups, UniformRandomRowsShareMoreColumnsAndNeverLose) {
  // On uniform random rows the greedy groups need ~10% fewer union columns (an H100 ran the
  // transposed kernels 7-12% faster for it, docs/perf-log.md entry 28); on any pattern never more.
  Random random(7);
  const Pattern uniform = uniform_pattern(random, 256, 256, 32);  // block 32, d = 0.125
  const RowGroups grouped = similar_row_groups(uniform.row_ptr, uniform.col_idx, 4);
  expect_every_row_once(grouped, 256);
  EXPECT_LT(union_total(uniform, grouped) * 100, union_total(uniform, consecutive_row_groups(256, 4)) * 95);

  for (int trial = 0; trial < 20; ++trial) {
    const int64_t rows = 1 + random.below(300);
    const int32_t columns = static_cast<int32_t>(1 + random.below(200));
    const int32_t rows_per_group = static_cast<int32_t>(1 + random.below(16));
    Pattern pattern;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int32_t> row;
      const double density = random.uniform(0.0, 0.5);
      for (int32_t c = 0; c < columns; ++c)
        if (random.chance(density)) row.push_back(c);
      pattern.add_row(row);
    }
    const RowGroups groups = similar_row_groups(pattern.row_ptr, pattern.col_idx, rows_per_group);
    EXPECT_EQ(groups.rows_per_group, rows_per_group);
    expect_every_row_once(groups, rows);
    EXPECT_LE(union_total(pattern, groups), union_total(pattern, consecutive_row_groups(rows, rows_per_group)))
        << "trial " << trial;
  }
}

TEST(RowGroups, StructuredPatternsKeepTheirConsecutiveGroups) {
  Pattern banded, block_diagonal;
  for (int32_t r = 0; r < 64; ++r) {
    std::vector<int32_t> band;
    for (int32_t c = std::max(0, r - 2); c <= std::min(63, r + 2); ++c) band.push_back(c);
    banded.add_row(band);
    block_diagonal.add_row({r / 8 * 2, r / 8 * 2 + 1});
  }
  for (int32_t rows_per_group : {2, 4, 8}) {
    EXPECT_EQ(similar_row_groups(banded.row_ptr, banded.col_idx, rows_per_group).rows,
              consecutive_row_groups(64, rows_per_group).rows);
    EXPECT_EQ(similar_row_groups(block_diagonal.row_ptr, block_diagonal.col_idx, rows_per_group).rows,
              consecutive_row_groups(64, rows_per_group).rows);
  }
}

TEST(RowGroups, RejectsGroupsWiderThanAWord) {
  EXPECT_THROW(similar_row_groups({0, 0}, {}, 33), detail::Error);
  EXPECT_THROW(similar_row_groups({0, 0}, {}, 0), detail::Error);
  EXPECT_THROW(consecutive_row_groups(4, 0), detail::Error);
  EXPECT_EQ(similar_row_groups({0, 0, 0, 0}, {}, 2).rows, (std::vector<int32_t>{0, 1, 2}));
}

}  // namespace
}  // namespace bsrmm::test
