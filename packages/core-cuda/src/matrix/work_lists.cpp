#include "work_lists.hpp"

#include "../device/device_runtime.hpp"
#include "bsr_structure.hpp"
#include "group_columns.hpp"
#include "row_groups.hpp"
#include "work_schedule.hpp"

#include <utility>

namespace bsrmm::matrix {

namespace {

bool same(const backend::WorkRequest& x, const backend::WorkRequest& y) {
  return x.rows_per_slot == y.rows_per_slot && x.n_tiles == y.n_tiles && x.ctas == y.ctas &&
         x.cost_per_block == y.cost_per_block && x.cost_per_item == y.cost_per_item;
}

}  // namespace

detail::Buffer WorkLists::upload(const std::vector<uint32_t>& words, void* stream) const {
  const bsrmm_device device = device_;
  detail::Buffer buffer = detail::Buffer::allocate(words.size() * sizeof(uint32_t), device);
  detail::copy_bytes(buffer.data(), device, words.data(), bsrmm_device{BSRMM_DEVICE_CPU, 0},
                     buffer.size(), stream);
  // Callers on other streams use it at once, and `words` is freed by the caller.
  detail::synchronize(device, stream);
  return buffer;
}

backend::WorkList WorkLists::get(const backend::WorkRequest& request, void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  backend::WorkList list{};
  if (request.n_tiles > 0) {
    const int32_t* begin = schedule(request, stream);
    list.begin = begin;
    list.items = begin + request.ctas + 1;
  }
  if (request.rows_per_slot > 1) {
    const Columns& merged = columns(request.rows_per_slot, stream);
    list.columns = merged.device.as<const uint32_t>();
    list.column_begin = reinterpret_cast<const int32_t*>(list.columns + 2 * merged.pairs);
    list.group_rows = list.column_begin + merged.groups.group_count() + 1;
  }
  return list;
}

const int32_t* WorkLists::schedule(const backend::WorkRequest& request, void* stream) {
  for (const std::unique_ptr<Schedule>& made : schedules_)
    if (same(made->request, request)) return made->device.as<const int32_t>();
  const RowGroups slots = request.rows_per_slot > 1
                              ? columns(request.rows_per_slot, stream).groups
                              : consecutive_row_groups(int64_t(structure_.row_ptr.size()) - 1, 1);
  const WorkSchedule balanced =
      balance_work(slot_costs(structure_.row_ptr, structure_.col_idx, slots, request.cost_per_block,
                              request.cost_per_item),
                   request.n_tiles, request.ctas);
  std::vector<uint32_t> words(balanced.begin.begin(), balanced.begin.end());
  words.insert(words.end(), balanced.items.begin(), balanced.items.end());
  schedules_.push_back(std::make_unique<Schedule>(Schedule{request, upload(words, stream)}));
  return schedules_.back()->device.as<const int32_t>();
}

const WorkLists::Columns& WorkLists::columns(int32_t rows_per_slot, void* stream) {
  for (const std::unique_ptr<Columns>& made : columns_)
    if (made->groups.rows_per_group == rows_per_slot) return *made;
  RowGroups groups = similar_row_groups(structure_.row_ptr, structure_.col_idx, rows_per_slot);
  const GroupColumns merged = group_columns(structure_.row_ptr, structure_.col_idx, groups);
  std::vector<uint32_t> words(merged.entries);  // the pairs first: 8-byte aligned for the kernel
  words.insert(words.end(), merged.begin.begin(), merged.begin.end());
  words.insert(words.end(), groups.rows.begin(), groups.rows.end());
  const int64_t pairs = int64_t(merged.entries.size() / 2);
  columns_.push_back(std::make_unique<Columns>(Columns{std::move(groups), upload(words, stream), pairs}));
  return *columns_.back();
}

}  // namespace bsrmm::matrix
