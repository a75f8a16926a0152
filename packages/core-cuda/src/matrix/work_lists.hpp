// The balanced schedules of one matrix's persistent GPU kernels (work_schedule.hpp), built on a
// kernel's first request of each shape (rows per slot, N tiles, CTAs, costs), uploaded to the
// matrix's device and kept with the matrix's plan. Any number of threads and streams may ask at
// once: a list is complete on the device before any caller gets it.
#pragma once

#include "../common/buffer.hpp"
#include "../cuda/cuda_backend.hpp"  // the interface only: plain C++, no CUDA header

#include <memory>
#include <mutex>
#include <vector>

namespace bsrmm::matrix {

class BsrMatrix;

class WorkLists final : public cuda::WorkListSource {
 public:
  explicit WorkLists(const BsrMatrix& matrix) : matrix_(matrix) {}
  WorkLists(const WorkLists&) = delete;
  WorkLists& operator=(const WorkLists&) = delete;
  ~WorkLists() = default;

  cuda::WorkList get(const cuda::WorkRequest& request, void* stream) override;

 private:
  struct Entry {
    cuda::WorkRequest request;
    detail::Buffer device;  // begin (ctas + 1), then items
    cuda::WorkList list;
  };
  const BsrMatrix& matrix_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Entry>> entries_;  // a few: one per kernel shape and N
};

}  // namespace bsrmm::matrix
