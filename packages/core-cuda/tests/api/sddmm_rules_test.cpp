// The operand rules of bsrmm_sddmm: one test per rule, asserting the status and a fragment of
// the message, plus the IEEE behaviour of non-finite alpha / beta (as bsrmm_matmul has it).
// Pattern: 6 x 8 f32, 2 x 2 blocks, every block stored (nnzb 12); X 6 x 5, Y 5 x 8, values 12 x 4.
#include "../support/host_arrays.hpp"
#include "../support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace bsrmm::test {
namespace {

class SddmmRules : public ::testing::Test {
 protected:
  SddmmRules()
      : rng_(7), pattern_(random_bsr(rng_, 3, 4, 2, 2, 1.0, BSRMM_DTYPE_F32)), matrix_(ctx_, pattern_.desc()) {
    x_.fill(0.5);
    y_.fill(-1.5);
    x = x_.desc();
    y = y_.desc();
    values = values_.desc();
  }

  bsrmm_status call(const bsrmm_sddmm_options* options = nullptr) {
    return bsrmm_sddmm(ctx_.get(), matrix_.get(), &x, &y, &values, options);
  }
  void expect(const std::string& fragment, bsrmm_status status = BSRMM_STATUS_INVALID_ARGUMENT,
              const bsrmm_sddmm_options* options = nullptr) {
    EXPECT_EQ(call(options), status) << bsrmm_last_error();
    EXPECT_NE(std::string(bsrmm_last_error()).find(fragment), std::string::npos)
        << "message: " << bsrmm_last_error() << "\nexpected fragment: " << fragment;
  }

  Random rng_;
  HostBsr pattern_;
  Context ctx_;
  Matrix matrix_;
  HostDense x_{6, 5, BSRMM_DTYPE_F32};
  HostDense y_{5, 8, BSRMM_DTYPE_F32};
  HostDense values_{12, 4, BSRMM_DTYPE_F32};
  bsrmm_dense x{}, y{}, values{};
};

TEST_F(SddmmRules, ValidOperandsRun) {
  ASSERT_EQ(call(), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
  EXPECT_EQ(ctx_.last_variant(), "cpu_sddmm_blocked");
  for (int64_t b = 0; b < 12; ++b)
    for (int64_t e = 0; e < 4; ++e) EXPECT_EQ(values_.get(b, e), 5 * 0.5 * -1.5);
}

TEST_F(SddmmRules, NullArguments) {
  EXPECT_EQ(bsrmm_sddmm(nullptr, matrix_.get(), &x, &y, &values, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("bsrmm_sddmm: ctx is NULL"), std::string::npos);
  EXPECT_EQ(bsrmm_sddmm(ctx_.get(), nullptr, &x, &y, &values, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("pattern is NULL"), std::string::npos);
  EXPECT_EQ(bsrmm_sddmm(ctx_.get(), matrix_.get(), nullptr, &y, &values, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("x is NULL"), std::string::npos);
  EXPECT_EQ(bsrmm_sddmm(ctx_.get(), matrix_.get(), &x, nullptr, &values, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("y is NULL"), std::string::npos);
  EXPECT_EQ(bsrmm_sddmm(ctx_.get(), matrix_.get(), &x, &y, nullptr, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("values is NULL"), std::string::npos);
}

TEST_F(SddmmRules, OptionsStructSize) {
  bsrmm_sddmm_options options = bsrmm_sddmm_options_default();
  EXPECT_EQ(options.struct_size, sizeof(bsrmm_sddmm_options));
  EXPECT_EQ(options.alpha, 1.0);
  EXPECT_EQ(options.beta, 0.0);
  options.struct_size = 8;
  expect("options->struct_size = 8 <", BSRMM_STATUS_INVALID_ARGUMENT, &options);
}

TEST_F(SddmmRules, XRowsMustMatchThePattern) {
  HostDense x2(4, 5, BSRMM_DTYPE_F32);
  x = x2.desc();
  expect("X.rows = 4 but the pattern has 6 rows");
}

TEST_F(SddmmRules, YColsMustMatchThePattern) {
  HostDense y2(5, 6, BSRMM_DTYPE_F32);
  y = y2.desc();
  expect("Y.cols = 6 but the pattern has 8 columns");
}

TEST_F(SddmmRules, InnerDimensionsMustAgree) {
  HostDense y2(4, 8, BSRMM_DTYPE_F32);
  y = y2.desc();
  expect("Y.rows = 4 but X.cols = 5");
}

TEST_F(SddmmRules, ValuesShape) {
  values.rows = 11;
  expect("values is 11 x 4 but must be nnzb x (bh * bw) = 12 x 4");
  values = values_.desc();
  values.cols = 2;
  values.ld = 4;
  expect("values is 12 x 2 but must be nnzb x (bh * bw) = 12 x 4");
}

TEST_F(SddmmRules, ValuesRowMajorContiguous) {
  HostDense padded(12, 4, BSRMM_DTYPE_F32, BSRMM_LAYOUT_ROW_MAJOR, 1);
  values = padded.desc();
  expect("values must be row-major and contiguous (ld = bh * bw = 4), got row-major with ld = 5");
  HostDense column(12, 4, BSRMM_DTYPE_F32, BSRMM_LAYOUT_COL_MAJOR);
  values = column.desc();
  expect("values must be row-major and contiguous");
}

TEST_F(SddmmRules, MixedDtypesAreUnsupported) {
  HostDense x2(6, 5, BSRMM_DTYPE_F64);
  x = x2.desc();
  expect("mixed dtypes are not supported: pattern is f32, X is f64", BSRMM_STATUS_UNSUPPORTED);
}

TEST_F(SddmmRules, OperandsOnAnotherDevice) {
  y.device = bsrmm_device{BSRMM_DEVICE_CUDA, 0};
  expect("Y is on cuda:0 but the context is on cpu");
}

TEST_F(SddmmRules, DenseRulesNameTheOperand) {
  x.ld = 2;
  expect("X");
  x = x_.desc();
  values.layout = static_cast<bsrmm_layout>(7);
  expect("values");
}

TEST_F(SddmmRules, ValuesMustNotOverlapXOrY) {
  // values inside X's memory, then inside Y's.
  HostDense big(12, 8, BSRMM_DTYPE_F32);
  big.fill(1.0);
  bsrmm_dense whole = big.desc();
  x = bsrmm_dense{whole.data, 6, 5, 5, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F32, whole.device};
  values = bsrmm_dense{static_cast<float*>(whole.data) + 20, 12, 4, 4, BSRMM_LAYOUT_ROW_MAJOR,
                       BSRMM_DTYPE_F32, whole.device};
  expect("values overlaps X in memory");
  x = x_.desc();
  y = bsrmm_dense{whole.data, 5, 8, 8, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F32, whole.device};
  values = bsrmm_dense{static_cast<float*>(whole.data) + 36, 12, 4, 4, BSRMM_LAYOUT_ROW_MAJOR,
                       BSRMM_DTYPE_F32, whole.device};
  expect("values overlaps Y in memory");
}

TEST_F(SddmmRules, EmptyPatternWritesNothing) {
  HostBsr empty = random_bsr(rng_, 3, 4, 2, 2, 0.0, BSRMM_DTYPE_F32);
  ASSERT_EQ(empty.nnzb(), 0);
  Matrix matrix(ctx_, empty.desc());
  HostDense none(0, 4, BSRMM_DTYPE_F32);
  bsrmm_dense vd = none.desc();
  EXPECT_EQ(bsrmm_sddmm(ctx_.get(), matrix.get(), &x, &y, &vd, nullptr), BSRMM_STATUS_SUCCESS)
      << bsrmm_last_error();
}

TEST_F(SddmmRules, NonFiniteAlphaAndBetaPropagate) {
  // beta = 0 never reads values (NaN poison stays out); a NaN beta reads and propagates; an
  // infinite alpha scales the finite product to infinity of its sign.
  bsrmm_sddmm_options options = bsrmm_sddmm_options_default();
  options.alpha = INFINITY;
  ASSERT_EQ(call(&options), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
  EXPECT_EQ(values_.get(0, 0), -INFINITY);
  options.alpha = 1.0;
  options.beta = NAN;
  values_.fill(1.0);
  ASSERT_EQ(call(&options), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
  EXPECT_TRUE(std::isnan(values_.get(3, 2)));
  options.alpha = NAN;
  options.beta = 0.0;
  ASSERT_EQ(call(&options), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
  EXPECT_TRUE(std::isnan(values_.get(5, 1)));
}

TEST_F(SddmmRules, NonFiniteInputsPropagate) {
  x_.set(2, 3, INFINITY);  // row 2: block row 1
  ASSERT_EQ(call(), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
  // (row 2) . (column j) = Inf * -1.5 + finite = -Inf in every block of block row 1, top row.
  EXPECT_EQ(values_.get(4, 0), -INFINITY);
  EXPECT_EQ(values_.get(4, 2), 5 * 0.5 * -1.5);  // row 3 of the pattern: finite
  EXPECT_EQ(values_.get(0, 0), 5 * 0.5 * -1.5);
}

}  // namespace
}  // namespace bsrmm::test
