#include "stream_scratch.hpp"

#include "../runtime/cuda_check.hpp"

#include <cstdint>
#include <map>
#include <mutex>

namespace bsrmm::cuda::dense_fallback {
namespace {

// Memory above this returns to the driver when the stream synchronises; below it stays with
// the pool, so the workspace, the column flags and a moderate staging buffer cost no mapping on
// the next call.
constexpr uint64_t kKeptBytes = uint64_t(256) << 20;

// bsrmm's own pool per device (the device's default pool belongs to whoever else uses it).
// Never destroyed: the driver may be gone when static destructors run.
cudaMemPool_t pool_for(int ordinal) {
  static std::mutex mutex;
  static std::map<int, cudaMemPool_t> pools;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = pools.find(ordinal);
  if (found != pools.end()) return found->second;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = ordinal;
  cudaMemPool_t pool = nullptr;
  check_cuda(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  uint64_t kept = kKeptBytes;
  check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &kept),
             "cudaMemPoolSetAttribute(ReleaseThreshold)");
  pools.emplace(ordinal, pool);
  return pool;
}

}  // namespace

std::string stream_memory_refusal(int ordinal) {
  int supported = 0;
  if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, ordinal) != cudaSuccess) {
    cudaGetLastError();
    return "cannot ask device " + std::to_string(ordinal) + " for memory pool support";
  }
  return supported ? "" : "device " + std::to_string(ordinal) + " has no stream-ordered memory pools";
}

StreamScratch::StreamScratch(std::size_t bytes, int ordinal, cudaStream_t stream, const char* user)
    : stream_(stream) {
  if (bytes == 0) return;
  const cudaError_t result = cudaMallocFromPoolAsync(&data_, bytes, pool_for(ordinal), stream);
  if (result == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    detail::fail(BSRMM_STATUS_OUT_OF_MEMORY, user, ": cannot allocate ", bytes,
                 " bytes of scratch on CUDA device ", ordinal);
  }
  check_cuda(result, "cudaMallocFromPoolAsync");
}

StreamScratch::~StreamScratch() {
  if (data_ != nullptr) cudaFreeAsync(data_, stream_);
}

}  // namespace bsrmm::cuda::dense_fallback
