// The rules fp8 adds, one test each, asserting the status and a fragment of the message:
// scales present, sized, finite and of a kind the operand takes; A and B both fp8; C not fp8;
// no fp8 where bsrmm does not take it (the dense CPU GEMM, to_dense,
// with_values, from_dense, the SDDMM); scales only on fp8 operands.
#include "../support/fp8_operands.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

void expect_status(bsrmm_status got, bsrmm_status want, const std::string& fragment) {
  EXPECT_EQ(got, want) << bsrmm_last_error();
  EXPECT_NE(std::string(bsrmm_last_error()).find(fragment), std::string::npos)
      << "message: " << bsrmm_last_error() << "\nexpected fragment: " << fragment;
}

// A 6 x 8 e4m3 matrix (2 x 2 blocks), an 8 x 5 e4m3 B, a 6 x 5 f32 C.
class Fp8Rules : public ::testing::Test {
 protected:
  Fp8Rules()
      : rng_(7),
        a_(random_bsr(rng_, 3, 4, 2, 2, 0.5, BSRMM_DTYPE_FLOAT8_E4M3)),
        a_scales_(random_scales(rng_, a_.nnzb())),
        matrix_(Matrix::scaled(ctx_, a_.desc(), scales_of(a_scales_, BSRMM_SCALE_PER_BLOCK))) {
    fill_random(b_, rng_);
    b = b_.desc();
    c = c_.desc();
    options.b_scales = &b_scales;
  }

  bsrmm_status multiply() { return bsrmm_matmul(ctx_.get(), matrix_.get(), &b, &c, &options); }
  bsrmm_status create(const bsrmm_scales* scales) {
    bsrmm_matrix_t out = nullptr;
    const bsrmm_bsr_desc desc = a_.desc();
    const bsrmm_status status = bsrmm_matrix_create_scaled(ctx_.get(), &desc, scales, 0, &out);
    bsrmm_matrix_destroy(out);
    return status;
  }

  // An f32 A of a_'s shape, and `b` set to a random f32 B: the plain (not fp8) operands that
  // the rules on scales given to non-fp8 operands are tried with.
  Matrix plain_operands() {
    HostBsr f32 = random_bsr(rng_, 3, 4, 2, 2, 0.5, BSRMM_DTYPE_F32);
    Matrix plain(ctx_, f32.desc());
    fill_random(plain_b_, rng_);
    b = plain_b_.desc();
    return plain;
  }

  Random rng_;
  HostBsr a_;
  std::vector<float> a_scales_;
  Context ctx_;
  Matrix matrix_;
  HostDense b_{8, 5, BSRMM_DTYPE_FLOAT8_E4M3};
  HostDense c_{6, 5, BSRMM_DTYPE_F32};
  HostDense plain_b_{8, 5, BSRMM_DTYPE_F32};
  std::vector<float> b_scale_values_{0.5f, 1.0f, 2.0f, 3.0f, 4.0f};
  bsrmm_scales b_scales = scales_of(b_scale_values_, BSRMM_SCALE_PER_COLUMN);
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  bsrmm_dense b{}, c{};
};

TEST_F(Fp8Rules, ValidOperandsRun) { EXPECT_EQ(multiply(), BSRMM_STATUS_SUCCESS) << bsrmm_last_error(); }

TEST_F(Fp8Rules, MatrixCreateRefusesFp8WithoutScales) {
  bsrmm_matrix_t out = nullptr;
  const bsrmm_bsr_desc desc = a_.desc();
  expect_status(bsrmm_matrix_create(ctx_.get(), &desc, 0, &out), BSRMM_STATUS_INVALID_ARGUMENT,
                "desc.dtype = float8_e4m3 needs scales: create fp8 matrices with bsrmm_matrix_create_scaled");
  expect_status(create(nullptr), BSRMM_STATUS_INVALID_ARGUMENT, "scales is NULL");
}

TEST_F(Fp8Rules, ScalesOnlyForFp8Values) {
  HostBsr f32 = random_bsr(rng_, 3, 4, 2, 2, 0.5, BSRMM_DTYPE_F32);
  const bsrmm_bsr_desc desc = f32.desc();
  const std::vector<float> one{1.0f};
  const bsrmm_scales scales = scales_of(one, BSRMM_SCALE_PER_TENSOR);
  bsrmm_matrix_t out = nullptr;
  expect_status(bsrmm_matrix_create_scaled(ctx_.get(), &desc, &scales, 0, &out),
                BSRMM_STATUS_INVALID_ARGUMENT, "desc.dtype = 0 is not fp8");
  int64_t count = 0;
  bsrmm_scale_kind kind{};
  const Matrix plain(ctx_, desc);
  expect_status(bsrmm_matrix_export_scales(plain.get(), &kind, &count, nullptr),
                BSRMM_STATUS_INVALID_ARGUMENT, "matrix is f32: only fp8 matrices have scales");
}

TEST_F(Fp8Rules, MatrixScalesAreChecked) {
  std::vector<float> three{1.0f, 2.0f, 3.0f};
  bsrmm_scales scales = scales_of(three, BSRMM_SCALE_PER_BLOCK);
  expect_status(create(&scales), BSRMM_STATUS_INVALID_ARGUMENT,
                "scales->count = 3 but PER_BLOCK scales of this operand are " + std::to_string(a_.nnzb()) +
                    " (desc.nnzb)");
  scales = scales_of(three, BSRMM_SCALE_PER_BLOCK_ROW);
  EXPECT_EQ(create(&scales), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();  // 3 block rows
  scales.kind = BSRMM_SCALE_PER_COLUMN;
  expect_status(create(&scales), BSRMM_STATUS_INVALID_ARGUMENT, "scales->kind = PER_COLUMN is for B");
  scales.kind = static_cast<bsrmm_scale_kind>(7);
  expect_status(create(&scales), BSRMM_STATUS_INVALID_ARGUMENT, "scales->kind = 7 is not a bsrmm_scale_kind");
  scales = scales_of(three, BSRMM_SCALE_PER_BLOCK_ROW);
  scales.data = nullptr;
  expect_status(create(&scales), BSRMM_STATUS_INVALID_ARGUMENT, "scales->data is NULL but 3 scales");
  three[1] = std::nanf("");
  scales = scales_of(three, BSRMM_SCALE_PER_BLOCK_ROW);
  expect_status(create(&scales), BSRMM_STATUS_INVALID_ARGUMENT, "scales->data[1] = nan is not finite");
  scales.struct_size = 4;
  expect_status(create(&scales), BSRMM_STATUS_INVALID_ARGUMENT, "scales->struct_size = 4 <");
}

TEST_F(Fp8Rules, NoStoredBlockNeedsNoPerBlockScales) {
  // Found by the GPU test: a random pattern with no block left PER_BLOCK scales an empty vector,
  // whose data() is NULL; zero scales need no array.
  HostBsr empty = random_bsr(rng_, 3, 4, 2, 2, 0.0, BSRMM_DTYPE_FLOAT8_E4M3);
  ASSERT_EQ(empty.nnzb(), 0);
  const bsrmm_bsr_desc desc = empty.desc();
  const std::vector<float> none;
  const bsrmm_scales scales = scales_of(none, BSRMM_SCALE_PER_BLOCK);
  bsrmm_matrix_t out = nullptr;
  ASSERT_EQ(bsrmm_matrix_create_scaled(ctx_.get(), &desc, &scales, 0, &out), BSRMM_STATUS_SUCCESS)
      << bsrmm_last_error();
  bsrmm_matrix_destroy(out);
}

TEST_F(Fp8Rules, BothOperandsFp8) {
  HostDense f32_b(8, 5, BSRMM_DTYPE_F32);
  fill_random(f32_b, rng_);
  b = f32_b.desc();
  options.b_scales = nullptr;
  expect_status(multiply(), BSRMM_STATUS_UNSUPPORTED,
                "A is float8_e4m3 and B is f32: fp8 multiplies need both A and B in fp8");
  // An f32 A with an fp8 B.
  HostBsr f32 = random_bsr(rng_, 3, 4, 2, 2, 0.5, BSRMM_DTYPE_F32);
  const Matrix plain(ctx_, f32.desc());
  b = b_.desc();
  options.b_scales = &b_scales;
  expect_status(bsrmm_matmul(ctx_.get(), plain.get(), &b, &c, &options), BSRMM_STATUS_UNSUPPORTED,
                "A is f32 and B is float8_e4m3");
}

TEST_F(Fp8Rules, CIsNotFp8) {
  HostDense fp8_c(6, 5, BSRMM_DTYPE_FLOAT8_E4M3);
  c = fp8_c.desc();
  expect_status(multiply(), BSRMM_STATUS_UNSUPPORTED, "C.dtype = float8_e4m3 is fp8");
  HostDense f64_c(6, 5, BSRMM_DTYPE_F64);
  c = f64_c.desc();
  expect_status(multiply(), BSRMM_STATUS_UNSUPPORTED, "C is f64 but an fp8 multiply");
}

TEST_F(Fp8Rules, BScalesAreRequiredAndSized) {
  options.b_scales = nullptr;
  expect_status(multiply(), BSRMM_STATUS_INVALID_ARGUMENT, "options->b_scales is NULL but B is float8_e4m3");
  bsrmm_scales short_scales = b_scales;
  short_scales.count = 4;
  options.b_scales = &short_scales;
  expect_status(multiply(), BSRMM_STATUS_INVALID_ARGUMENT,
                "options->b_scales->count = 4 but PER_COLUMN scales of this operand are 5 (B.cols)");
  bsrmm_scales block_scales = b_scales;
  block_scales.kind = BSRMM_SCALE_PER_BLOCK;
  options.b_scales = &block_scales;
  expect_status(multiply(), BSRMM_STATUS_INVALID_ARGUMENT, "options->b_scales->kind = PER_BLOCK is for A");
  bsrmm_scales tensor = b_scales;
  tensor.kind = BSRMM_SCALE_PER_TENSOR;
  tensor.count = 1;
  options.b_scales = &tensor;
  EXPECT_EQ(multiply(), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
}

TEST_F(Fp8Rules, BScalesOnlyForFp8B) {
  const Matrix plain = plain_operands();
  expect_status(bsrmm_matmul(ctx_.get(), plain.get(), &b, &c, &options), BSRMM_STATUS_INVALID_ARGUMENT,
                "options->b_scales is set but B is f32: only fp8 operands take scales");
}

// A caller built against the header before b_scales passes the shorter struct: still accepted.
TEST_F(Fp8Rules, OptionsWithoutBScalesStillAccepted) {
  const Matrix plain = plain_operands();
  options.struct_size = offsetof(bsrmm_matmul_options, b_scales);
  // Beyond the caller's struct_size nothing is read: the stale pointer here must be ignored.
  EXPECT_EQ(bsrmm_matmul(ctx_.get(), plain.get(), &b, &c, &options), BSRMM_STATUS_SUCCESS)
      << bsrmm_last_error();
}

// The dense GEMM declines fp8 (it multiplies a dense copy in the compute type); the blocked
// variant and the reference take it (rowwise too where AVX-512 is: fp8_matmul_test.cpp).
TEST_F(Fp8Rules, DenseCpuVariantDeclines) {
  ASSERT_EQ(bsrmm_context_set_variant(ctx_.get(), "cpu_dense_blas"), BSRMM_STATUS_SUCCESS);
  expect_status(multiply(), BSRMM_STATUS_UNSUPPORTED, "variant 'cpu_dense_blas' does not take float8_e4m3 operands");
  for (const char* variant : {"cpu_reference_f64acc", "cpu_blocked_simd"}) {
    ASSERT_EQ(bsrmm_context_set_variant(ctx_.get(), variant), BSRMM_STATUS_SUCCESS);
    EXPECT_EQ(multiply(), BSRMM_STATUS_SUCCESS) << variant << ": " << bsrmm_last_error();
  }
}

TEST_F(Fp8Rules, ConversionsRefuseFp8) {
  HostDense out(6, 8, BSRMM_DTYPE_F32);
  bsrmm_dense out_desc = out.desc();
  expect_status(bsrmm_matrix_to_dense(ctx_.get(), matrix_.get(), &out_desc), BSRMM_STATUS_UNSUPPORTED,
                "matrix is float8_e4m3: bsrmm_matrix_to_dense");
  bsrmm_matrix_t made = nullptr;
  expect_status(bsrmm_matrix_with_values(ctx_.get(), matrix_.get(), a_.values.data(),
                                         bsrmm_device{BSRMM_DEVICE_CPU, 0}, 0, &made),
                BSRMM_STATUS_UNSUPPORTED, "new fp8 values need new scales");
  HostDense dense(6, 8, BSRMM_DTYPE_FLOAT8_E4M3);
  fill_random(dense, rng_);
  const bsrmm_dense dense_desc = dense.desc();
  expect_status(bsrmm_matrix_from_dense(ctx_.get(), &dense_desc, 2, 2, &made), BSRMM_STATUS_UNSUPPORTED,
                "dense.dtype = float8_e4m3 is fp8");
}

TEST_F(Fp8Rules, SddmmRefusesFp8) {
  HostDense x(6, 3, BSRMM_DTYPE_FLOAT8_E4M3);
  HostDense y(3, 8, BSRMM_DTYPE_FLOAT8_E4M3);
  HostDense values(a_.nnzb(), 4, BSRMM_DTYPE_FLOAT8_E4M3);
  fill_random(x, rng_);
  fill_random(y, rng_);
  const bsrmm_dense xd = x.desc(), yd = y.desc();
  bsrmm_dense vd = values.desc();
  expect_status(bsrmm_sddmm(ctx_.get(), matrix_.get(), &xd, &yd, &vd, nullptr), BSRMM_STATUS_UNSUPPORTED,
                "X.dtype = float8_e4m3 is fp8");
}

}  // namespace
}  // namespace bsrmm::test
