// Device memory for GPU tests (CUDA builds only): cudaMalloc'd bytes, sized exactly so that a
// read past the end is caught by compute-sanitizer, freed on scope exit. Every failing CUDA call
// is a test failure naming the call and CUDA's reason; the calls also return whether they
// worked, so a caller can stop (ASSERT) before using the buffer.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace bsrmm::test {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes, int device = 0) : bytes_(bytes) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device);
    const cudaError_t result = cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 1));
    if (result != cudaSuccess) {
      ptr_ = nullptr;
      ADD_FAILURE() << "cudaMalloc(" << bytes << ") on device " << device << ": " << cudaGetErrorString(result);
    }
    cudaSetDevice(previous);
  }
  // A device copy of `host`, already landed (see upload).
  explicit DeviceBuffer(const std::vector<unsigned char>& host, int device = 0) : DeviceBuffer(host.size(), device) {
    if (ptr_ != nullptr) upload(host);
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(other.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }

  // NULL when the allocation failed.
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

  // Returns once the bytes are on the device: a cudaMemcpy from pageable memory may return while
  // its DMA is still landing, and a kernel on a non-blocking stream is not ordered after the
  // legacy stream the copy ran on, so it could read (and have overwritten by) the copy in flight.
  bool upload(const void* host, std::size_t bytes, std::size_t offset = 0) {
    return succeeded(cudaMemcpy(static_cast<char*>(ptr_) + offset, host, bytes, cudaMemcpyHostToDevice),
                     "cudaMemcpy to the device") &&
           succeeded(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize after an upload");
  }
  bool upload(const std::vector<unsigned char>& host) { return upload(host.data(), host.size()); }

  bool download(void* host, std::size_t bytes) const {
    return succeeded(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from the device");
  }
  bool download(std::vector<unsigned char>& host) const { return download(host.data(), host.size()); }

 private:
  static bool succeeded(cudaError_t result, const char* what) {
    if (result == cudaSuccess) return true;
    ADD_FAILURE() << what << ": " << cudaGetErrorString(result);
    return false;
  }

  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace bsrmm::test
