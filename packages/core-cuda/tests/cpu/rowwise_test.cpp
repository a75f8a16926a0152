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

// A against float64 with B and C in the layouts and epilogue the seed picks. panel_min_b_rows:
// the walk's threshold (rowwise_panels.hpp), -1 for the variant's own choice.
void check_matrix(const HostBsr& a, int64_t n, uint64_t seed, detail::ThreadPool& pool, detail::Buffer& workspace,
                  int64_t panel_min_b_rows = -1) {
  const bsrmm_dtype dtype = a.dtype;
  const bool epilogue = seed % 3 == 0;
  Random rng(seed * 7919 + 1);
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
  if (panel_min_b_rows < 0) {
    cpu::matmul_rowwise(args, pool, workspace);
  } else {
    cpu::matmul_rowwise(args, pool, workspace, panel_min_b_rows);
  }
  const std::string what = "dtype " + std::to_string(dtype) + " b" + std::to_string(a.block_height) + "x" +
                           std::to_string(a.block_width) + " rows " + std::to_string(a.rows) + " n " +
                           std::to_string(n) + " threads " + std::to_string(pool.size()) + " seed " +
                           std::to_string(seed) + " panels from " + std::to_string(panel_min_b_rows);
  expect_matches(c,
                 reference_matmul(a.to_dense(), a.rows, a.cols, BSRMM_OP_NONE, b, c_start, args.alpha,
                                  args.beta, args.bias ? &bias.values : nullptr, args.activation),
                 what);
  EXPECT_TRUE(c.padding_untouched()) << what;
  (void)c_before;
}

void check_product(const Case& shape, int64_t n, bsrmm_dtype dtype, uint64_t seed, detail::ThreadPool& pool,
                   detail::Buffer& workspace, int64_t panel_min_b_rows = -1) {
  Random rng(seed);
  const HostBsr a = random_bsr(rng, shape.block_rows, shape.block_cols, shape.bh, shape.bw, shape.density, dtype);
  check_matrix(a, n, seed, pool, workspace, panel_min_b_rows);
}

// A power-law-like pattern: block row 0 holds every block column, row r about 1 / (r + 1) of them.
HostBsr skewed_bsr(Random& rng, int64_t block_rows, int64_t block_cols, int32_t bh, int32_t bw, bsrmm_dtype dtype) {
  HostBsr m;
  m.rows = block_rows * bh;
  m.cols = block_cols * bw;
  m.block_height = bh;
  m.block_width = bw;
  m.dtype = dtype;
  for (int64_t r = 0; r < block_rows; ++r) {
    for (int64_t c = 0; c < block_cols; ++c)
      if (rng.chance(1.0 / static_cast<double>(r + 1))) m.col_idx.push_back(c);
    m.row_ptr.push_back(m.nnzb());
  }
  m.values.resize(static_cast<size_t>(m.nnzb() * m.block_elements()) * dtype_size(dtype));
  for (int64_t p = 0; p < m.nnzb(); ++p)
    for (int32_t i = 0; i < bh; ++i)
      for (int32_t j = 0; j < bw; ++j) m.set_value(p, i, j, round_to(dtype, rng.uniform(-1, 1)));
  return m;
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
      for (int64_t n : {1, 2, 3, 5, 6, 8, 15, 16, 17, 22, 31, 33, 48, 64, 65, 100, 130}) {
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

// The panel walk (rowwise_panels.hpp), forced on every block row with blocks (threshold 1) and on
// the longer ones only (12 B rows): every dtype, heights 1-8 and odd widths, N over several
// chunks and several panels (300: 3 panels of 8x8 f64), rows over several groups of blocks, empty
// rows (density 0.05), every epilogue and layout the seeds pick, one thread and two.
TEST(Rowwise, PanelWalkMatchesFloat64) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  const Case shapes[] = {{1, 1, 23, 300, 0.2}, {2, 2, 17, 90, 0.4}, {3, 3, 9, 60, 0.5}, {4, 4, 9, 40, 0.3},
                         {8, 8, 5, 30, 0.6},   {3, 5, 7, 40, 0.4},  {2, 1, 19, 90, 0.05}};
  uint64_t seed = 900;
  int checked = 0;
  for (int32_t threads : {1, 2}) {
    detail::ThreadPool pool(threads);
    detail::Buffer workspace;
    for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64})
      for (const Case& shape : shapes)
        for (int64_t n : {17, 40, 130, 300})
          for (int64_t panel_rows : {1, 12}) {
            check_product(shape, n, dtype, seed++, pool, workspace, panel_rows);
            ++checked;
          }
  }
  std::printf("[ rowwise] %d products checked in panels\n", checked);
}

// Skewed rows (one block row holds every block column) in f64 2x2 at N = 1, 3 and 256, the walk
// the variant chooses: at N = 256 B is 9 MiB, over the panel walk's threshold, so on AVX2 the
// long rows walk in panels and the short ones chunk by chunk.
TEST(Rowwise, SkewedRowsMatchFloat64) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  const bool avx2 = cpu::rowwise_kernels() == cpu::rowwise_kernels_avx2();
  Random rng(41);
  const HostBsr a = skewed_bsr(rng, 48, 2304, 2, 2, BSRMM_DTYPE_F64);
  detail::ThreadPool pool(2);
  detail::Buffer workspace;
  uint64_t seed = 1000;
  for (int64_t n : {1, 3, 256}) {
    HostDense b(a.cols, n, BSRMM_DTYPE_F64);
    HostDense c(a.rows, n, BSRMM_DTYPE_F64);
    CpuOperands operands(a, b, c);
    EXPECT_EQ(cpu::rowwise_panel_min_b_rows(operands.args) > 0, avx2 && n == 256) << "N " << n;
    for (int round = 0; round < 2; ++round) check_matrix(a, n, seed++, pool, workspace);
  }
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
// at most 256, except f64 16 wide (N up to 128).
TEST(Rowwise, TallBlocksAreTheHeuristicsPickFromN2To64) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  const bool avx2 = cpu::rowwise_kernels() == cpu::rowwise_kernels_avx2();
  Random rng(31);
  for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F64})
    for (auto [bh, bw] : {std::pair<int32_t, int32_t>{16, 16}, {32, 8}, {12, 12}, {8, 8}, {16, 64}, {32, 32}})
      for (int64_t n : {1, 2, 4, 16, 32, 33, 64, 65, 128, 129}) {
        HostBsr a = random_bsr(rng, 3, 3, bh, bw, 0.5, dtype);
        HostDense b(a.cols, n, dtype);
        b.fill(1.0);
        HostDense c(a.rows, n, dtype);
        CpuOperands operands(a, b, c);
        const bool banded = bh > 8 && bh % 8 == 0;
        const bool f64_16_wide = dtype == BSRMM_DTYPE_F64 && bw == 16;
        const bool avx2_range = f64_16_wide ? n <= 128 : bw <= 32 && bw * n <= 256;
        const bool in_range = avx2 ? avx2_range : n <= 64;
        const std::string what = std::string(dtype == BSRMM_DTYPE_F64 ? "f64 " : "f32 ") + std::to_string(bh) +
                                 "x" + std::to_string(bw) + " N " + std::to_string(n);
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

// ... except where B is out of cache (over 8 MiB) and the long rows walk in panels on AVX2.
TEST(Rowwise, Avx2TakesLongRowsThatWalkInPanels) {
  if (!has_rowwise()) GTEST_SKIP() << "cpu_rowwise_simd needs AVX2 with FMA or AVX-512 (absent here)";
  if (cpu::rowwise_kernels() != cpu::rowwise_kernels_avx2()) GTEST_SKIP() << "the panel walk is the AVX2 build's";
  Random rng(43);
  HostBsr a = random_bsr(rng, 4, 4096, 2, 2, 0.001, BSRMM_DTYPE_F64);  // K = 8192
  for (int64_t n : {128, 256}) {
    HostDense b(a.cols, n, BSRMM_DTYPE_F64);
    HostDense c(a.rows, n, BSRMM_DTYPE_F64);
    CpuOperands operands(a, b, c);
    operands.args.a.max_row_blocks = 4096;
    // N = 128: B is 8 MiB, cached enough for the chunk walk, so the blocked variant; 256: 16 MiB.
    EXPECT_EQ(cpu::rowwise_preferred(operands.args), n == 256) << "N " << n;
    operands.args.a.max_row_blocks = 8;  // 16 B rows: short rows, no panels, and within L2
    EXPECT_TRUE(cpu::rowwise_preferred(operands.args)) << "N " << n << ", rows of 8 blocks";
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
