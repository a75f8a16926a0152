// The balanced schedules of one matrix structure's persistent GPU kernels (work_schedule.hpp), built on a
// kernel's first request of each shape (rows per slot, N tiles, CTAs, costs), uploaded to the
// matrix's device and kept with the structure's plan; with them, for row groups, which rows each
// group holds (row_groups.hpp: similar rows together) and the groups' merged columns
// (group_columns.hpp), one copy per group size. Any number of threads and streams may
// ask at once: a list is complete on the device before any caller gets it.
#pragma once

#include "../device/buffer.hpp"
#include "../backend/operands.hpp"
#include "row_groups.hpp"

#include <memory>
#include <mutex>
#include <vector>

namespace bsrmm::matrix {

struct BsrStructure;

class WorkLists final : public backend::WorkListSource {
 public:
  // `structure` outlives the lists (both belong to one SharedStructure).
  WorkLists(const BsrStructure& structure, bsrmm_device device)
      : structure_(structure), device_(device) {}
  WorkLists(const WorkLists&) = delete;
  WorkLists& operator=(const WorkLists&) = delete;
  ~WorkLists() = default;

  backend::WorkList get(const backend::WorkRequest& request, void* stream) override;

 private:
  struct Schedule {
    backend::WorkRequest request;
    detail::Buffer device;  // begin (ctas + 1), then items
  };
  struct Columns {
    RowGroups groups;       // on the host too: the schedules' slot costs follow them
    detail::Buffer device;  // the (column, rows) pairs, then column_begin (slots + 1), then the rows
    int64_t pairs;
  };
  // Built on first use (under mutex_): begin then items on the device; the merged columns.
  const int32_t* schedule(const backend::WorkRequest& request, void* stream);
  const Columns& columns(int32_t rows_per_slot, void* stream);
  // `words` on the matrix's device, complete there on return.
  detail::Buffer upload(const std::vector<uint32_t>& words, void* stream) const;

  const BsrStructure& structure_;
  const bsrmm_device device_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Schedule>> schedules_;  // a few: one per kernel shape and N
  std::vector<std::unique_ptr<Columns>> columns_;     // one per group size
};

}  // namespace bsrmm::matrix
