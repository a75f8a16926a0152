// One cuBLASLt product D = alpha * op(X) * op(Y) + beta * D, everything column-major as
// cuBLASLt sees it (dense_variants.cu maps bsrmm's layouts onto it). The algorithm comes from
// cuBLASLt's heuristic, asked once per problem and remembered for the process.
#pragma once

#include "cublaslt_api.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace bsrmm::cuda::dense_fallback {

struct GemmOperand {
  const void* data;
  cudaDataType_t type;
  uint64_t rows;  // as stored, before op
  uint64_t cols;
  int64_t ld;
  lt::Operation op;
};

struct GemmCall {
  GemmOperand x;  // op(X): m x k
  GemmOperand y;  // op(Y): k x n
  void* d;        // m x n, also read as C when *beta != 0
  cudaDataType_t d_type;
  uint64_t m;
  uint64_t n;
  int64_t ldd;
  lt::ComputeType compute;
  cudaDataType_t scale_type;  // of alpha and beta: float, or double for f64
  const void* alpha;          // host pointers
  const void* beta;
  int32_t sm_count_target;    // the SMs cuBLASLt may plan for (bsrmm_context_set_sm_budget); 0: all
};

// Enqueues the product on `stream` (the device must be current); throws CUDA_ERROR with
// cuBLASLt's status on failure, OUT_OF_MEMORY when its workspace cannot be had.
void gemm(const lt::Api& api, int ordinal, const GemmCall& call, cudaStream_t stream);

}  // namespace bsrmm::cuda::dense_fallback
