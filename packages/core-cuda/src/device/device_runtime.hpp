// The core's one door to the CUDA runtime. In a build without CUDA every call that needs a GPU
// throws NO_DEVICE ("bsrmm was built without CUDA"), so the rest of the core has no #if.
// Also moves bytes between any two devices (host <-> GPU, GPU <-> GPU through the host).
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstddef>
#include <string>

namespace bsrmm::detail {

bool cuda_compiled();
// Usable CUDA devices; 0 with the reason in `why` when there are none (or no CUDA build).
int cuda_device_count(std::string* why);
// Throws NO_DEVICE when `device` is a CUDA device that does not exist (or no CUDA build).
void check_device_exists(bsrmm_device device);

// Throws INVALID_ARGUMENT when `ptr` does not live where `device` says (a host pointer passed as
// CUDA memory, or memory of another GPU); `what` names the argument ("B.data").
// Managed memory is accepted for either claim. CPU claims are not checked (that would start
// the CUDA runtime on every CPU call), so a GPU pointer passed as CPU memory is the caller's bug.
void check_pointer_on(const void* ptr, bsrmm_device device, const char* what);

void* device_alloc(std::size_t bytes, bsrmm_device device);  // CUDA devices only
void device_release(void* ptr, bsrmm_device device) noexcept;

// Copies `bytes` from `src` on `src_device` to `dst` on `dst_device`, enqueued on `stream` (a
// cudaStream_t of the GPU involved, or nullptr) where one GPU is involved. Copies to the host
// have completed on return; GPU-to-GPU copies between different devices go through the host.
void copy_bytes(void* dst, bsrmm_device dst_device, const void* src, bsrmm_device src_device,
                std::size_t bytes, void* stream);
// Waits for `stream` on a CUDA device; no-op for the CPU.
void synchronize(bsrmm_device device, void* stream);

// Whether work enqueued on `stream` of the CUDA `device` now would be captured into a CUDA graph;
// false for the CPU.
bool stream_capturing(bsrmm_device device, void* stream);

// While alive (and `capturing`), this thread's device allocations, host copies and stream waits
// throw UNSUPPORTED saying that the stream is being captured and what to run first; they would
// otherwise fail inside the capture and invalidate it.
class CaptureScope {
 public:
  explicit CaptureScope(bool capturing);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  bool capturing_;
};

// The message every CUDA entry point gives in a CPU-only build.
inline const char* built_without_cuda() { return "bsrmm was built without CUDA"; }

}  // namespace bsrmm::detail
