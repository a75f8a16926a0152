// The sm90 split for N not a multiple of 8 (src/cuda/column_tail): forced by name on row tiles'
// block shapes with N = 8q + 1..7, both layouts of B and C (torch's column-major pair
// included), padded leading dimensions, the epilogue (alpha, beta over a random C, bias,
// activation), empty block rows and A^T; and the heuristic's pick where it applies. Each
// product is checked against float64 with C poisoned first (gpu_test_support). Skips unless
// device 0 runs the sm_90a kernels.
#include "gpu_test_support.hpp"

#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

const std::string kVariant = "sm90_columns_of_8_then_tail";

struct Case {
  bsrmm_dtype dtype;
  int32_t block;
  int64_t n;
  bsrmm_layout b_layout;
  bsrmm_layout c_layout;
};

TEST(ColumnTail, ColumnsPastAMultipleOfEightMatchFloat64) {
  std::string why;
  if (!hopper(&why)) GTEST_SKIP() << why;
  const bsrmm_layout row = BSRMM_LAYOUT_ROW_MAJOR, col = BSRMM_LAYOUT_COL_MAJOR;
  const std::vector<Case> cases = {
      {BSRMM_DTYPE_BF16, 64, 65, row, row},   {BSRMM_DTYPE_F16, 64, 71, row, row},
      {BSRMM_DTYPE_BF16, 64, 263, col, col},  {BSRMM_DTYPE_F16, 64, 1031, col, col},
      {BSRMM_DTYPE_BF16, 128, 127, row, row}, {BSRMM_DTYPE_F16, 128, 517, col, col},
      {BSRMM_DTYPE_F16, 32, 97, row, row},    {BSRMM_DTYPE_BF16, 16, 333, row, row},
  };
  int run = 0;
  for (const Case& c : cases) {
    Problem problem = shaped_problem(c.dtype, 512 / c.block + 1, 1024 / c.block, c.block, c.block, c.n, 0.4);
    problem.variant = kVariant;
    problem.b_layout = c.b_layout;
    problem.c_layout = c.c_layout;
    problem.empty_rows = run % 2 == 1;
    problem.b_ld_pad = run % 3 == 1 ? 8 : 0;
    problem.c_ld_pad = run % 3 == 2 ? 16 : 0;
    problem.alpha = run % 2 ? -0.75 : 1.0;
    problem.beta = run % 4 == 1 ? 0.5 : 0.0;
    problem.bias = run % 3 == 0;
    problem.activation = run % 4 == 2 ? BSRMM_ACTIVATION_GELU : BSRMM_ACTIVATION_NONE;
    ++run;
    SCOPED_TRACE(problem.describe());
    const Outcome outcome = run_and_check(problem);
    if (HasFatalFailure()) return;
    EXPECT_EQ(outcome.variant, kVariant);
  }
}

TEST(ColumnTail, TransposedAMatchesFloat64) {
  std::string why;
  if (!hopper(&why)) GTEST_SKIP() << why;
  for (const int64_t n : {67, 300}) {
    Problem problem = shaped_problem(BSRMM_DTYPE_BF16, 12, 7, 64, 64, n, 0.45);
    problem.op = BSRMM_OP_TRANSPOSE;
    problem.variant = kVariant;
    problem.bias = n == 67;
    SCOPED_TRACE(problem.describe());
    const Outcome outcome = run_and_check(problem);
    if (HasFatalFailure()) return;
    EXPECT_EQ(outcome.variant, kVariant);
  }
}

// Untuned, a row-tile problem of N = 8q + r goes to the split, not to the sm80 kernels.
TEST(ColumnTail, IsTheHeuristicsPickForRowTilesPastAMultipleOfEight) {
  std::string why;
  if (!hopper(&why)) GTEST_SKIP() << why;
  for (const bsrmm_layout layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
    Problem problem = shaped_problem(BSRMM_DTYPE_BF16, 16, 16, 64, 64, 2049, 0.25);
    problem.b_layout = problem.c_layout = layout;
    SCOPED_TRACE(problem.describe());
    const Outcome outcome = run_and_check(problem);
    if (HasFatalFailure()) return;
    EXPECT_EQ(outcome.variant, kVariant);
  }
}

// Torch's layout with one column past a multiple of 8, from kOneColumnFrom: the split is the
// untuned pick (a one-column tail is one read of A), where a row-major B, or more columns,
// keep the staged call or sm80 (perf-log 103).
TEST(ColumnTail, IsTheHeuristicsPickForOneColumnOfTorchsLayout) {
  std::string why;
  if (!hopper(&why)) GTEST_SKIP() << why;
  for (const int64_t n : {129, 257, 263}) {
    for (const bsrmm_layout layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
      Problem problem = shaped_problem(BSRMM_DTYPE_BF16, 48, 48, 64, 64, n, 0.25);
      problem.b_layout = problem.c_layout = layout;
      SCOPED_TRACE(problem.describe());
      const Outcome outcome = run_and_check(problem);
      if (HasFatalFailure()) return;
      const bool one_column_of_torchs_layout = n % 8 == 1 && layout == BSRMM_LAYOUT_COL_MAJOR;
      EXPECT_EQ(outcome.variant == kVariant, one_column_of_torchs_layout) << outcome.variant;
    }
  }
}

}  // namespace
}  // namespace bsrmm::test
