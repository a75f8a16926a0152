// B / C staged for the tensor cores (src/cuda/aligned_staging): forced by name on odd leading
// dimensions and shifted bases of B, of C and of both, both layouts, every dtype with a
// tensor-core kernel (f16, bf16, f32 / tf32, f64), the epilogue (beta over a random C, which must
// be copied in first; bias, activation), A^T; and on N not a multiple of 8 with aligned operands
// (padded to 8 for a row tile). C's padding must stay untouched (gpu_test_support checks it).
// And the heuristic's picks: numpy's row-major B of an odd N, a row-major B of N = 33 / 257.
// Each product against float64 with C poisoned first.
#include "gpu_test_support.hpp"

#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

const std::string kVariant = "cuda_aligned_staging";

int64_t element_bytes(bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_F64 ? 8 : dtype == BSRMM_DTYPE_F32 ? 4 : 2;
}

// The padding that leaves a leading dimension of `extent + pad` elements off a 16-byte step.
int64_t unaligned_pad(int64_t extent, bsrmm_dtype dtype, int64_t at_least) {
  int64_t pad = at_least;
  while (((extent + pad) * element_bytes(dtype)) % 16 == 0) ++pad;
  return pad;
}

TEST(AlignedStaging, UnalignedOperandsMatchFloat64) {
  BSRMM_REQUIRE_GPU();
  const std::vector<bsrmm_dtype> dtypes = {BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F32, BSRMM_DTYPE_F64};
  const std::vector<int64_t> widths = {33, 65, 257, 1025};
  int run = 0;
  for (const bsrmm_dtype dtype : dtypes) {
    for (const int64_t n : widths) {
      for (const int which : {0, 1, 2}) {  // B, C, both
        Problem problem = shaped_problem(dtype, 9, 7, 32, 32, n, 0.45);
        problem.variant = kVariant;
        problem.f32_mode = run % 2 ? BSRMM_F32_TF32 : BSRMM_F32_EXACT;
        problem.b_layout = run % 3 == 1 ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
        problem.c_layout = run % 4 == 2 ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
        problem.op = run % 7 == 4 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE;
        const bool transposed = problem.op == BSRMM_OP_TRANSPOSE;
        const int64_t m = transposed ? 7 * 32 : 9 * 32;  // op(A)'s rows
        if (which != 1) {  // B's base one element in: never 16-byte aligned
          problem.b_ld_align = 1;
          problem.b_ld_pad = run % 3;
          problem.b_offset = 1;
        }
        if (which != 0) {
          problem.c_ld_align = 1;
          problem.c_ld_pad = unaligned_pad(problem.c_layout == BSRMM_LAYOUT_ROW_MAJOR ? n : m, dtype, 1 + run % 5);
        }
        problem.beta = run % 3 == 0 ? 0.5 : 0.0;
        problem.alpha = run % 2 ? -1.5 : 1.0;
        problem.bias = run % 2 == 0;
        problem.activation = run % 5 == 3 ? BSRMM_ACTIVATION_SILU : BSRMM_ACTIVATION_NONE;
        problem.empty_rows = run % 2 == 1;
        ++run;
        SCOPED_TRACE(problem.describe());
        run_and_check(problem);  // checks that the forced variant ran, too
        if (HasFatalFailure()) return;
      }
    }
  }
}

// N not a multiple of 8 with aligned operands: B and C staged 8q + 8 wide for a Hopper row tile
// (both layouts of each, padded leading dimensions, the epilogue, A^T, blocks 64 and 128).
TEST(AlignedStaging, OddNPaddedToEightMatchesFloat64) {
  std::string why;
  if (!hopper(&why)) GTEST_SKIP() << why;
  int run = 0;
  for (const bsrmm_dtype dtype : {BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16}) {
    for (const int64_t n : {33, 100, 257, 1023}) {
      for (const int block : {64, 128}) {
        // Large enough that a row tile, not the narrow kernels or the dense fallback, takes the
        // staged problem (what the padded plan asks of it).
        Problem problem = shaped_problem(dtype, 16, 12, block, block, n, 0.3);
        problem.variant = kVariant;
        problem.b_layout = run % 2 ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
        problem.c_layout = run % 3 == 1 ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
        problem.b_ld_pad = 8 * (run % 3);
        problem.c_ld_pad = 8 * (run % 2);
        problem.op = run % 5 == 2 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE;
        problem.beta = run % 3 == 0 ? -0.5 : 0.0;
        problem.alpha = run % 2 ? 1.25 : 1.0;
        problem.bias = run % 2 == 0;
        problem.activation = run % 4 == 1 ? BSRMM_ACTIVATION_GELU : BSRMM_ACTIVATION_NONE;
        problem.empty_rows = run % 3 == 2;
        ++run;
        SCOPED_TRACE(problem.describe());
        run_and_check(problem);  // checks that the forced variant ran, too
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Untuned, an N of 33..1023 not a multiple of 8 with a row-major B runs staged on a row tile
// (sm80's row-major B kernels took it 2-3x slower); with torch's layout below N = 256 only
// (perf-log 103), and not where one column is left over from N = 128 (the column tail's).
TEST(AlignedStaging, IsTheHeuristicsPickForOddNBelowTheColumnTail) {
  std::string why;
  if (!hopper(&why)) GTEST_SKIP() << why;
  struct Case {
    bsrmm_layout layout;
    int64_t n;
    bool staged;
  };
  for (const Case c : {Case{BSRMM_LAYOUT_ROW_MAJOR, 33, true}, Case{BSRMM_LAYOUT_ROW_MAJOR, 257, true},
                       Case{BSRMM_LAYOUT_COL_MAJOR, 33, true}, Case{BSRMM_LAYOUT_COL_MAJOR, 199, true},
                       Case{BSRMM_LAYOUT_COL_MAJOR, 129, false}, Case{BSRMM_LAYOUT_COL_MAJOR, 263, false}}) {
    Problem problem = shaped_problem(BSRMM_DTYPE_BF16, 48, 48, 64, 64, c.n, 0.25);
    problem.b_layout = problem.c_layout = c.layout;
    SCOPED_TRACE(problem.describe());
    const Outcome outcome = run_and_check(problem);
    if (HasFatalFailure()) return;
    EXPECT_EQ(outcome.variant == kVariant, c.staged) << outcome.variant;
  }
}

// numpy's B of an odd N is row-major with ld = N: untuned, it is staged for the tensor cores
// instead of running on the generic kernel or the unaligned dense GEMM.
TEST(AlignedStaging, IsTheHeuristicsPickForARowMajorBOfOddN) {
  BSRMM_REQUIRE_GPU();
  for (const bsrmm_dtype dtype : {BSRMM_DTYPE_BF16, BSRMM_DTYPE_F32}) {
    Problem problem = shaped_problem(dtype, 16, 16, 64, 64, 2049, 0.25);
    problem.b_ld_align = 1;
    problem.c_ld_align = 1;
    SCOPED_TRACE(problem.describe());
    const Outcome outcome = run_and_check(problem);
    if (HasFatalFailure()) return;
    EXPECT_EQ(outcome.variant, kVariant);
  }
}

}  // namespace
}  // namespace bsrmm::test
