// Row chunks for the CPU threads: they cover every row once, in order, and balance the work.
#include "../../src/cpu/partition.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace bsrmm::test {
namespace {

void expect_cover(const std::vector<cpu::RowRange>& ranges, int64_t rows) {
  int64_t next = 0;
  for (const cpu::RowRange& r : ranges) {
    EXPECT_EQ(r.begin, next);
    EXPECT_LT(r.begin, r.end);
    next = r.end;
  }
  EXPECT_EQ(next, rows);
}

TEST(Partition, CoversAllRowsInOrder) {
  for (int64_t rows : {1, 2, 7, 100}) {
    for (int64_t parts : {1, 2, 3, 8, 200}) {
      const auto ranges = cpu::split_rows(nullptr, rows, parts);
      EXPECT_LE(static_cast<int64_t>(ranges.size()), std::min(rows, parts));
      expect_cover(ranges, rows);
    }
  }
  EXPECT_TRUE(cpu::split_rows(nullptr, 0, 4).empty());
}

TEST(Partition, BalancesSkewedWork) {
  // Row 0 holds half of all work; the rest is uniform.
  std::vector<int64_t> prefix{0, 1000};
  for (int r = 1; r <= 100; ++r) prefix.push_back(prefix.back() + 10);
  const auto ranges = cpu::split_rows(prefix.data(), 101, 2);
  ASSERT_EQ(ranges.size(), 2u);
  expect_cover(ranges, 101);
  EXPECT_EQ(ranges[0].end, 1) << "the heavy row alone is half the work";
  const auto four = cpu::split_rows(prefix.data(), 101, 4);
  expect_cover(four, 101);
  for (size_t i = 1; i < four.size(); ++i) {
    const int64_t work = prefix[four[i].end] - prefix[four[i].begin];
    EXPECT_LE(work, 520);
  }
}

}  // namespace
}  // namespace bsrmm::test
