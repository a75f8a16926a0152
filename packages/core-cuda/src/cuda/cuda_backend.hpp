// The boundary between the core (compiled by the host compiler) and the CUDA backend (compiled
// by nvcc). Plain C++: no CUDA header leaks into the core. Only built when the CUDA language is
// enabled (BSRMM_WITH_CUDA=1); every function throws bsrmm::detail::Error on failure, with
// CUDA's own error string in the message (BSRMM_STATUS_CUDA_ERROR, OUT_OF_MEMORY, NO_DEVICE).
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstddef>
#include <cstdint>
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

// A BSR operand as the kernels see it: device pointers, int32 indices, blocks row-major.
// op(A) is already applied: a transposed multiply gets the plan's transposed copy.
struct BsrView {
  int64_t block_row_count;
  int64_t block_col_count;
  int32_t block_height;
  int32_t block_width;
  int64_t nnzb;
  const int32_t* row_ptr;    // block_row_count + 1
  const int32_t* col_idx;    // nnzb
  const void* values;        // nnzb * block_height * block_width, dtype
  const int32_t* row_order;  // block rows by block count, longest first (plan); may be null
  bsrmm_dtype dtype;
  int64_t max_row_blocks;  // the most blocks in one block row; 0: not known
};

struct DenseView {
  void* data;
  int64_t rows;
  int64_t cols;
  int64_t ld;
  bsrmm_layout layout;
  bsrmm_dtype dtype;
};

// op(A) as one dense row-major array (a.block_row_count * block_height rows, ld = its
// a.block_col_count * block_width columns, A's dtype, zeros outside the blocks), for the dense
// fallback variants. The matrix's plan owns it: built on the first get() (which waits for
// `stream`), freed with the matrix. Like the matrix, it never changes once built.
class DenseCopy {
 public:
  virtual const void* get(void* stream) = 0;

 protected:
  ~DenseCopy() = default;
};

// A balanced static schedule for a persistent kernel (the plan builds one per matrix and shape
// of request, src/matrix/work_schedule.hpp). Items are (N tile, slot), a slot being a block row
// (rows_per_slot 1) or a group of rows_per_slot block rows (src/matrix/row_groups.hpp: rows with
// similar columns, not necessarily consecutive); an item costs cost_per_block x the distinct
// block columns of its rows + cost_per_item (its epilogue). n_tiles == 0 asks for no schedule
// (the kernel goes round robin), only the row groups below.
struct WorkRequest {
  int32_t rows_per_slot;
  int32_t n_tiles;
  int32_t ctas;
  int32_t cost_per_block;
  int32_t cost_per_item;
};
// Device arrays: CTA c runs items[begin[c]] .. items[begin[c + 1] - 1] in order, each item
// n_tile * slot_count + slot. With rows_per_slot > 1 also the slots' rows and merged block
// columns (src/matrix/group_columns.hpp): slot s holds block rows group_rows[s * rows_per_slot + i]
// (i < rows_per_slot, while the index is below the block row count) and has the (column, rows)
// pairs columns[2e], columns[2e + 1] for e in column_begin[s] .. column_begin[s + 1] - 1,
// ascending, bit i of rows for its row i; columns is 8-byte aligned.
struct WorkList {
  const int32_t* items;
  const int32_t* begin;
  const int32_t* column_begin;
  const uint32_t* columns;
  const int32_t* group_rows;
};
class WorkListSource {
 public:
  // Built and uploaded on the first request of each shape (ordered on `stream`), then cached.
  virtual WorkList get(const WorkRequest& request, void* stream) = 0;

 protected:
  ~WorkListSource() = default;
};

struct MatmulArgs {
  BsrView a;
  DenseCopy* a_dense;  // null: no dense copy for this call (the dense fallback declines)
  DenseView b;  // a.block_col_count * block_width rows
  DenseView c;  // a.block_row_count * block_height rows, b.cols cols
  double alpha;           // double, as the C ABI passes them: the f64 kernel needs every bit
  double beta;            // 0: C is only written
  const void* bias;       // per row of C, C's dtype, or null
  bsrmm_activation activation;
  bsrmm_f32_mode f32_mode;
  int device;
  void* stream;
  WorkListSource* work_lists;  // the matrix's balanced schedules; null: kernels go round robin
};

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

// Writes op(A) densely for the plan: `dst` (block_rows * block_height rows of block_cols *
// block_width elements, row-major, dtype) is zeroed, then receives every block at its place.
// Device arrays.
void densify_blocks(const int32_t* row_ptr, const int32_t* col_idx, const void* values,
                    int64_t block_rows, int64_t block_cols, int32_t block_height,
                    int32_t block_width, bsrmm_dtype dtype, void* dst, int device, void* stream);

// Writes the transposed matrix's values: dst block t = transpose(src block src_block[t]), each
// block_height x block_width source block becoming block_width x block_height. Device arrays.
void transpose_blocks(const void* src, void* dst, const int32_t* src_block, int64_t nnzb,
                      int32_t block_height, int32_t block_width, bsrmm_dtype dtype, int device,
                      void* stream);

}  // namespace bsrmm::cuda
