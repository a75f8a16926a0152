#include "device_runtime.hpp"

#include "../common/dtype.hpp"
#include "../common/error.hpp"

#include <cstring>
#include <vector>

#if BSRMM_WITH_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace bsrmm::detail {

bool cuda_compiled() { return BSRMM_WITH_CUDA != 0; }

#if BSRMM_WITH_CUDA

int cuda_device_count(std::string* why) { return cuda::device_count(why); }

void check_device_exists(bsrmm_device device) {
  if (device.type == BSRMM_DEVICE_CUDA) cuda::check_device(device.ordinal);
}

void check_pointer_on(const void* ptr, bsrmm_device device, const char* what) {
  if (device.type != BSRMM_DEVICE_CUDA || ptr == nullptr) return;
  int ordinal = -1;
  switch (cuda::locate(ptr, &ordinal)) {
    case cuda::PointerLocation::managed:
      return;
    case cuda::PointerLocation::host:
      invalid_argument(what, " is host memory, but its device says ", describe(device));
    case cuda::PointerLocation::device:
      if (ordinal != device.ordinal) {
        invalid_argument(what, " lives on cuda:", ordinal, ", but its device says ",
                         describe(device));
      }
      return;
  }
}

void* device_alloc(std::size_t bytes, bsrmm_device device) {
  return cuda::device_malloc(bytes, device.ordinal);
}

void device_release(void* ptr, bsrmm_device device) noexcept {
  cuda::device_free(ptr, device.ordinal);
}

void copy_bytes(void* dst, bsrmm_device dst_device, const void* src, bsrmm_device src_device,
                std::size_t bytes, void* stream) {
  if (bytes == 0) return;
  const bool dst_gpu = dst_device.type == BSRMM_DEVICE_CUDA;
  const bool src_gpu = src_device.type == BSRMM_DEVICE_CUDA;
  if (!dst_gpu && !src_gpu) {
    std::memcpy(dst, src, bytes);
  } else if (dst_gpu && !src_gpu) {
    cuda::copy(dst, src, bytes, cuda::CopyKind::host_to_device, dst_device.ordinal, stream);
  } else if (!dst_gpu && src_gpu) {
    cuda::copy(dst, src, bytes, cuda::CopyKind::device_to_host, src_device.ordinal, stream);
  } else if (dst_device.ordinal == src_device.ordinal) {
    cuda::copy(dst, src, bytes, cuda::CopyKind::device_to_device, dst_device.ordinal, stream);
  } else {
    // Peer access may be unavailable; staging through the host always works.
    std::vector<unsigned char> staging(bytes);
    cuda::copy(staging.data(), src, bytes, cuda::CopyKind::device_to_host, src_device.ordinal,
               nullptr);
    cuda::copy(dst, staging.data(), bytes, cuda::CopyKind::host_to_device, dst_device.ordinal,
               nullptr);
    cuda::synchronize(dst_device.ordinal, nullptr);
  }
}

void synchronize(bsrmm_device device, void* stream) {
  if (device.type == BSRMM_DEVICE_CUDA) cuda::synchronize(device.ordinal, stream);
}

bool stream_capturing(bsrmm_device device, void* stream) {
  return device.type == BSRMM_DEVICE_CUDA && cuda::stream_is_capturing(device.ordinal, stream);
}

CaptureScope::CaptureScope(bool capturing) : capturing_(capturing) {
  if (capturing_) cuda::set_capture_reason("the context's CUDA stream");
}

CaptureScope::~CaptureScope() {
  if (capturing_) cuda::set_capture_reason(nullptr);
}

#else

int cuda_device_count(std::string* why) {
  if (why) *why = built_without_cuda();
  return 0;
}

void check_device_exists(bsrmm_device device) {
  if (device.type == BSRMM_DEVICE_CUDA) fail(BSRMM_STATUS_NO_DEVICE, built_without_cuda());
}

void check_pointer_on(const void*, bsrmm_device device, const char*) { check_device_exists(device); }

void* device_alloc(std::size_t, bsrmm_device) { fail(BSRMM_STATUS_NO_DEVICE, built_without_cuda()); }

void device_release(void*, bsrmm_device) noexcept {}

void copy_bytes(void* dst, bsrmm_device dst_device, const void* src, bsrmm_device src_device,
                std::size_t bytes, void*) {
  check_device_exists(dst_device);
  check_device_exists(src_device);
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void synchronize(bsrmm_device device, void*) { check_device_exists(device); }

bool stream_capturing(bsrmm_device, void*) { return false; }

CaptureScope::CaptureScope(bool capturing) : capturing_(capturing) {}

CaptureScope::~CaptureScope() = default;

#endif

}  // namespace bsrmm::detail
