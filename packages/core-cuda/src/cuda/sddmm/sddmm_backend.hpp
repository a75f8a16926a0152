// The CUDA SDDMM as the core calls it: plain C++, no CUDA header (like cuda_backend.hpp).
// values[b] = alpha * (X Y)[block b of the pattern] + beta * values[b] on the device.
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bsrmm::cuda {

struct SddmmArgs {
  int64_t block_row_count;
  int32_t block_height;
  int32_t block_width;
  int64_t nnzb;
  const int32_t* row_ptr;  // device, block_row_count + 1
  const int32_t* col_idx;  // device, nnzb
  bsrmm_dense x;           // device memory, block_row_count * block_height rows, T columns
  bsrmm_dense y;           // device memory, T rows, the pattern's columns
  void* values;            // device, nnzb blocks of block_height * block_width, row-major
  bsrmm_dtype dtype;
  double alpha;
  double beta;  // 0: values are only written
  int device;
  void* stream;
};

// The SDDMM kernels compiled in, by name (sddmm_variants.cu).
constexpr const char* sddmm_simt_prefix = "cuda_sddmm_simt_";
constexpr const char* sddmm_mma_prefix = "sm80_sddmm_mma_";

// Every SDDMM kernel compiled in, by name, in order of preference.
std::vector<std::string> sddmm_variant_names();

// Enqueues the SDDMM on args.stream with the best kernel that takes it and returns its name.
// `variant` non-empty forces that kernel (UNSUPPORTED when it cannot take these arguments).
std::string sddmm(const SddmmArgs& args, const std::string& variant = {});

}  // namespace bsrmm::cuda
