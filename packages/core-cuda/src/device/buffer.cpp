#include "buffer.hpp"

#include "../common/error.hpp"
#include "device_runtime.hpp"

#include <new>
#include <utility>

namespace bsrmm::detail {

Buffer Buffer::allocate(std::size_t bytes, bsrmm_device device) {
  Buffer buffer;
  buffer.device_ = device;
  if (bytes == 0) return buffer;
  if (device.type == BSRMM_DEVICE_CPU) {
    buffer.data_ = ::operator new(bytes, std::align_val_t(host_alignment), std::nothrow);
    if (buffer.data_ == nullptr) {
      fail(BSRMM_STATUS_OUT_OF_MEMORY, "could not allocate ", bytes, " bytes of host memory");
    }
  } else {
    buffer.data_ = device_alloc(bytes, device);
  }
  buffer.bytes_ = bytes;
  return buffer;
}

Buffer Buffer::borrow(void* data, std::size_t bytes, bsrmm_device device) {
  Buffer buffer;
  buffer.data_ = data;
  buffer.bytes_ = bytes;
  buffer.device_ = device;
  buffer.borrowed_ = true;
  return buffer;
}

void Buffer::release() noexcept {
  if (data_ != nullptr && !borrowed_) {
    if (device_.type == BSRMM_DEVICE_CPU) {
      ::operator delete(data_, std::align_val_t(host_alignment));
    } else {
      device_release(data_, device_);
    }
  }
  data_ = nullptr;
  bytes_ = 0;
  borrowed_ = false;
}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(other.device_),
      borrowed_(std::exchange(other.borrowed_, false)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = other.device_;
    borrowed_ = std::exchange(other.borrowed_, false);
  }
  return *this;
}

}  // namespace bsrmm::detail
