// The tiny-block tensor-core variants (src/cuda/sm80/tiny_block_kernel.cuh) forced by name:
// blocks 1-16 high and up to 64 wide with a side under 16 (powers of two or not: the slots of
// a block are padded to a power of two), N from 1 past one warp's 64 tokens, an N not a
// multiple of 8 (zero-filled copies past N), padded B rows, either layout of C, long, empty
// and skewed block rows, the epilogue, op(A) = A^T. Each product is checked against float64
// with C poisoned first (gpu_test_support).
#include "gpu_test_support.hpp"

#include <string>
#include <tuple>
#include <vector>

namespace bsrmm::test {
namespace {

struct Shape {
  int32_t height;
  int32_t width;
};

class TinyBlockMma : public ::testing::TestWithParam<bsrmm_dtype> {
 protected:
  std::string variant() const {
    return "sm80_" + std::string(dtype_label(GetParam())) + "_tinyblock_mma16816";
  }
};

TEST_P(TinyBlockMma, ShapesAndWidthsMatchFloat64) {
  BSRMM_REQUIRE_GPU();
  const std::vector<Shape> shapes = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 3}, {6, 6}, {7, 5}, {8, 8},
                                     {12, 12}, {16, 8}, {3, 8}, {2, 16}, {8, 40}, {1, 64}};
  const std::vector<int64_t> widths = {1, 7, 16, 17, 32, 40, 64, 130, 300};
  int run = 0;
  for (const Shape& shape : shapes) {
    for (int64_t n : widths) {
      Problem problem = shaped_problem(GetParam(), 9, shape.width >= 40 ? 5 : 13, shape.height, shape.width, n, 0.45);
      problem.variant = variant();
      problem.empty_rows = run % 3 == 0;
      problem.b_ld_pad = run % 4 == 2 ? 8 : 0;  // B's rows stay 16-byte aligned (the kernel's copies)
      problem.c_layout = run % 3 == 1 ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
      problem.c_ld_pad = run % 5 == 3 ? 3 : 0;
      problem.c_ld_align = run % 5 == 3 ? 1 : 8;
      problem.beta = run % 4 == 1 ? 0.5 : 0.0;
      problem.alpha = run % 3 == 2 ? -1.25 : 1.0;
      problem.bias = run % 2 == 0;
      problem.activation = run % 6 == 4 ? BSRMM_ACTIVATION_GELU : BSRMM_ACTIVATION_NONE;
      ++run;
      SCOPED_TRACE(problem.describe());
      const Outcome outcome = run_and_check(problem);
      if (HasFatalFailure()) return;
      EXPECT_EQ(outcome.variant, problem.variant);
    }
  }
}

TEST_P(TinyBlockMma, LongSkewedRowsAndTransposeMatchFloat64) {
  BSRMM_REQUIRE_GPU();
  for (int64_t n : {int64_t(5), int64_t(64), int64_t(200)}) {
    // Rows of ~270 blocks: many k steps, both stages of the copies in turn.
    Problem dense_rows = shaped_problem(GetParam(), 6, 300, 4, 4, n, 0.9);
    dense_rows.variant = variant();
    dense_rows.empty_rows = true;
    SCOPED_TRACE(dense_rows.describe());
    run_and_check(dense_rows);
    if (HasFatalFailure()) return;
    // op(A) = A^T of 3 x 8 blocks: the plan's A^T has 8 x 3 blocks.
    Problem transposed = shaped_problem(GetParam(), 11, 7, 3, 8, n, 0.5);
    transposed.variant = variant();
    transposed.op = BSRMM_OP_TRANSPOSE;
    transposed.beta = 0.25;
    SCOPED_TRACE(transposed.describe());
    run_and_check(transposed);
    if (HasFatalFailure()) return;
  }
}

// Untuned, the mma kernel runs f16 / bf16 blocks from 4 rows high at N >= 16; 1-3 rows, fewer
// columns, other dtypes and B it cannot copy stay with the narrow kernels.
TEST(TinyBlockHeuristic, PicksTheMmaKernelFromFourRowsAndSixteenColumns) {
  BSRMM_REQUIRE_GPU();
  Problem problem = shaped_problem(BSRMM_DTYPE_BF16, 40, 40, 8, 8, 64, 0.1);
  EXPECT_EQ(run_and_check(problem).variant, "sm80_bf16_tinyblock_mma16816");
  problem.dtype = BSRMM_DTYPE_F16;
  problem.block_height = 4;
  problem.block_width = 6;
  problem.n = 16;
  EXPECT_EQ(run_and_check(problem).variant, "sm80_f16_tinyblock_mma16816");
  for (const auto& [dtype, height, n] : {std::tuple{BSRMM_DTYPE_BF16, 1, int64_t(64)},
                                        std::tuple{BSRMM_DTYPE_BF16, 3, int64_t(64)},
                                        std::tuple{BSRMM_DTYPE_BF16, 8, int64_t(8)},
                                        std::tuple{BSRMM_DTYPE_F32, 8, int64_t(64)}}) {
    // d 0.05: at 0.1 a 1x8 bf16 block at N = 64 is past four times the dense GEMM's break-even
    // (0.093), where the dense fallback is the default (dense_fallback/heuristic.hpp).
    Problem other = shaped_problem(dtype, 40, 40, height, 8, n, 0.05);
    SCOPED_TRACE(other.describe());
    EXPECT_EQ(run_and_check(other).variant.rfind("narrow_", 0), 0u);
  }
  Problem column_major_b = shaped_problem(BSRMM_DTYPE_BF16, 40, 40, 8, 8, 64, 0.1);
  column_major_b.b_layout = BSRMM_LAYOUT_COL_MAJOR;
  EXPECT_EQ(run_and_check(column_major_b).variant.rfind("narrow_", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, TinyBlockMma, ::testing::Values(BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16),
                         [](const ::testing::TestParamInfo<bsrmm_dtype>& info) {
                           return std::string(dtype_label(info.param));
                         });

}  // namespace
}  // namespace bsrmm::test
