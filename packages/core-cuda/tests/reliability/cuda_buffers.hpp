// GPU pieces of the reliability tests (CUDA builds only): the skip when no device is usable,
// with bsrmm's reason, and device copies of host operands.
#pragma once

#include <bsrmm/bsrmm.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace bsrmm::test {

inline bool gpu_present(std::string* why) {
  int32_t count = 0;
  if (bsrmm_cuda_device_count(&count) == BSRMM_STATUS_SUCCESS && count > 0) return true;
  *why = bsrmm_last_error();
  return false;
}

#define BSRMM_SKIP_WITHOUT_GPU()                                                 \
  do {                                                                           \
    std::string bsrmm_why;                                                       \
    if (!::bsrmm::test::gpu_present(&bsrmm_why)) GTEST_SKIP() << bsrmm_why;      \
  } while (0)

// cudaMalloc'd copy of host bytes (exact size); data is NULL when the allocation failed.
class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<unsigned char>& host) : bytes_(host.size()) {
    if (cudaMalloc(&data_, bytes_) != cudaSuccess) {
      data_ = nullptr;
      return;
    }
    // A pageable-memory cudaMemcpy may return before its DMA lands, and a non-blocking stream is
    // not ordered after the legacy stream it ran on: wait for it, or a kernel on such a stream
    // can see (and have overwritten by) the upload still in flight.
    if (cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaStreamSynchronize(nullptr) != cudaSuccess) {
      cudaFree(data_);
      data_ = nullptr;
    }
  }
  ~DeviceCopy() { cudaFree(data_); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;

  void* data() const { return data_; }
  bool download(std::vector<unsigned char>& host) const {
    return cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost) == cudaSuccess;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace bsrmm::test
