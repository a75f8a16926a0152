#include "work_schedule.hpp"

#include "../common/error.hpp"

#include <algorithm>
#include <climits>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

namespace bsrmm::matrix {

namespace {

struct Assignment {
  std::vector<std::vector<int32_t>> per_cta;
  int64_t makespan = 0;
};

// Graham's list scheduling: each item, in `order`, goes to the CTA with the least work so far
// (the lowest index on ties), which is when a dynamic counter would have handed it out. With
// equal costs this is exactly the round robin c, c + ctas, ...
Assignment list_schedule(const std::vector<int32_t>& order, const std::vector<int64_t>& item_cost,
                         int32_t ctas) {
  using Load = std::pair<int64_t, int32_t>;  // (work so far, CTA)
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> free_first;
  for (int32_t c = 0; c < ctas; ++c) free_first.push({0, c});
  Assignment assignment;
  assignment.per_cta.resize(static_cast<size_t>(ctas));
  for (int32_t position : order) {
    Load load = free_first.top();
    free_first.pop();
    assignment.per_cta[static_cast<size_t>(load.second)].push_back(position);
    load.first += item_cost[static_cast<size_t>(position)];
    assignment.makespan = std::max(assignment.makespan, load.first);
    free_first.push(load);
  }
  return assignment;
}

}  // namespace

WorkSchedule balance_work(const std::vector<int64_t>& slot_cost, int32_t n_tiles, int32_t ctas) {
  if (n_tiles <= 0 || ctas <= 0)
    detail::fail(BSRMM_STATUS_INTERNAL, "work schedule for ", n_tiles, " N tiles on ", ctas,
                 " CTAs: both must be positive");
  const int64_t slots = static_cast<int64_t>(slot_cost.size());
  if (slots * n_tiles > INT32_MAX)
    detail::fail(BSRMM_STATUS_INTERNAL, "work schedule of ", slots, " slots x ", n_tiles,
                 " N tiles exceeds int32 items");
  for (int64_t cost : slot_cost)
    if (cost < 0) detail::fail(BSRMM_STATUS_INTERNAL, "work schedule: negative slot cost ", cost);

  // The natural order: N tile by N tile (one N tile's B panels at a time stay in L2), heaviest
  // slots first within each.
  std::vector<int32_t> slot_order(static_cast<size_t>(slots));
  std::iota(slot_order.begin(), slot_order.end(), 0);
  std::stable_sort(slot_order.begin(), slot_order.end(), [&](int32_t x, int32_t y) {
    return slot_cost[static_cast<size_t>(x)] > slot_cost[static_cast<size_t>(y)];
  });
  const int32_t count = static_cast<int32_t>(slots * n_tiles);
  std::vector<int32_t> natural(static_cast<size_t>(count));  // position -> item
  std::vector<int64_t> cost(static_cast<size_t>(count));     // by position
  int64_t total = 0, longest = 0;
  for (int32_t t = 0, position = 0; t < n_tiles; ++t)
    for (int32_t slot : slot_order) {
      natural[static_cast<size_t>(position)] = int32_t(t * slots + slot);
      const int64_t c = slot_cost[static_cast<size_t>(slot)];
      cost[static_cast<size_t>(position++)] = c;
      total += c;
      longest = std::max(longest, c);
    }

  WorkSchedule schedule;
  const int64_t busy = std::max<int64_t>(1, std::min<int64_t>(ctas, count));
  schedule.lower_bound = std::max((total + busy - 1) / busy, longest);

  // Locality order: an item starts in its natural turn (the work before it shared by the CTAs)
  // unless that is later than the latest start that still ends by the lower bound.
  std::vector<double> start(static_cast<size_t>(count));
  double before = 0;
  for (int32_t p = 0; p < count; ++p) {
    const double latest = double(schedule.lower_bound - cost[static_cast<size_t>(p)]);
    start[static_cast<size_t>(p)] = std::min(before / double(busy), latest);
    before += double(cost[static_cast<size_t>(p)]);
  }
  std::vector<int32_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    return start[static_cast<size_t>(x)] < start[static_cast<size_t>(y)];
  });
  Assignment chosen = list_schedule(order, cost, ctas);

  // Longest first (LPT, within 4/3 of the optimum): taken only when the model says it is clearly
  // better, since it runs the N tiles side by side and loses their sharing of L2.
  std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    return cost[static_cast<size_t>(x)] > cost[static_cast<size_t>(y)];
  });
  Assignment longest_first = list_schedule(order, cost, ctas);
  if (longest_first.makespan * 100 < chosen.makespan * 97) chosen = std::move(longest_first);

  schedule.makespan = chosen.makespan;
  schedule.begin.reserve(static_cast<size_t>(ctas) + 1);
  schedule.items.reserve(static_cast<size_t>(count));
  schedule.begin.push_back(0);
  for (const std::vector<int32_t>& positions : chosen.per_cta) {
    for (int32_t p : positions) schedule.items.push_back(natural[static_cast<size_t>(p)]);
    schedule.begin.push_back(static_cast<int32_t>(schedule.items.size()));
  }
  return schedule;
}

std::vector<int64_t> slot_costs(const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& col_idx,
                                const RowGroups& slots, int64_t cost_per_block, int64_t cost_per_item) {
  if (slots.rows_per_group <= 0 || row_ptr.size() != slots.rows.size() + 1)
    detail::fail(BSRMM_STATUS_INTERNAL, "slot costs: ", slots.rows_per_group, " rows per slot, ",
                 slots.rows.size(), " rows over ", row_ptr.size(), " row_ptr entries");
  std::vector<int64_t> costs = distinct_columns(row_ptr, col_idx, slots);
  for (int64_t& cost : costs) cost = cost * cost_per_block + cost_per_item;
  return costs;
}

}  // namespace bsrmm::matrix
