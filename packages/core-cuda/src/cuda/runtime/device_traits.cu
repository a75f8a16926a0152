#include "device_traits.hpp"

#include "cuda_check.hpp"

#include <map>
#include <mutex>

namespace bsrmm::cuda {

const DeviceTraits& device_traits(int ordinal) {
  static std::mutex mutex;
  static std::map<int, DeviceTraits> cache;  // node-based: references stay valid
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(ordinal);
  if (found != cache.end()) return found->second;
  DeviceTraits traits{};
  check_cuda(cudaDeviceGetAttribute(&traits.cc_major, cudaDevAttrComputeCapabilityMajor, ordinal),
             "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
  check_cuda(cudaDeviceGetAttribute(&traits.cc_minor, cudaDevAttrComputeCapabilityMinor, ordinal),
             "cudaDeviceGetAttribute(ComputeCapabilityMinor)");
  check_cuda(cudaDeviceGetAttribute(&traits.sm_count, cudaDevAttrMultiProcessorCount, ordinal),
             "cudaDeviceGetAttribute(MultiProcessorCount)");
  check_cuda(cudaDeviceGetAttribute(&traits.max_smem_per_block_optin,
                                    cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal),
             "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
  return cache.emplace(ordinal, traits).first->second;
}

DeviceTraits within_sm_budget(const DeviceTraits& device, int32_t sm_budget) {
  DeviceTraits budgeted = device;
  if (sm_budget > 0 && sm_budget < device.sm_count) budgeted.sm_count = sm_budget;
  return budgeted;
}

}  // namespace bsrmm::cuda
