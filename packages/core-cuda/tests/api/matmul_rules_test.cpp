// The operand rules of bsrmm_matmul: one test per rule, asserting the status and a fragment of
// the message. A 6 x 8 f32 matrix (2 x 2 blocks) times an 8 x 5 B gives a 6 x 5 C.
#include "../support/host_arrays.hpp"
#include "../support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace bsrmm::test {
namespace {

class MatmulRules : public ::testing::Test {
 protected:
  MatmulRules() : rng_(5), a_(random_bsr(rng_, 3, 4, 2, 2, 0.5, BSRMM_DTYPE_F32)), matrix_(ctx_, a_.desc()) {
    b_.fill(1.0);
    b = b_.desc();
    c = c_.desc();
  }

  void expect(const std::string& fragment, bsrmm_status status = BSRMM_STATUS_INVALID_ARGUMENT,
              const bsrmm_matmul_options* options = nullptr) {
    EXPECT_EQ(bsrmm_matmul(ctx_.get(), matrix_.get(), &b, &c, options), status) << bsrmm_last_error();
    EXPECT_NE(std::string(bsrmm_last_error()).find(fragment), std::string::npos)
        << "message: " << bsrmm_last_error() << "\nexpected fragment: " << fragment;
  }

  Random rng_;
  HostBsr a_;
  Context ctx_;
  Matrix matrix_;
  HostDense b_{8, 5, BSRMM_DTYPE_F32};
  HostDense c_{6, 5, BSRMM_DTYPE_F32};
  bsrmm_dense b{}, c{};
};

TEST_F(MatmulRules, ValidOperandsRun) {
  EXPECT_EQ(bsrmm_matmul(ctx_.get(), matrix_.get(), &b, &c, nullptr), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
}

TEST_F(MatmulRules, NullArguments) {
  EXPECT_EQ(bsrmm_matmul(nullptr, matrix_.get(), &b, &c, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("bsrmm_matmul: ctx is NULL"), std::string::npos);
  EXPECT_EQ(bsrmm_matmul(ctx_.get(), nullptr, &b, &c, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("a is NULL"), std::string::npos);
  EXPECT_EQ(bsrmm_matmul(ctx_.get(), matrix_.get(), nullptr, &c, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("b is NULL"), std::string::npos);
  EXPECT_EQ(bsrmm_matmul(ctx_.get(), matrix_.get(), &b, nullptr, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("c is NULL"), std::string::npos);
}

TEST_F(MatmulRules, OptionsStructSize) {
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.struct_size = 8;
  expect("options->struct_size = 8 <", BSRMM_STATUS_INVALID_ARGUMENT, &options);
}

TEST_F(MatmulRules, OptionsEnums) {
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.op_a = static_cast<bsrmm_op>(2);
  expect("options->op_a = 2 is not a bsrmm_op", BSRMM_STATUS_INVALID_ARGUMENT, &options);
  options = bsrmm_matmul_options_default();
  options.activation = static_cast<bsrmm_activation>(9);
  expect("options->activation = 9 is not a bsrmm_activation", BSRMM_STATUS_INVALID_ARGUMENT, &options);
}

TEST_F(MatmulRules, DenseEnumsAndSizes) {
  b.dtype = static_cast<bsrmm_dtype>(9);  // 4 and 5 are the fp8 dtypes (fp8_rules_test.cpp)
  expect("B.dtype = 9 is not a bsrmm_dtype");
  b = b_.desc();
  c.layout = static_cast<bsrmm_layout>(3);
  expect("C.layout = 3 is not a bsrmm_layout");
  c = c_.desc();
  b.rows = -8;
  expect("B.rows = -8 is negative");
  b = b_.desc();
  c.device = {BSRMM_DEVICE_CPU, 1};
  expect("C.device.ordinal = 1 for a CPU device, must be 0");
}

TEST_F(MatmulRules, LeadingDimensionTooSmall) {
  b.ld = 4;
  expect("B.ld = 4 < B.cols = 5 (row-major: ld must be >= cols)");
  b = b_.desc();
  c.layout = BSRMM_LAYOUT_COL_MAJOR;
  c.ld = 5;
  expect("C.ld = 5 < C.rows = 6 (column-major: ld must be >= rows)");
}

TEST_F(MatmulRules, ExtentOverflow) {
  b.ld = int64_t{1} << 62;
  expect("B extent overflows 64-bit sizes");
}

TEST_F(MatmulRules, NullDataOfANonEmptyOperand) {
  b.data = nullptr;
  expect("B.data is NULL but B is 8 x 5");
}

TEST_F(MatmulRules, MisalignedData) {
  c.data = static_cast<char*>(c.data) + 2;
  expect("C.data is not aligned to 4 bytes (the size of f32)");
}

TEST_F(MatmulRules, MixedDtypesAreUnsupported) {
  HostDense b16(8, 5, BSRMM_DTYPE_F16);
  b = b16.desc();
  expect("mixed dtypes are not supported: A is f32, B is f16, C is f32", BSRMM_STATUS_UNSUPPORTED);
}

TEST_F(MatmulRules, BRowsMustMatchOpA) {
  HostDense wrong(6, 5, BSRMM_DTYPE_F32);
  b = wrong.desc();
  expect("B.rows = 6 but op(A) = A has 8 columns (A is 6 x 8)");
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.op_a = BSRMM_OP_TRANSPOSE;
  b = b_.desc();
  expect("B.rows = 8 but op(A) = A^T has 6 columns (A is 6 x 8)", BSRMM_STATUS_INVALID_ARGUMENT, &options);
}

TEST_F(MatmulRules, CShapeMustMatch) {
  HostDense rows(7, 5, BSRMM_DTYPE_F32);
  c = rows.desc();
  expect("C.rows = 7 but op(A) = A has 6 rows");
  HostDense cols(6, 4, BSRMM_DTYPE_F32);
  c = cols.desc();
  expect("C.cols = 4 but B.cols = 5");
}

TEST_F(MatmulRules, OperandsMustBeOnTheContextsDevice) {
  b.device = {BSRMM_DEVICE_CUDA, 0};
  expect("B is on cuda:0 but the context is on cpu");
}

TEST_F(MatmulRules, OutputMustNotAliasB) {
  HostDense shared(8, 5, BSRMM_DTYPE_F32);
  shared.fill(1.0);
  b = shared.desc();
  c = shared.desc();
  c.rows = 6;  // the right shape, over B's memory
  expect("C overlaps B in memory: the output must not alias an input");
}

TEST_F(MatmulRules, OutputMustNotAliasBias) {
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.bias = static_cast<char*>(c.data) + 4;
  expect("C overlaps options->bias in memory", BSRMM_STATUS_INVALID_ARGUMENT, &options);
}

TEST_F(MatmulRules, MisalignedBias) {
  std::vector<float> bias(8);
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.bias = reinterpret_cast<char*>(bias.data()) + 1;
  expect("options->bias is not aligned to 4 bytes", BSRMM_STATUS_INVALID_ARGUMENT, &options);
}

TEST_F(MatmulRules, MatrixFromAnotherContextOnTheSameDeviceIsFine) {
  Context other;
  EXPECT_EQ(bsrmm_matmul(other.get(), matrix_.get(), &b, &c, nullptr), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
}

}  // namespace
}  // namespace bsrmm::test
