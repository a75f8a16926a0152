// Shared by the GPU tests: a skip when no GPU is usable, device buffers, random BSR problems
// drawn fresh for every run (BSRMM_TEST_SEED replays one), the float64 reference, and the
// comparison that checks every element of C. Everything goes through the C ABI.
#pragma once

#include <bsrmm/bsrmm.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace bsrmm::test {

// Skips the calling test (GTEST_SKIP) with bsrmm's reason when no CUDA device is usable.
#define BSRMM_REQUIRE_GPU()                                                         \
  do {                                                                              \
    std::string bsrmm_why;                                                          \
    if (!::bsrmm::test::gpu_available(&bsrmm_why)) GTEST_SKIP() << bsrmm_why;       \
  } while (0)

bool gpu_available(std::string* why);
int gpu_count();

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

// cudaMalloc'd bytes, freed on scope exit. Sized exactly, so reads past the end are caught by
// compute-sanitizer.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes, int device = 0);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes) const;

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = 0;
};

std::size_t dtype_size(bsrmm_dtype dtype);
const char* dtype_label(bsrmm_dtype dtype);
// Encodes `value` (already representable) into `out` as dtype's bits.
void encode(double value, bsrmm_dtype dtype, void* out);
double decode(const void* in, bsrmm_dtype dtype);
// The nearest value of dtype: inputs are drawn in float64, rounded, and the reference uses the
// rounded values, so the comparison measures the kernel's arithmetic, not the input rounding.
double round_to(double value, bsrmm_dtype dtype);
// A quiet NaN of dtype, to poison outputs.
void poison(bsrmm_dtype dtype, void* out);

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
  void* stream = nullptr;

  std::string describe() const;
};

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

}  // namespace bsrmm::test
