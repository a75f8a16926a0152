// The boundary between the core (compiled by the host compiler) and the CUDA backend (compiled
// by nvcc): the runtime calls the core makes directly, and the kernels behind the Backend
// interface (make_backend). Plain C++: no CUDA header leaks into the core. Only built when the
// CUDA language is enabled (BSRMM_WITH_CUDA=1); every function throws bsrmm::detail::Error on failure, with
// CUDA's own error string in the message (BSRMM_STATUS_CUDA_ERROR, OUT_OF_MEMORY, NO_DEVICE).
#pragma once

#include "../backend/backend.hpp"

#include <bsrmm/bsrmm.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bsrmm::cuda {

// ---- runtime ----

// Usable devices; 0 with `why` filled in (no driver, driver too old, no device) when none.
int device_count(std::string* why);
// Throws NO_DEVICE naming the ordinal when it does not exist.
void check_device(int ordinal);

enum class PointerLocation { host, device, managed };
// Where `ptr` lives; for device memory, `ordinal` receives its device. Unregistered host
// memory reports host.
PointerLocation locate(const void* ptr, int* ordinal);

// Allocation on `ordinal` (OUT_OF_MEMORY names the byte count on failure). free(nullptr) is a no-op.
void* device_malloc(std::size_t bytes, int ordinal);
void device_free(void* ptr, int ordinal) noexcept;

enum class CopyKind { host_to_device, device_to_host, device_to_device };
// Enqueued on `stream` (a cudaStream_t or nullptr). Copies from pageable host memory complete
// before returning, as CUDA defines; device_to_host waits for the copy to finish.
void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, int ordinal, void* stream);
void synchronize(int ordinal, void* stream);

// ---- CUDA graph capture ----

// Whether work enqueued on `stream` now would be captured into a CUDA graph: the stream is
// capturing, or it is the legacy stream while another stream captures in global mode.
bool stream_is_capturing(int ordinal, void* stream);
// Marks this thread's calls as captured (`what` says why they are, for the message) or, with
// nullptr, as not: while marked, device_malloc, copies to or from the host and synchronize throw
// UNSUPPORTED instead of making a call that a capture cannot hold (which would also invalidate
// the caller's capture).
void set_capture_reason(const char* what);

// ---- kernels ----

// The shared operand views and plan interfaces (src/backend/operands.hpp), by the names the
// kernel families use.
using BsrView = backend::BsrView;
using DenseView = backend::DenseView;
using DenseCopy = backend::DenseCopy;
using WorkRequest = backend::WorkRequest;
using WorkList = backend::WorkList;
using WorkListSource = backend::WorkListSource;
using MatmulArgs = backend::MatmulArgs;

// The Backend (src/backend/backend.hpp) over the functions below, for device `ordinal`
// (cuda_backend.cpp).
std::unique_ptr<backend::Backend> make_backend(int ordinal);

// Every CUDA variant compiled in, by name.
std::vector<std::string> variant_names();
// Runs `variant` (empty: the heuristic default for the arguments) and returns the name of the
// variant that ran. Throws UNSUPPORTED when the named variant cannot take these arguments.
std::string matmul(const MatmulArgs& args, const std::string& variant);

// ---- tuning (src/tune measures the eligible variants through these) ----

// The variants that support `args` on its device, the heuristic's pick first.
std::vector<std::string> supporting_variants(const MatmulArgs& args);
// Runs `variant` once on args.stream between two CUDA events and returns the elapsed
// milliseconds (waits for the stop event, not for the whole device).
double time_matmul(const MatmulArgs& args, const std::string& variant);

struct DeviceIdentity {
  std::string arch;  // "sm_90"
  std::string name;  // "NVIDIA H100 80GB HBM3"
};
// Read once per ordinal.
DeviceIdentity device_identity(int ordinal);

// Writes op(A) densely: `dst` (block_rows * block_height rows of block_cols * block_width
// elements, row-major, dtype) is zeroed, then receives each of the nnzb blocks at its place.
// Device arrays; ordered on `stream`, no wait.
void densify_blocks(const int32_t* row_ptr, const int32_t* col_idx, const void* values,
                    int64_t block_rows, int64_t block_cols, int32_t block_height,
                    int32_t block_width, int64_t nnzb, bsrmm_dtype dtype, void* dst, int device,
                    void* stream);

// Writes the transposed matrix's values: dst block t = transpose(src block src_block[t]), each
// block_height x block_width source block becoming block_width x block_height. Device arrays.
void transpose_blocks(const void* src, void* dst, const int32_t* src_block, int64_t nnzb,
                      int32_t block_height, int32_t block_width, bsrmm_dtype dtype, int device,
                      void* stream);

}  // namespace bsrmm::cuda
