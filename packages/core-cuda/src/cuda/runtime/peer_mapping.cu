// Whether a device can write memory that lives on another GPU through a mapping of its own:
// the way torch's symmetric memory, NVSHMEM and other peer-to-peer buffers are made (cuMemMap
// of a peer's physical allocation, cuMemSetAccess for this device). cudaPointerGetAttributes
// names the GPU that holds such memory, not the one that may use it, so the operand check asks
// the mapping itself (cuMemGetAccess) before it refuses a pointer of another device.
#include "../cuda_backend.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

namespace bsrmm::cuda {
namespace {

using GetAccess = CUresult (*)(unsigned long long*, const CUmemLocation*, CUdeviceptr);

// Found in the driver at first use, as sm90/tensor_map.cu finds cuTensorMapEncodeTiled (no
// libcuda link); null where the driver has no virtual memory management (before CUDA 10.2).
GetAccess get_access() {
  static GetAccess function = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAccess", &entry, 10020, cudaEnableDefault,
                                         &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
      function = reinterpret_cast<GetAccess>(entry);
    else
      cudaGetLastError();
  });
  return function;
}

}  // namespace

bool mapped_read_write_for(const void* ptr, int ordinal) {
  GetAccess function = get_access();
  if (!function || ptr == nullptr) return false;
  CUmemLocation location{};
  location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  location.id = ordinal;
  unsigned long long flags = 0;
  // Memory not made by cuMemMap (cudaMalloc, a pool) answers CUDA_ERROR_INVALID_VALUE: no
  // mapping of this device's to ask about, so the caller's check stands.
  if (function(&flags, &location, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) return false;
  return flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

}  // namespace bsrmm::cuda
