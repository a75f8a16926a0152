// The problem key: sizes and densities bucket to powers of two, everything that changes the
// winner changes the key, and the shape is read correctly off real operands.
#include "tune/problem_key.hpp"

#include "../support/host_arrays.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bsrmm::tuner {
namespace {

ProblemShape base_shape() {
  ProblemShape s;
  s.arch = "sm_90";
  s.dtype = BSRMM_DTYPE_F16;
  s.block_height = s.block_width = 64;
  s.m = s.k = 8192;
  s.n = 4096;
  s.block_rows = s.block_cols = 128;
  s.nnzb = 128 * 128 / 8;
  s.max_row_blocks = 16;
  s.aligned = true;
  return s;
}

const std::vector<std::string> labels{"sm90_a", "sm80_b", "generic_c"};

TEST(ProblemKey, SizesBucketToPowersOfTwo) {
  EXPECT_EQ(size_bucket(0), 1);
  EXPECT_EQ(size_bucket(1), 1);
  EXPECT_EQ(size_bucket(3), 4);
  EXPECT_EQ(size_bucket(4096), 4096);
  EXPECT_EQ(size_bucket(4097), 8192);
  ProblemShape a = base_shape(), b = base_shape();
  b.n = 3000;  // same bucket as 4096
  EXPECT_EQ(problem_key(a, labels), problem_key(b, labels));
  b.n = 4097;
  EXPECT_NE(problem_key(a, labels), problem_key(b, labels));
}

TEST(ProblemKey, DensityAndSkewBuckets) {
  ProblemShape s = base_shape();
  EXPECT_EQ(density_exponent(s), -3);
  s.nnzb = s.block_rows * s.block_cols;
  EXPECT_EQ(density_exponent(s), 0);
  s.nnzb = 0;
  EXPECT_EQ(density_exponent(s), -99);
  EXPECT_EQ(skew_exponent(s), 0);

  s = base_shape();  // 16 blocks in every row
  EXPECT_EQ(skew_exponent(s), 0);
  s.max_row_blocks = 64;  // one row 4x the mean
  EXPECT_EQ(skew_exponent(s), 2);
  s.max_row_blocks = 18;  // random variation around a uniform mean stays in bucket 0
  EXPECT_EQ(skew_exponent(s), 0);
}

TEST(ProblemKey, EveryFieldThatChangesTheWinnerChangesTheKey) {
  const std::string base = problem_key(base_shape(), labels);
  const std::vector<std::pair<const char*, std::function<void(ProblemShape&)>>> changes{
      {"arch", [](ProblemShape& s) { s.arch = "sm_80"; }},
      {"dtype", [](ProblemShape& s) { s.dtype = BSRMM_DTYPE_BF16; }},
      {"op", [](ProblemShape& s) { s.op_a = BSRMM_OP_TRANSPOSE; }},
      {"B layout", [](ProblemShape& s) { s.b_layout = BSRMM_LAYOUT_COL_MAJOR; }},
      {"C layout", [](ProblemShape& s) { s.c_layout = BSRMM_LAYOUT_COL_MAJOR; }},
      {"block", [](ProblemShape& s) { s.block_width = 32; }},
      {"m", [](ProblemShape& s) { s.m = 100; }},
      {"k", [](ProblemShape& s) { s.k = 100; }},
      {"density", [](ProblemShape& s) { s.nnzb /= 4; }},
      {"skew", [](ProblemShape& s) { s.max_row_blocks = 128; }},
      {"beta", [](ProblemShape& s) { s.beta = true; }},
      {"bias", [](ProblemShape& s) { s.bias = true; }},
      {"activation", [](ProblemShape& s) { s.activation = BSRMM_ACTIVATION_GELU; }},
      {"alignment", [](ProblemShape& s) { s.aligned = false; }},
  };
  for (const auto& [what, change] : changes) {
    ProblemShape s = base_shape();
    change(s);
    EXPECT_NE(problem_key(s, labels), base) << what << " does not change the key";
  }
  EXPECT_NE(problem_key(base_shape(), {"sm90_a", "sm80_b"}), base) << "candidate set";
  EXPECT_NE(problem_key(base_shape(), {"sm80_b", "sm90_a", "generic_c"}), base)
      << "candidate order (the heuristic's pick comes first)";
}

TEST(ProblemKey, F32ModeCountsOnlyForF32OnAGpu) {
  ProblemShape s = base_shape();
  ProblemShape t = s;
  t.f32_mode = BSRMM_F32_TF32;
  EXPECT_EQ(problem_key(s, labels), problem_key(t, labels)) << "f16 ignores the f32 mode";
  s.dtype = t.dtype = BSRMM_DTYPE_F32;
  EXPECT_NE(problem_key(s, labels), problem_key(t, labels));
  EXPECT_NE(problem_key(t, labels).find("f32=tf32"), std::string::npos);
  s.arch = t.arch = "cpu";
  EXPECT_EQ(problem_key(s, labels), problem_key(t, labels)) << "the CPU has no tf32";
}

TEST(ProblemKey, SmBudgetCountsOnlyOnAGpuAndKeepsUnbudgetedKeys) {
  ProblemShape s = base_shape(), t = base_shape();
  const std::string unbudgeted = problem_key(s, labels);
  EXPECT_EQ(unbudgeted.find("sms="), std::string::npos) << "keys without a budget stay as they were";
  t.sm_budget = 116;
  EXPECT_NE(problem_key(t, labels), unbudgeted);
  EXPECT_NE(problem_key(t, labels).find("|sms=116|"), std::string::npos);
  s.arch = t.arch = "cpu";
  EXPECT_EQ(problem_key(s, labels), problem_key(t, labels)) << "a CPU context ignores the budget";
}

TEST(ProblemKey, IsOneReadableLine) {
  const std::string key = problem_key(base_shape(), labels);
  EXPECT_EQ(key.find('\n'), std::string::npos);
  for (const char* part : {"arch=sm_90", "dtype=f16", "block=64x64", "m=8192", "k=8192", "n=4096",
                           "density=2^-3", "skew=2^0", "epilogue=none", "aligned=1",
                           "candidates=3:"})
    EXPECT_NE(key.find(part), std::string::npos) << part << " missing from " << key;
}

TEST(ProblemKey, DescribesRealOperands) {
  test::HostBsr a;
  a.rows = 3 * 4;
  a.cols = 5 * 2;
  a.block_height = 4;
  a.block_width = 2;
  a.dtype = BSRMM_DTYPE_F32;
  a.row_ptr = {0, 1, 5, 6};  // the middle row holds 4 blocks: max 4, mean 2
  a.col_idx = {0, 0, 1, 2, 4, 3};
  a.values.assign(static_cast<size_t>(a.nnzb() * 8) * 4, 0);
  const bsrmm_bsr_desc desc = a.desc();
  test::HostDense b(10, 6, BSRMM_DTYPE_F32, BSRMM_LAYOUT_COL_MAJOR, 2);  // ld 12: 48 bytes
  test::HostDense c(12, 6, BSRMM_DTYPE_F32, BSRMM_LAYOUT_ROW_MAJOR, 1);  // ld 7: 28 bytes
  bsrmm_matmul_options options = matmul_options();
  options.beta = 2;
  options.activation = BSRMM_ACTIVATION_RELU;

  const std::unique_ptr<matrix::BsrMatrix> stored =
      matrix::BsrMatrix::create(desc, 0, bsrmm_device{BSRMM_DEVICE_CPU, 0}, nullptr);
  const ProblemShape s = describe_problem("cpu", *stored, b.desc(), c.desc(), options,
                                          BSRMM_F32_EXACT);
  EXPECT_EQ(s.m, 12);
  EXPECT_EQ(s.k, 10);
  EXPECT_EQ(s.n, 6);
  EXPECT_EQ(s.block_rows, 3);
  EXPECT_EQ(s.block_cols, 5);
  EXPECT_EQ(s.nnzb, 6);
  EXPECT_EQ(s.max_row_blocks, 4);
  EXPECT_EQ(skew_exponent(s), 1);
  EXPECT_EQ(s.b_layout, BSRMM_LAYOUT_COL_MAJOR);
  EXPECT_TRUE(s.beta);
  EXPECT_FALSE(s.bias);
  EXPECT_FALSE(s.aligned) << "C's rows are 28 bytes apart";
}

}  // namespace
}  // namespace bsrmm::tuner
