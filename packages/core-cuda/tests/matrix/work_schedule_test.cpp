// The balanced static schedule of the persistent GPU kernels (src/matrix/work_schedule): every
// item exactly once, balanced within bounds on skewed (power-law) rows, the old round robin kept
// for equal costs, slot costs from the structure. Pure host code: runs everywhere.
#include "../../src/common/error.hpp"
#include "../../src/matrix/work_schedule.hpp"
#include "../support/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace bsrmm::test {
namespace {

using matrix::balance_work;
using matrix::slot_costs;
using matrix::WorkSchedule;

// The most work any CTA runs, recomputed from the lists (not taken from the schedule).
int64_t makespan_of(const WorkSchedule& schedule, const std::vector<int64_t>& slot_cost) {
  const int64_t slots = static_cast<int64_t>(slot_cost.size());
  int64_t worst = 0;
  for (size_t c = 0; c + 1 < schedule.begin.size(); ++c) {
    int64_t load = 0;
    for (int32_t i = schedule.begin[c]; i < schedule.begin[c + 1]; ++i)
      load += slot_cost[static_cast<size_t>(schedule.items[static_cast<size_t>(i)] % slots)];
    worst = std::max(worst, load);
  }
  return worst;
}

void expect_every_item_once(const WorkSchedule& schedule, int64_t slots, int32_t n_tiles, int32_t ctas) {
  const int64_t count = slots * n_tiles;
  ASSERT_EQ(schedule.begin.size(), static_cast<size_t>(ctas) + 1);
  EXPECT_EQ(schedule.begin.front(), 0);
  EXPECT_EQ(schedule.begin.back(), count);
  EXPECT_TRUE(std::is_sorted(schedule.begin.begin(), schedule.begin.end()));
  ASSERT_EQ(schedule.items.size(), static_cast<size_t>(count));
  std::vector<int> seen(static_cast<size_t>(count), 0);
  for (int32_t item : schedule.items) {
    ASSERT_GE(item, 0);
    ASSERT_LT(item, count);
    ++seen[static_cast<size_t>(item)];
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), count) << "an item is missing or repeated";
}

// What the kernels did before: item p of the natural order (N-tile-major, heaviest slots first)
// on CTA p % ctas.
int64_t round_robin_makespan(const std::vector<int64_t>& slot_cost, int32_t n_tiles, int32_t ctas) {
  std::vector<int64_t> sorted = slot_cost;
  std::sort(sorted.rbegin(), sorted.rend());
  std::vector<int64_t> load(static_cast<size_t>(ctas), 0);
  int64_t p = 0;
  for (int32_t t = 0; t < n_tiles; ++t)
    for (int64_t cost : sorted) load[static_cast<size_t>(p++ % ctas)] += cost;
  return *std::max_element(load.begin(), load.end());
}

// Block counts of sm90_check's skewed pattern: row i of a random permutation gets a share
// ~ 1 / (i + 1)^0.8 of rows x per_row blocks, at most `columns`.
std::vector<int64_t> power_law_counts(Random& random, int64_t rows, int64_t columns, int64_t per_row) {
  std::vector<double> weight(static_cast<size_t>(rows));
  double total = 0;
  for (int64_t i = 0; i < rows; ++i) total += weight[static_cast<size_t>(i)] = std::pow(double(i + 1), -0.8);
  std::vector<int64_t> permutation(static_cast<size_t>(rows));
  std::iota(permutation.begin(), permutation.end(), 0);
  for (int64_t i = rows - 1; i > 0; --i)
    std::swap(permutation[static_cast<size_t>(i)], permutation[static_cast<size_t>(random.below(i + 1))]);
  std::vector<int64_t> counts(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i)
    counts[static_cast<size_t>(permutation[static_cast<size_t>(i)])] = std::clamp<int64_t>(
        std::llround(weight[static_cast<size_t>(i)] / total * double(per_row * rows)), 0, columns);
  return counts;
}

TEST(WorkSchedule, EqualCostsKeepTheRoundRobin) {
  // 64 rows x 16 N tiles on 132 CTAs: the b128 grid problem with a fixed count per row.
  const std::vector<int64_t> cost(64, 17);
  const WorkSchedule schedule = balance_work(cost, 16, 132);
  expect_every_item_once(schedule, 64, 16, 132);
  for (int32_t c = 0; c < 132; ++c)
    for (int32_t i = schedule.begin[static_cast<size_t>(c)], k = 0; i < schedule.begin[static_cast<size_t>(c) + 1]; ++i, ++k)
      ASSERT_EQ(schedule.items[static_cast<size_t>(i)], c + k * 132) << "CTA " << c << " item " << k;
  EXPECT_EQ(schedule.makespan, 8 * 17);
  EXPECT_EQ(schedule.lower_bound, (1024 * 17 + 131) / 132);
}

TEST(WorkSchedule, SkewedRowsAreBalanced) {
  Random random(2024);
  // Row tiles: blocks 128 and 64 (2 and 1 stages per block, one stage of epilogue), N = 4096 in
  // tiles of 256; the transposed kernel's groups: union columns + 2.
  struct Case {
    int64_t rows;
    int64_t per_block;
    int32_t n_tiles;
  };
  for (const Case& shape : {Case{64, 2, 16}, Case{128, 1, 16}, Case{512, 1, 32}}) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      const std::vector<int64_t> counts = power_law_counts(random, shape.rows, shape.rows, shape.rows / 8);
      std::vector<int64_t> cost;
      for (int64_t blocks : counts) cost.push_back(blocks * shape.per_block + 1);
      const WorkSchedule schedule = balance_work(cost, shape.n_tiles, 132);
      expect_every_item_once(schedule, shape.rows, shape.n_tiles, 132);
      const int64_t makespan = makespan_of(schedule, cost);
      EXPECT_EQ(makespan, schedule.makespan);
      const int64_t longest = *std::max_element(cost.begin(), cost.end());
      const int64_t total = std::accumulate(cost.begin(), cost.end(), int64_t{0}) * shape.n_tiles;
      EXPECT_EQ(schedule.lower_bound, std::max(longest, (total + 131) / 132));
      // Within 10% of the bound (the round robin was up to 2x off on these).
      EXPECT_LE(makespan * 10, schedule.lower_bound * 11)
          << "rows " << shape.rows << " round robin " << round_robin_makespan(cost, shape.n_tiles, 132);
      EXPECT_LE(makespan, round_robin_makespan(cost, shape.n_tiles, 132));
    }
  }
}

TEST(WorkSchedule, TheSkewThatBrokeTheRoundRobin) {
  // Block 128, M = K = 8192: one full row (64 blocks) and a power-law tail. The round robin sent
  // rows 0, 4, 8, ... of every N tile to the same CTAs (132 = 4 mod 64).
  Random random(7);
  std::vector<int64_t> cost;
  for (int64_t blocks : power_law_counts(random, 64, 64, 8)) cost.push_back(2 * blocks + 1);
  const WorkSchedule schedule = balance_work(cost, 16, 132);
  const int64_t old = round_robin_makespan(cost, 16, 132);
  EXPECT_LT(schedule.makespan * 10, old * 6) << "balanced " << schedule.makespan << ", round robin " << old;
}

TEST(WorkSchedule, GrahamBoundOnRandomCosts) {
  Random random(99);
  for (int repeat = 0; repeat < 50; ++repeat) {
    const int64_t slots = 1 + random.below(300);
    const int32_t n_tiles = int32_t(1 + random.below(40));
    const int32_t ctas = int32_t(1 + random.below(200));
    std::vector<int64_t> cost(static_cast<size_t>(slots));
    for (int64_t& c : cost) c = random.chance(0.1) ? random.below(5000) : random.below(50);
    const WorkSchedule schedule = balance_work(cost, n_tiles, ctas);
    expect_every_item_once(schedule, slots, n_tiles, ctas);
    const int64_t longest = *std::max_element(cost.begin(), cost.end());
    EXPECT_EQ(makespan_of(schedule, cost), schedule.makespan);
    // Any list schedule ends by the mean load plus the longest item.
    EXPECT_LE(schedule.makespan, schedule.lower_bound + longest);
    EXPECT_GE(schedule.makespan, schedule.lower_bound);
  }
}

TEST(WorkSchedule, MoreCtasThanItemsAndZeroCosts) {
  const WorkSchedule few = balance_work({5, 0, 3}, 2, 10);
  expect_every_item_once(few, 3, 2, 10);
  EXPECT_EQ(few.makespan, 5);
  const WorkSchedule zeros = balance_work({0, 0, 0, 0}, 3, 4);
  expect_every_item_once(zeros, 4, 3, 4);
  EXPECT_EQ(zeros.makespan, 0);
  const WorkSchedule none = balance_work({}, 3, 4);
  expect_every_item_once(none, 0, 3, 4);
}

TEST(WorkSchedule, RejectsNonsense) {
  EXPECT_THROW(balance_work({1, 2}, 0, 4), detail::Error);
  EXPECT_THROW(balance_work({1, 2}, 4, 0), detail::Error);
  EXPECT_THROW(balance_work({1, -2}, 4, 4), detail::Error);
  EXPECT_THROW(balance_work(std::vector<int64_t>(1 << 16, 1), 1 << 16, 4), detail::Error);
  EXPECT_THROW(slot_costs({0, 1}, {0}, matrix::RowGroups{0, {0}}, 1, 1), detail::Error);
  EXPECT_THROW(slot_costs({0, 1}, {0}, matrix::RowGroups{1, {}}, 1, 1), detail::Error);
}

TEST(WorkSchedule, SlotCostsCountDistinctColumnsPerGroup) {
  // 5 block rows: {0, 2}, {}, {2, 3}, {1}, {0, 1, 2, 3}.
  const std::vector<int32_t> row_ptr{0, 2, 2, 4, 5, 9};
  const std::vector<int32_t> col_idx{0, 2, 2, 3, 1, 0, 1, 2, 3};
  using matrix::consecutive_row_groups;
  EXPECT_EQ(slot_costs(row_ptr, col_idx, consecutive_row_groups(5, 1), 2, 1), (std::vector<int64_t>{5, 1, 5, 3, 9}));
  // Groups of 2: {0,2} u {} = 2; {2,3} u {1} = 3; {0,1,2,3} (a short last group) = 4.
  EXPECT_EQ(slot_costs(row_ptr, col_idx, consecutive_row_groups(5, 2), 1, 2), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(slot_costs(row_ptr, col_idx, consecutive_row_groups(5, 8), 1, 0), (std::vector<int64_t>{4}));
  EXPECT_EQ(slot_costs({0, 0, 0}, {}, consecutive_row_groups(2, 1), 3, 1), (std::vector<int64_t>{1, 1}));
  // Rows grouped {0, 4}, {2, 1}, {3}: {0,1,2,3}; {2,3}; {1}.
  EXPECT_EQ(slot_costs(row_ptr, col_idx, matrix::RowGroups{2, {0, 4, 2, 1, 3}}, 1, 0), (std::vector<int64_t>{4, 2, 1}));
}

}  // namespace
}  // namespace bsrmm::test
