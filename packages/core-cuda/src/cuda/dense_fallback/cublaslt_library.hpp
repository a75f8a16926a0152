// cuBLASLt, loaded at run time: bsrmm neither links it nor needs it installed. The library is
// looked for once per process: $BSRMM_CUBLASLT (a path) when set, else libcublasLt.so.13, then
// libcublasLt.so.12 on the loader's search path (a process that already loaded one, e.g. through
// PyTorch, gets that one), then in the lib64 of $CUDA_HOME, $CUDA_PATH and /usr/local/cuda.
// Without it the dense fallback declines, saying why.
#pragma once

#include "cublaslt_api.hpp"

#include <string>

namespace bsrmm::cuda::lt {

// The loaded functions, or null with `why` saying what was tried and what failed.
const Api* api(std::string* why);

// The handle for device `ordinal` (created on first use with that device current, kept for the
// process: cuBLASLt handles may be shared by threads). Throws CUDA_ERROR on failure.
Handle handle(const Api& api, int ordinal);

// "CUBLAS_STATUS_NOT_SUPPORTED (15)", or the number alone when the library has no names.
std::string status_text(const Api& api, Status status);

}  // namespace bsrmm::cuda::lt
