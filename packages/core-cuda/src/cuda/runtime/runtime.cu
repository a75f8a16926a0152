// The runtime half of cuda_backend.hpp: devices, pointer location, allocation, copies, stream
// synchronisation. Every call makes the target device current for its duration only
// (DeviceGuard), and nothing here synchronises a whole device.
#include "../cuda_backend.hpp"
#include "cuda_check.hpp"
#include "device_guard.hpp"

#include <sstream>

namespace bsrmm::cuda {
namespace {

std::string version_text(int version) {
  std::ostringstream text;
  text << version / 1000 << '.' << (version % 1000) / 10;
  return text.str();
}

// Why cudaGetDeviceCount found nothing, in words a user can act on.
std::string no_device_reason(cudaError_t result) {
  std::ostringstream why;
  switch (result) {
    case cudaErrorNoDevice:
      why << "no CUDA-capable device is present (cudaErrorNoDevice)";
      break;
    case cudaErrorInsufficientDriver: {
      int driver = 0;
      int runtime = 0;
      cudaDriverGetVersion(&driver);
      cudaRuntimeGetVersion(&runtime);
      if (driver == 0)
        why << "no NVIDIA driver is installed (libcuda could not be loaded; "
               "cudaErrorInsufficientDriver)";
      else
        why << "the NVIDIA driver supports CUDA " << version_text(driver)
            << " but this library was built with CUDA " << version_text(runtime)
            << "; update the driver (cudaErrorInsufficientDriver)";
      break;
    }
    default:
      why << "CUDA could not be initialised: " << cudaGetErrorString(result) << " ("
          << cudaGetErrorName(result) << ")";
  }
  return why.str();
}

cudaMemcpyKind to_cuda(CopyKind kind) {
  switch (kind) {
    case CopyKind::host_to_device:
      return cudaMemcpyHostToDevice;
    case CopyKind::device_to_host:
      return cudaMemcpyDeviceToHost;
    case CopyKind::device_to_device:
      return cudaMemcpyDeviceToDevice;
  }
  return cudaMemcpyDefault;
}

// Set while this thread runs a multiply on a capturing stream (set_capture_reason).
thread_local const char* capture_reason = nullptr;

void refuse_during_capture(const char* needed) {
  if (capture_reason == nullptr) return;
  detail::fail(BSRMM_STATUS_UNSUPPORTED, capture_reason, " is being captured into a CUDA graph, but ",
               "this multiply needs ", needed,
               ", which a capture cannot hold: the first multiply of a matrix with each op(A), "
               "B shape and variant builds its plan (device memory and a wait on the stream). Run "
               "the same multiply once before capturing (and bsrmm_tune, if it should be tuned)");
}

}  // namespace

bool stream_is_capturing(int ordinal, void* stream) {
  DeviceGuard guard(ordinal);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t result = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status);
  if (result == cudaErrorStreamCaptureImplicit) {
    cudaGetLastError();
    return true;  // the legacy stream, while another stream captures in global mode
  }
  check_cuda(result, "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

void set_capture_reason(const char* what) { capture_reason = what; }

int device_count(std::string* why) {
  int count = 0;
  cudaError_t result = cudaGetDeviceCount(&count);
  if (result != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = no_device_reason(result);
    return 0;
  }
  if (count == 0 && why) *why = no_device_reason(cudaErrorNoDevice);
  return count;
}

void check_device(int ordinal) {
  std::string why;
  int count = device_count(&why);
  if (count == 0) detail::fail(BSRMM_STATUS_NO_DEVICE, "no CUDA device: ", why);
  if (ordinal < 0 || ordinal >= count)
    detail::fail(BSRMM_STATUS_NO_DEVICE, "CUDA device ordinal ", ordinal, " does not exist (",
                 count, count == 1 ? " device" : " devices", " present: ordinals 0..", count - 1,
                 ")");
}

PointerLocation locate(const void* ptr, int* ordinal) {
  if (ordinal) *ordinal = -1;
  if (ptr == nullptr) return PointerLocation::host;
  cudaPointerAttributes attributes{};
  check_cuda(cudaPointerGetAttributes(&attributes, ptr), "cudaPointerGetAttributes");
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
      if (ordinal) *ordinal = attributes.device;
      return PointerLocation::device;
    case cudaMemoryTypeManaged:
      if (ordinal) *ordinal = attributes.device;
      return PointerLocation::managed;
    default:  // pinned (cudaMemoryTypeHost) or plain (cudaMemoryTypeUnregistered) host memory
      return PointerLocation::host;
  }
}

void* device_malloc(std::size_t bytes, int ordinal) {
  if (bytes == 0) return nullptr;
  refuse_during_capture("device memory");
  DeviceGuard guard(ordinal);
  void* ptr = nullptr;
  cudaError_t result = cudaMalloc(&ptr, bytes);
  if (result == cudaErrorMemoryAllocation) {
    // Not sticky, but left in place it would be reported by the next unrelated check.
    cudaGetLastError();
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaGetLastError();
    detail::fail(BSRMM_STATUS_OUT_OF_MEMORY, "cudaMalloc of ", bytes, " bytes on CUDA device ",
                 ordinal, " failed: out of memory (", free_bytes, " of ", total_bytes,
                 " bytes free)");
  }
  check_cuda(result, "cudaMalloc");
  return ptr;
}

void device_free(void* ptr, int ordinal) noexcept {
  if (ptr == nullptr) return;
  try {
    DeviceGuard guard(ordinal);
    // A failure here means the context is already broken; the next checked call reports it.
    if (cudaFree(ptr) != cudaSuccess) cudaGetLastError();
  } catch (const detail::Error&) {
  }
}

void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, int ordinal,
          void* stream) {
  if (bytes == 0) return;
  if (kind != CopyKind::device_to_device) refuse_during_capture("a copy to or from host memory");
  DeviceGuard guard(ordinal);
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  check_cuda(cudaMemcpyAsync(dst, src, bytes, to_cuda(kind), cuda_stream), "cudaMemcpyAsync");
  // Pinned host destinations would otherwise be written after we return.
  if (kind == CopyKind::device_to_host)
    check_cuda(cudaStreamSynchronize(cuda_stream), "cudaStreamSynchronize");
}

void synchronize(int ordinal, void* stream) {
  refuse_during_capture("a wait for its stream");
  DeviceGuard guard(ordinal);
  check_cuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

}  // namespace bsrmm::cuda
