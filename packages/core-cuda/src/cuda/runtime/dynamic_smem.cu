#include "dynamic_smem.hpp"

#include "cuda_check.hpp"

#include <mutex>
#include <set>
#include <utility>

namespace bsrmm::cuda {

void allow_dynamic_smem(const void* kernel, int bytes, int device) {
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> configured;
  std::lock_guard<std::mutex> lock(mutex);
  const std::pair<const void*, int> key{kernel, device};
  if (configured.count(key) != 0) return;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
             "cudaFuncSetAttribute(max dynamic shared memory)");
  configured.insert(key);
}

}  // namespace bsrmm::cuda
