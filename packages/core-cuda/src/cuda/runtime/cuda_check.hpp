// CUDA runtime errors as bsrmm::detail::Error. Only .cu files include this (it needs the CUDA
// runtime header); the core sees the backend through cuda_backend.hpp alone.
#pragma once

#include "../../common/error.hpp"

#include <cuda_runtime.h>

namespace bsrmm::cuda {

// Throws CUDA_ERROR with CUDA's own string and the call that failed. Clears a non-sticky error
// so a later unrelated call does not report it again.
inline void check_cuda(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return;
  cudaGetLastError();
  detail::fail(BSRMM_STATUS_CUDA_ERROR, what, " failed: ", cudaGetErrorString(result), " (",
               cudaGetErrorName(result), ")");
}

// A kernel launch reports configuration errors through cudaGetLastError only.
inline void check_launch(const char* kernel) {
  cudaError_t result = cudaGetLastError();
  if (result != cudaSuccess)
    detail::fail(BSRMM_STATUS_CUDA_ERROR, "launch of ", kernel, " failed: ",
                 cudaGetErrorString(result), " (", cudaGetErrorName(result), ")");
}

}  // namespace bsrmm::cuda
