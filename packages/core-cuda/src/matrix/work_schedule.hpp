// A balanced static schedule for a persistent GPU kernel: which work items each CTA runs, in
// which order. An item is (N tile, slot); a slot is a block row or a group of block rows, and an
// item of slot s costs slot_cost[s] in every N tile.
//
// The kernels used to walk items round robin (CTA c takes c, c + ctas, ...) in N-tile-major
// order with the longest rows first. On skewed patterns that puts the longest rows of several N
// tiles on the same CTAs (measured on an H100: 50-55% of the balanced pattern's rate). Here the
// items are list-scheduled instead (each goes to the CTA that is free first, as a dynamic work
// counter would hand them out), in N-tile-major order so that the CTAs running at one time share
// one N tile's B panels in L2, except that an item too long to finish in time if started in its
// turn starts earlier. Pure host code: no device, no matrix.
#pragma once

#include "row_groups.hpp"

#include <cstdint>
#include <vector>

namespace bsrmm::matrix {

struct WorkSchedule {
  // CTA c runs items[begin[c]] .. items[begin[c + 1] - 1] in that order (ctas + 1 entries).
  std::vector<int32_t> begin;
  // Every item exactly once, as n_tile * slot_count + slot.
  std::vector<int32_t> items;
  // Cost units: the most any CTA runs (the modelled time) and the least any schedule could
  // (max of the mean load and the longest item).
  int64_t makespan = 0;
  int64_t lower_bound = 0;
};

// Throws INTERNAL when n_tiles or ctas is not positive, a cost is negative, or the item count
// exceeds int32.
WorkSchedule balance_work(const std::vector<int64_t>& slot_cost, int32_t n_tiles, int32_t ctas);

// The cost of each slot (row group, row_groups.hpp; a single block row when rows_per_group is
// 1): cost_per_block x the distinct block columns of its rows (a single row's blocks are distinct
// already) + cost_per_item, the fixed cost of a tile (its epilogue), which an empty row pays too.
// row_ptr/col_idx: a validated BSR structure (block_row_count + 1 and nnzb entries).
std::vector<int64_t> slot_costs(const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& col_idx,
                                const RowGroups& slots, int64_t cost_per_block, int64_t cost_per_item);

}  // namespace bsrmm::matrix
