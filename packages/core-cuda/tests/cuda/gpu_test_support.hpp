// Shared by the GPU tests: random BSR problems drawn fresh for every run (BSRMM_TEST_SEED
// replays one), run through the C ABI on CUDA device 0 and checked element by element against
// a float64 reference. The skip without a GPU, device buffers and the dtype conversions come
// from tests/support/.
#pragma once

#include "../support/device_buffer.hpp"
#include "../support/gpu_presence.hpp"
#include "../support/host_arrays.hpp"

#include <bsrmm/bsrmm.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

namespace bsrmm::test {

// Expects `status` with a readable message; prints bsrmm_last_error() otherwise.
#define EXPECT_BSRMM(expected, call)                                                          \
  do {                                                                                        \
    bsrmm_status bsrmm_got = (call);                                                          \
    EXPECT_EQ(bsrmm_status_name(bsrmm_got), std::string(bsrmm_status_name(expected)))        \
        << #call << ": " << bsrmm_last_error();                                               \
  } while (0)
#define ASSERT_BSRMM(expected, call)                                                          \
  do {                                                                                        \
    bsrmm_status bsrmm_got = (call);                                                          \
    ASSERT_EQ(bsrmm_status_name(bsrmm_got), std::string(bsrmm_status_name(expected)))        \
        << #call << ": " << bsrmm_last_error();                                               \
  } while (0)

#define ASSERT_CUDA(call)                                                                 \
  do {                                                                                    \
    cudaError_t bsrmm_cuda_result = (call);                                               \
    ASSERT_EQ(bsrmm_cuda_result, cudaSuccess) << #call << ": "                            \
                                              << cudaGetErrorString(bsrmm_cuda_result);   \
  } while (0)

// Owning handles for the C objects: destroyed when they go, also when an ASSERT returns early.
struct ContextDeleter {
  void operator()(bsrmm_context_t ctx) const { bsrmm_context_destroy(ctx); }
};
struct MatrixDeleter {
  void operator()(bsrmm_matrix_t matrix) const { bsrmm_matrix_destroy(matrix); }
};
using ContextHandle = std::unique_ptr<bsrmm_context_s, ContextDeleter>;
using MatrixHandle = std::unique_ptr<bsrmm_matrix_s, MatrixDeleter>;

const char* dtype_label(bsrmm_dtype dtype);

// One multiply to run and check.
struct Problem {
  int64_t block_rows = 4;
  int64_t block_cols = 4;
  int32_t block_height = 16;
  int32_t block_width = 16;
  double density = 0.5;
  bool empty_rows = false;  // every third block row (and the last) holds no block
  int64_t n = 64;
  bsrmm_dtype dtype = BSRMM_DTYPE_F16;
  bsrmm_f32_mode f32_mode = BSRMM_F32_EXACT;
  bsrmm_layout b_layout = BSRMM_LAYOUT_ROW_MAJOR;
  bsrmm_layout c_layout = BSRMM_LAYOUT_ROW_MAJOR;
  // ld = (contiguous extent + pad) rounded up to a multiple of align: 8 keeps every row 16-byte
  // aligned (what the tensor-core kernels need); align 1 with an odd pad forbids it.
  int64_t b_ld_pad = 0;
  int64_t b_ld_align = 8;
  int64_t c_ld_pad = 0;
  int64_t c_ld_align = 8;
  int64_t b_offset = 0;  // B starts this many elements into its buffer (alignment tests)
  bsrmm_op op = BSRMM_OP_NONE;
  double alpha = 1.0;
  double beta = 0.0;
  bool bias = false;
  bsrmm_activation activation = BSRMM_ACTIVATION_NONE;
  std::string variant;        // forced, or "" for the heuristic
  bool device_arrays = false;  // BSR arrays handed over from device memory instead of the host
  bool borrow_values = false;  // with device_arrays: the matrix borrows them (a step's matrix)
  void* stream = nullptr;
  int32_t sm_budget = 0;  // bsrmm_context_set_sm_budget (0: every SM)

  std::string describe() const;
};

// A problem of `dtype` with its sizes given (block rows and columns, block sides, N, density)
// and every other field at its default.
Problem shaped_problem(bsrmm_dtype dtype, int64_t block_rows, int64_t block_cols, int32_t bh,
                       int32_t bw, int64_t n, double density);

struct Outcome {
  double relative_error = 0.0;  // Frobenius: |out - ref| / |ref|
  std::string variant;          // what ran (bsrmm_context_last_variant)
};

// The tolerance for the problem's dtype and f32 mode (PERF.md): f16 1e-3, bf16 1e-2,
// f32 exact 1e-5, tf32 1e-3, f64 1e-12.
double tolerance(const Problem& problem);

// Builds fresh random operands, runs bsrmm_matmul on CUDA device 0 with C poisoned beforehand
// (NaN, or random C when beta != 0, and NaN in the padding past each row/column), checks every
// element against the float64 reference (gtest failures name the first bad elements) and that
// padding is untouched, and returns the measured error. Uses ASSERT internally: callers check
// HasFatalFailure() if they go on.
Outcome run_and_check(const Problem& problem);

// The seed for this run: BSRMM_TEST_SEED if set, else drawn from std::random_device. Printed
// in every failure message so a failure can be replayed.
uint64_t test_seed();

// Whether device 0 runs the sm_90a kernels (compute capability 9.0); `why` says why not.
bool hopper(std::string* why);

}  // namespace bsrmm::test
