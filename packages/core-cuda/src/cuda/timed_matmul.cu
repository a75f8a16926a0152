// time_matmul: one run of a named variant between two CUDA events on the caller's stream, for
// the tuner. Events time the GPU work alone (no launch or host overhead), which is what decides
// throughput once a stream is kept busy.
#include "cuda_backend.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_guard.hpp"

namespace bsrmm::cuda {
namespace {

class Event {
 public:
  Event() { check_cuda(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace

double time_matmul(const MatmulArgs& args, const std::string& variant) {
  DeviceGuard guard(args.device);
  auto stream = static_cast<cudaStream_t>(args.stream);
  Event start, stop;
  check_cuda(cudaEventRecord(start.get(), stream), "cudaEventRecord");
  matmul(args, variant);
  check_cuda(cudaEventRecord(stop.get(), stream), "cudaEventRecord");
  check_cuda(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
  float elapsed_ms = 0;
  check_cuda(cudaEventElapsedTime(&elapsed_ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return elapsed_ms;
}

}  // namespace bsrmm::cuda
