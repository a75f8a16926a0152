// device_identity: the architecture and product name a tuned choice is filed under, so a cache
// shared between machines never hands an H100's choice to another GPU.
#include "../cuda_backend.hpp"
#include "cuda_check.hpp"
#include "device_traits.hpp"

#include <map>
#include <mutex>

namespace bsrmm::cuda {

DeviceIdentity device_identity(int ordinal) {
  static std::mutex mutex;
  static std::map<int, DeviceIdentity> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(ordinal);
  if (found != cache.end()) return found->second;
  const DeviceTraits& traits = device_traits(ordinal);
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, ordinal), "cudaGetDeviceProperties");
  DeviceIdentity identity{"sm_" + std::to_string(traits.cc_major * 10 + traits.cc_minor),
                          properties.name};
  return cache.emplace(ordinal, identity).first->second;
}

}  // namespace bsrmm::cuda
