// The CUDA SDDMM as the backend calls it (cuda_backend.cpp's CudaBackend::sddmm): plain C++, no
// CUDA header. values[b] = alpha * (X Y)[block b of the pattern] + beta * values[b] on the
// device, with backend::SddmmArgs (src/backend/operands.hpp): the pattern's device indices and
// X, Y, values in the device's memory.
#pragma once

#include "../../backend/operands.hpp"

#include <string>
#include <vector>

namespace bsrmm::cuda {

using SddmmArgs = backend::SddmmArgs;

// The SDDMM kernels' name prefixes (sddmm_variants.cu).
constexpr const char* sddmm_simt_prefix = "cuda_sddmm_simt_";
constexpr const char* sddmm_mma_prefix = "sm80_sddmm_";

// Every SDDMM kernel compiled in, by name, in order of preference.
std::vector<std::string> sddmm_variant_names();

// Enqueues the SDDMM on args.stream with the first kernel that takes it and returns its name.
// `variant` non-empty forces that kernel (UNSUPPORTED when it cannot take these arguments).
std::string sddmm(const SddmmArgs& args, const std::string& variant = {});

}  // namespace bsrmm::cuda
