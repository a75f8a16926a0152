// bsrmm_matrix_with_values on a GPU, the way a training loop uses it: one structure, values that
// live in the caller's device memory and change every step (borrowed), multiplied by the
// heuristic's kernel, by the dense fallback (whose dense copy of A is per values) and as A^T
// (whose transposed copy is per values). Every product is checked element by element against
// float64 with the output NaN-poisoned; an old matrix keeps its values; host values are copied.
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"
#include "cuda/dense_fallback/cublaslt_library.hpp"
#include "gpu_test_support.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};

class GpuWithValues : public ::testing::Test {
 protected:
  void SetUp() override {
    BSRMM_REQUIRE_GPU();
    bsrmm_context_t ctx = nullptr;
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(gpu, &ctx));
    ctx_.reset(ctx);
  }

  // op(A) B with `matrix` (forced `variant`, "" for the heuristic) on device operands, checked
  // against the float64 product of `expected`.
  void expect_product(bsrmm_matrix_t matrix, const HostBsr& expected, bsrmm_op op,
                      const std::string& variant, const std::string& what) {
    const bool t = op == BSRMM_OP_TRANSPOSE;
    const int64_t m = t ? expected.cols : expected.rows, k = t ? expected.rows : expected.cols, n = 96;
    HostDense b(k, n, expected.dtype), c(m, n, expected.dtype);  // c: NaN-poisoned
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) b.set(i, j, round_to(expected.dtype, rng_.uniform(-1, 1)));
    DeviceBuffer b_device(b.bytes()), c_device(c.bytes());
    bsrmm_dense bd{b_device.get(), k, n, n, BSRMM_LAYOUT_ROW_MAJOR, expected.dtype, gpu};
    bsrmm_dense cd{c_device.get(), m, n, n, BSRMM_LAYOUT_ROW_MAJOR, expected.dtype, gpu};
    bsrmm_matmul_options options = bsrmm_matmul_options_default();
    options.op_a = op;
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_variant(ctx_.get(), variant.c_str()));
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matmul(ctx_.get(), matrix, &bd, &cd, &options));
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx_.get()));
    ASSERT_TRUE(c_device.download(c.bytes()));
    const Expected want = reference_matmul(expected.to_dense(), expected.rows, expected.cols, op, b,
                                           c, 1.0, 0.0, nullptr, BSRMM_ACTIVATION_NONE);
    expect_matches(c, want, what + (t ? " (A^T" : " (A") + ", " +
                                (variant.empty() ? std::string(bsrmm_context_last_variant(ctx_.get())) : variant) +
                                ", seed " + std::to_string(seed_) + ")");
  }

  MatrixHandle with_values(bsrmm_matrix_t like, const void* values, bsrmm_device where, uint32_t flags) {
    bsrmm_matrix_t out = nullptr;
    EXPECT_BSRMM(BSRMM_STATUS_SUCCESS,
                 bsrmm_matrix_with_values(ctx_.get(), like, values, where, flags, &out));
    return MatrixHandle(out);
  }

  ContextHandle ctx_;
  uint64_t seed_ = test_seed();
  Random rng_{seed_};
};

TEST_F(GpuWithValues, BorrowedValuesOfEachStepMultiplyCorrectly) {
  std::vector<std::string> variants{""};
  std::string why;
  if (cuda::lt::api(&why) != nullptr) variants.push_back("dense_cublaslt_f16");
  else std::printf("[ note ] dense fallback not checked: %s\n", why.c_str());

  // 16x16 blocks take the sm90 (transposed) or sm80 kernels; 8 x 6 block rows/columns, ~40%.
  const HostBsr structure = random_bsr(rng_, 8, 6, 16, 16, 0.4, BSRMM_DTYPE_F16);
  const HostBsr step1 = with_fresh_values(structure, rng_);
  const HostBsr step2 = with_fresh_values(structure, rng_);
  DeviceBuffer values1(step1.values), values2(step2.values);
  HostBsr first = step1;
  bsrmm_bsr_desc desc = first.desc();
  bsrmm_matrix_t created = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx_.get(), &desc, 0, &created));
  MatrixHandle original(created);

  MatrixHandle a1 = with_values(original.get(), values1.get(), gpu, BSRMM_CREATE_BORROW_VALUES);
  MatrixHandle a2 = with_values(a1.get(), values2.get(), gpu, BSRMM_CREATE_BORROW_VALUES);
  ASSERT_NE(a1, nullptr);
  ASSERT_NE(a2, nullptr);
  original.reset();  // the structure lives on in a1 and a2
  for (const std::string& variant : variants) {
    for (bsrmm_op op : {BSRMM_OP_NONE, BSRMM_OP_TRANSPOSE}) {
      expect_product(a1.get(), step1, op, variant, "step 1");
      expect_product(a2.get(), step2, op, variant, "step 2");
    }
  }
  // Host values are copied onto the device: the host array may change right after.
  HostBsr step3 = with_fresh_values(structure, rng_);
  MatrixHandle a3 = with_values(a2.get(), step3.values.data(), bsrmm_device{BSRMM_DEVICE_CPU, 0}, 0);
  const HostBsr step3_kept = step3;
  step3 = with_fresh_values(step3, rng_);
  expect_product(a3.get(), step3_kept, BSRMM_OP_NONE, "", "step 3 (host values copied)");
  expect_product(a1.get(), step1, BSRMM_OP_NONE, "", "step 1 again");
}

TEST_F(GpuWithValues, BorrowingHostValuesIsRejected) {
  const HostBsr a = random_bsr(rng_, 2, 2, 16, 16, 1.0, BSRMM_DTYPE_F16);
  HostBsr copy = a;
  bsrmm_bsr_desc desc = copy.desc();
  bsrmm_matrix_t created = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx_.get(), &desc, 0, &created));
  MatrixHandle like(created);
  bsrmm_matrix_t out = nullptr;
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT,
               bsrmm_matrix_with_values(ctx_.get(), like.get(), copy.values.data(),
                                        bsrmm_device{BSRMM_DEVICE_CPU, 0}, BSRMM_CREATE_BORROW_VALUES, &out));
  EXPECT_NE(std::string(bsrmm_last_error()).find("BSRMM_CREATE_BORROW_VALUES"), std::string::npos);
  // A host pointer claimed to be on the GPU is caught too.
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT,
               bsrmm_matrix_with_values(ctx_.get(), like.get(), copy.values.data(), gpu,
                                        BSRMM_CREATE_BORROW_VALUES, &out));
  EXPECT_EQ(out, nullptr);
}

}  // namespace
}  // namespace bsrmm::test
