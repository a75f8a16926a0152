// The part of the cuBLASLt C API that the dense fallback calls, declared here because the
// toolchain's CUDA wheels ship no cublasLt.h and bsrmm must not link cuBLASLt (it is loaded
// with dlopen, see cublaslt_library.hpp). Values and signatures follow NVIDIA's cuBLASLt API
// reference (docs.nvidia.com/cuda/cublas, "Using the cuBLASLt API": cublasLtMatmul,
// cublasLtMatmulAlgoGetHeuristic, the descriptor attribute enums, cublasComputeType_t); the
// ABI has kept them since cuBLAS 11, and the loader accepts only major versions 12 and 13.
// cudaDataType_t comes from CUDA's own library_types.h.
#pragma once

#include <library_types.h>

#include <cstddef>
#include <cstdint>

namespace bsrmm::cuda::lt {

using Status = int;  // cublasStatus_t
constexpr Status kSuccess = 0;

using Handle = struct LtContext*;            // cublasLtHandle_t
using MatmulDesc = struct LtMatmulDesc*;     // cublasLtMatmulDesc_t
using MatrixLayout = struct LtLayout*;       // cublasLtMatrixLayout_t
using Preference = struct LtPreference*;     // cublasLtMatmulPreference_t

// cublasComputeType_t
enum ComputeType : int {
  kCompute32F = 68,
  kCompute64F = 70,
  kCompute32FFastTF32 = 77,
};

// cublasOperation_t
enum Operation : int32_t { kOpN = 0, kOpT = 1 };

// cublasLtMatmulDescAttributes_t (int32_t values for both)
enum MatmulDescAttribute : int {
  kDescTransA = 3,
  kDescTransB = 4,
  kDescSmCountTarget = 15,  // int32_t, 0: every SM of the device
};

// cublasLtMatmulPreferenceAttributes_t
enum PreferenceAttribute : int {
  kPrefMaxWorkspaceBytes = 1,  // uint64_t
  kPrefMinAlignmentA = 5,      // uint32_t bytes, default 256
  kPrefMinAlignmentB = 6,
  kPrefMinAlignmentC = 7,
  kPrefMinAlignmentD = 8,
};

// cublasLtMatmulAlgo_t: opaque, copied by value and reusable for the same problem.
struct MatmulAlgo {
  uint64_t data[8];
};

// cublasLtMatmulHeuristicResult_t
struct HeuristicResult {
  MatmulAlgo algo;
  std::size_t workspace_size;
  Status state;
  float waves_count;
  int reserved[4];
};

// The functions, as pointers filled in by dlsym.
struct Api {
  Status (*create)(Handle*);
  std::size_t (*get_version)();
  const char* (*get_status_name)(Status);  // may be null (older libraries)
  Status (*matmul_desc_create)(MatmulDesc*, ComputeType, cudaDataType_t scale_type);
  Status (*matmul_desc_destroy)(MatmulDesc);
  Status (*matmul_desc_set_attribute)(MatmulDesc, MatmulDescAttribute, const void*, std::size_t);
  Status (*matrix_layout_create)(MatrixLayout*, cudaDataType_t, uint64_t rows, uint64_t cols,
                                 int64_t ld);
  Status (*matrix_layout_destroy)(MatrixLayout);
  Status (*preference_create)(Preference*);
  Status (*preference_destroy)(Preference);
  Status (*preference_set_attribute)(Preference, PreferenceAttribute, const void*, std::size_t);
  Status (*algo_get_heuristic)(Handle, MatmulDesc, MatrixLayout a, MatrixLayout b, MatrixLayout c,
                               MatrixLayout d, Preference, int requested, HeuristicResult* results,
                               int* returned);
  Status (*matmul)(Handle, MatmulDesc, const void* alpha, const void* a, MatrixLayout a_layout,
                   const void* b, MatrixLayout b_layout, const void* beta, const void* c,
                   MatrixLayout c_layout, void* d, MatrixLayout d_layout, const MatmulAlgo* algo,
                   void* workspace, std::size_t workspace_bytes, void* stream);
};

}  // namespace bsrmm::cuda::lt
