#include "work_lists.hpp"

#include "../common/device_runtime.hpp"
#include "bsr_matrix.hpp"
#include "work_schedule.hpp"


namespace bsrmm::matrix {

namespace {

bool same(const cuda::WorkRequest& x, const cuda::WorkRequest& y) {
  return x.rows_per_slot == y.rows_per_slot && x.n_tiles == y.n_tiles && x.ctas == y.ctas &&
         x.cost_per_block == y.cost_per_block && x.cost_per_item == y.cost_per_item;
}

}  // namespace

cuda::WorkList WorkLists::get(const cuda::WorkRequest& request, void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::unique_ptr<Entry>& entry : entries_)
    if (same(entry->request, request)) return entry->list;

  const WorkSchedule schedule =
      balance_work(slot_costs(matrix_.row_ptr(), matrix_.col_idx(), request.rows_per_slot,
                              request.cost_per_block, request.cost_per_item),
                   request.n_tiles, request.ctas);
  std::vector<int32_t> host(schedule.begin);
  host.insert(host.end(), schedule.items.begin(), schedule.items.end());
  auto entry = std::make_unique<Entry>();
  entry->request = request;
  const bsrmm_device device = matrix_.device();
  entry->device = detail::Buffer::allocate(host.size() * sizeof(int32_t), device);
  detail::copy_bytes(entry->device.data(), device, host.data(), bsrmm_device{BSRMM_DEVICE_CPU, 0},
                     entry->device.size(), stream);
  // Callers on other streams use the list at once: it must be on the device, and `host` is
  // freed on return.
  detail::synchronize(device, stream);
  const int32_t* begin = entry->device.as<const int32_t>();
  entry->list = cuda::WorkList{begin + schedule.begin.size(), begin};
  entries_.push_back(std::move(entry));
  return entries_.back()->list;
}

}  // namespace bsrmm::matrix
