// Bytes on one device: 64-byte aligned host memory (whole cache lines and SIMD vectors) or GPU
// memory from the CUDA backend, owned or borrowed from the caller. Move-only.
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstddef>

namespace bsrmm::detail {

class Buffer {
 public:
  static constexpr std::size_t host_alignment = 64;

  Buffer() = default;
  // Throws OUT_OF_MEMORY naming the byte count. Zero bytes gives an empty buffer (null data).
  static Buffer allocate(std::size_t bytes, bsrmm_device device);
  // The caller's memory, used in place and never freed here.
  static Buffer borrow(void* data, std::size_t bytes, bsrmm_device device);

  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const noexcept { return data_; }
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(data_);
  }
  std::size_t size() const noexcept { return bytes_; }
  bsrmm_device device() const noexcept { return device_; }
  bool borrowed() const noexcept { return borrowed_; }

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bsrmm_device device_{BSRMM_DEVICE_CPU, 0};
  bool borrowed_ = false;
};

}  // namespace bsrmm::detail
