// cpu_rowwise_simd (src/cpu/rowwise*): against float64 on fresh random operands with a
// NaN-poisoned C (and NaN in B's and C's padding): every block height it takes (1-8, odd widths
// too), N from 1 to 130 (partial vectors, one chunk and several), every dtype, B and C in both
// layouts with ld above the minimum, beta != 0 with bias and an activation, empty block rows;
// one thread and the pool; products small enough to run on the calling thread and large enough
// to split. Taller blocks, a multiple of 8 high, run in 8-row bands (any width); other heights
// over 8 and CPUs without AVX-512 (skipped there) are declined.
#include "../../src/common/error.hpp"
#include "../../src/common/thread_pool.hpp"
#include "../../src/cpu/rowwise.hpp"
#include "../../src/device/buffer.hpp"
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"
#include "cpu_test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace bsrmm::test {
namespace {

struct Case {
  int32_t bh, bw;
  int64_t block_rows, block_cols;
  double density;
};

void check_product(const Case& shape, int64_t n, bsrmm_dtype dtype, uint64_t seed, detail::ThreadPool& pool,
                   detail::Buffer& workspace) {
  const bool epilogue = seed % 3 == 0;
  Random rng(seed);
  HostBsr a = random_bsr(rng, shape.block_rows, shape.block_cols, shape.bh, shape.bw, shape.density, dtype);
  const bsrmm_layout b_layout = seed % 2 ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR;
  HostDense b(a.cols, n, dtype, b_layout, seed % 5 == 0 ? 0 : 3);
  fill_random(b, rng);
  HostDense c(a.rows, n, dtype, seed % 4 < 2 ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR, 2);
  const HostBias bias = random_bias(a.rows, dtype, rng);
  if (epilogue) fill_random(c, rng);
  const HostDense c_before = c;
  CpuOperands operands(a, b, c);
  cpu::MatmulArgs& args = operands.args;
  if (epilogue) {
    args.alpha = -1.25;
    args.beta = 0.5;
    args.bias = bias.bytes.data();
    args.activation = seed % 2 ? BSRMM_ACTIVATION_GELU : BSRMM_ACTIVATION_RELU;
  } else if (seed % 7 == 0) {
    args.alpha = 2.0;
    args.beta = -0.75;  // beta alone: the fast store's read of C
    fill_random(c, rng);
  }
  const HostDense c_start = c;
  cpu::matmul_rowwise(args, pool, workspace);
  const std::string what = "dtype " + std::to_string(dtype) + " b" + std::to_string(shape.bh) + "x" +
                           std::to_string(shape.bw) + " rows " + std::to_string(a.rows) + " n " +
                           std::to_string(n) + " threads " + std::to_string(pool.size()) + " seed " +
                           std::to_string(seed);
  expect_matches(c,
                 reference_matmul(a.to_dense(), a.rows, a.cols, BSRMM_OP_NONE, b, c_start, args.alpha,
                                  args.beta, args.bias ? &bias.values : nullptr, args.activation),
                 what);
  EXPECT_TRUE(c.padding_untouched()) << what;
  (void)c_before;
}

bool has_rowwise() { return cpu::rowwise_kernels() != nullptr; }

TEST(Rowwise, MatchesFloat64) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  const bsrmm_dtype dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};
  const Case shapes[] = {{1, 1, 37, 41, 0.2}, {2, 2, 23, 19, 0.3}, {3, 3, 17, 13, 0.3}, {4, 4, 9, 11, 0.4},
                         {6, 6, 7, 6, 0.5},   {8, 8, 5, 6, 0.5},   {3, 5, 11, 7, 0.4},  {5, 3, 7, 11, 0.4},
                         {1, 4, 29, 9, 0.3},  {8, 2, 5, 17, 0.4},  {7, 9, 4, 5, 0.6},   {2, 1, 19, 31, 0.2}};
  detail::ThreadPool one(1), two(2);
  detail::Buffer workspace;
  int checked = 0;
  uint64_t seed = 1;
  for (bsrmm_dtype dtype : dtypes)
    for (const Case& shape : shapes)
      for (int64_t n : {1, 2, 3, 5, 8, 15, 16, 17, 31, 33, 48, 64, 65, 100, 130}) {
        check_product(shape, n, dtype, seed, seed % 2 ? one : two, workspace);
        ++seed;
        ++checked;
      }
  std::printf("[ rowwise] %d products checked\n", checked);
}

// Large enough to split across the pool (work above the inline limit), with empty block rows
// (density 0.05) and a skewed row length.
TEST(Rowwise, SplitAcrossThePool) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  detail::ThreadPool pool(3);
  detail::Buffer workspace;
  uint64_t seed = 500;
  for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F64})
    for (const Case& shape : {Case{1, 1, 1200, 1200, 0.01}, Case{2, 2, 500, 500, 0.05}, Case{4, 4, 160, 120, 0.1}})
      for (int64_t n : {2, 16, 40, 130}) check_product(shape, n, dtype, seed++, pool, workspace);
}

// Blocks taller than 8 run in 8-row bands: widths 8 and 16 unrolled, 24 and 64 in steps of 8, 5
// and 12 at run time; one band per chunk and several chunks (N 130), one thread and the pool.
TEST(Rowwise, TallBlocksRunInBands) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  detail::Buffer workspace;
  uint64_t seed = 700;
  const Case shapes[] = {{16, 16, 5, 7, 0.4}, {16, 8, 4, 9, 0.4}, {24, 64, 3, 3, 0.6},
                         {16, 5, 4, 11, 0.4}, {32, 12, 3, 5, 0.5}, {16, 64, 3, 2, 0.7}};
  for (int32_t threads : {1, 2}) {
    detail::ThreadPool pool(threads);
    for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64})
      for (const Case& shape : shapes)
        for (int64_t n : {1, 2, 17, 32, 64, 130}) check_product(shape, n, dtype, seed++, pool, workspace);
  }
  detail::ThreadPool pool(2);
  for (int64_t n : {16, 64}) check_product({16, 16, 300, 300, 0.05}, n, BSRMM_DTYPE_F64, seed++, pool, workspace);
}

// The heuristic takes rowwise in bands at N 2-64 only with AVX-512 (blocked at N = 1 and above
// 64); the AVX2 build's narrower chunks only where the block is at most 32 wide and width x N is
// at most 256.
TEST(Rowwise, TallBlocksAreTheHeuristicsPickFromN2To64) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  const bool avx2 = cpu::rowwise_kernels() == cpu::rowwise_kernels_avx2();
  Random rng(31);
  for (auto [bh, bw] : {std::pair<int32_t, int32_t>{16, 16}, {32, 8}, {12, 12}, {8, 8}, {16, 64}, {32, 32}})
    for (int64_t n : {1, 2, 4, 16, 32, 64, 65, 128}) {
      HostBsr a = random_bsr(rng, 3, 3, bh, bw, 0.5, BSRMM_DTYPE_F32);
      HostDense b(a.cols, n, BSRMM_DTYPE_F32);
      b.fill(1.0);
      HostDense c(a.rows, n, BSRMM_DTYPE_F32);
      CpuOperands operands(a, b, c);
      const bool banded = bh > 8 && bh % 8 == 0;
      const bool in_range = avx2 ? bw <= 32 && bw * n <= 256 : n <= 64;
      const std::string what = std::to_string(bh) + "x" + std::to_string(bw) + " N " + std::to_string(n);
      if (bh > 8) EXPECT_EQ(cpu::rowwise_preferred(operands.args), banded && n >= 2 && in_range) << what;
      if (bh == 8) EXPECT_EQ(cpu::rowwise_preferred(operands.args), n >= 2) << what;
    }
}

// The AVX2 build leaves tiny blocks to the blocked variant where a block row's B rows outgrow L2
// over several chunks (a power-law row); AVX-512's wider chunks keep them, as does N <= 16.
TEST(Rowwise, Avx2DeclinesRowsWhoseBRowsOutgrowL2) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  const bool avx2 = cpu::rowwise_kernels() == cpu::rowwise_kernels_avx2();
  Random rng(37);
  HostBsr a = random_bsr(rng, 8, 8, 2, 2, 0.5, BSRMM_DTYPE_F64);
  for (int64_t n : {16, 128, 256}) {
    HostDense b(a.cols, n, BSRMM_DTYPE_F64);
    b.fill(1.0);
    HostDense c(a.rows, n, BSRMM_DTYPE_F64);
    CpuOperands operands(a, b, c);
    EXPECT_TRUE(cpu::rowwise_preferred(operands.args)) << "N " << n << ", longest row unknown";
    operands.args.a.max_row_blocks = 8;
    EXPECT_TRUE(cpu::rowwise_preferred(operands.args)) << "N " << n << ", rows of 8 blocks";
    operands.args.a.max_row_blocks = 4096;  // 4096 x 2 x N x 8 bytes: 1 MiB from N = 8
    EXPECT_EQ(cpu::rowwise_preferred(operands.args), !avx2 || n <= 16) << "N " << n << ", a 4096-block row";
  }
}

TEST(Rowwise, DeclinesTallBlocksNotInBands) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  Random rng(9);
  for (int32_t height : {9, 12, 20}) {
    HostBsr a = random_bsr(rng, 3, 3, height, 2, 0.5, BSRMM_DTYPE_F32);
    HostDense b(a.cols, 4, BSRMM_DTYPE_F32);
    b.fill(1.0);
    HostDense c(a.rows, 4, BSRMM_DTYPE_F32);
    CpuOperands operands(a, b, c);
    detail::ThreadPool pool(1);
    detail::Buffer workspace;
    EXPECT_FALSE(cpu::rowwise_refusal(operands.args).empty());
    EXPECT_FALSE(cpu::rowwise_preferred(operands.args));
    try {
      cpu::matmul_rowwise(operands.args, pool, workspace);
      ADD_FAILURE() << height << "-high blocks ran";
    } catch (const detail::Error& error) {
      EXPECT_EQ(error.status(), BSRMM_STATUS_UNSUPPORTED);
      EXPECT_NE(std::string(error.what()).find("a multiple of 8 high"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace bsrmm::test
