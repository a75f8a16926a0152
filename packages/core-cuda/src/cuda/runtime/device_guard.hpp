// Makes a device current for one scope and restores the caller's afterwards, so a context on
// device 1 works while the caller's thread has device 0 current (and keeps it).
#pragma once

#include "cuda_check.hpp"

namespace bsrmm::cuda {

class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != ordinal) check_cuda(cudaSetDevice(ordinal), "cudaSetDevice");
  }
  ~DeviceGuard() {
    int current = previous_;
    // Restoring cannot fail for an ordinal that was current a moment ago; a destructor must not
    // throw either way.
    if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace bsrmm::cuda
