// bsrmm_matrix_with_values on the CPU: a matrix with another matrix's structure and new values
// multiplies like a freshly created one (both ops, f32 and f16, so the per-matrix transposed and
// f32 copies are not shared), copied or borrowed in place, outlives the matrix it came from,
// leaves that one unchanged, shares
// the structure's schedule, and rejects bad arguments naming them.
#include "../../src/matrix/plan.hpp"
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"
#include "../../src/api/handles.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

const bsrmm_device cpu{BSRMM_DEVICE_CPU, 0};

// op(A) B through `matrix` on the CPU, checked against the float64 product of `expected_a`.
void expect_product(Context& ctx, const Matrix& matrix, const HostBsr& expected_a, bsrmm_op op,
                    Random& rng, const std::string& what) {
  const bool t = op == BSRMM_OP_TRANSPOSE;
  const int64_t m = t ? expected_a.cols : expected_a.rows;
  const int64_t k = t ? expected_a.rows : expected_a.cols;
  HostDense b(k, 5, expected_a.dtype);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < 5; ++j) b.set(i, j, round_to(expected_a.dtype, rng.uniform(-1, 1)));
  HostDense c(m, 5, expected_a.dtype);  // NaN-poisoned
  const Expected want = reference_matmul(expected_a.to_dense(), expected_a.rows, expected_a.cols, op,
                                         b, c, 1.0, 0.0, nullptr, BSRMM_ACTIVATION_NONE);
  bsrmm_matmul_options options = matmul_options();
  options.op_a = op;
  bsrmm_dense bd = b.desc(), cd = c.desc();
  matmul(ctx, matrix, bd, cd, options);
  expect_matches(c, want, what + (t ? " (A^T)" : " (A)"));
}

class WithValues : public ::testing::TestWithParam<bsrmm_dtype> {};

TEST_P(WithValues, MultipliesWithTheNewValuesAndLeavesTheOldMatrixAlone) {
  Random rng(0x5eed0 + GetParam());
  Context ctx(cpu);
  HostBsr first = random_bsr(rng, 7, 5, 4, 3, 0.5, GetParam());
  bsrmm_bsr_desc desc = first.desc();
  std::optional<Matrix> original(std::in_place, ctx, desc);
  // Build the old matrix's value-derived caches first: the new matrix must not inherit them.
  expect_product(ctx, *original, first, BSRMM_OP_NONE, rng, "original");
  expect_product(ctx, *original, first, BSRMM_OP_TRANSPOSE, rng, "original");

  const HostBsr second = with_fresh_values(first, rng);
  Matrix updated = original->with_values(ctx, second.values.data(), cpu);
  const bsrmm_matrix_info info = updated.info();
  EXPECT_EQ(info.nnzb, first.nnzb());
  EXPECT_EQ(info.dtype, GetParam());
  expect_product(ctx, updated, second, BSRMM_OP_NONE, rng, "updated");
  expect_product(ctx, updated, second, BSRMM_OP_TRANSPOSE, rng, "updated");
  expect_product(ctx, *original, first, BSRMM_OP_NONE, rng, "original after the update");

  // The structure belongs to both: the new matrix works on after the old one is gone.
  original.reset();
  expect_product(ctx, updated, second, BSRMM_OP_TRANSPOSE, rng, "updated, original destroyed");

  // Borrowed host values (torch's CPU steps): read in place, both ops, caches of their own.
  const HostBsr third = with_fresh_values(first, rng);
  Matrix borrowed = updated.with_values(ctx, third.values.data(), cpu, BSRMM_CREATE_BORROW_VALUES);
  EXPECT_EQ(borrowed.get()->matrix->values().data(), static_cast<const void*>(third.values.data()));
  expect_product(ctx, borrowed, third, BSRMM_OP_NONE, rng, "borrowed");
  expect_product(ctx, borrowed, third, BSRMM_OP_TRANSPOSE, rng, "borrowed");
  expect_product(ctx, updated, second, BSRMM_OP_NONE, rng, "updated beside the borrowed one");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, WithValues, ::testing::Values(BSRMM_DTYPE_F32, BSRMM_DTYPE_F16),
                         [](const auto& info) { return info.param == BSRMM_DTYPE_F32 ? "f32" : "f16"; });

TEST(WithValuesPlan, SharesTheStructuresSchedule) {
  Random rng(11);
  Context ctx(cpu);
  HostBsr a = random_bsr(rng, 6, 6, 2, 2, 0.4, BSRMM_DTYPE_F32);
  bsrmm_bsr_desc desc = a.desc();
  Matrix original(ctx, desc);
  Matrix updated = original.with_values(ctx, a.values.data(), cpu);
  const matrix::BsrMatrix& x = *original.get()->matrix;
  const matrix::BsrMatrix& y = *updated.get()->matrix;
  EXPECT_EQ(&x.structure(), &y.structure());
  EXPECT_EQ(&x.plan().schedule(nullptr), &y.plan().schedule(nullptr));
  EXPECT_NE(x.values().data(), y.values().data());  // copied, not borrowed
}

TEST(WithValuesErrors, NameTheArgumentAndTheRule) {
  Random rng(12);
  Context ctx(cpu);
  HostBsr a = random_bsr(rng, 4, 4, 2, 2, 0.6, BSRMM_DTYPE_F32);
  ASSERT_GT(a.nnzb(), 0);
  bsrmm_bsr_desc desc = a.desc();
  Matrix original(ctx, desc);
  bsrmm_matrix_t out = reinterpret_cast<bsrmm_matrix_t>(0x1);  // must be reset to NULL on failure
  auto expect_invalid = [&](bsrmm_matrix_t like, const void* values, uint32_t flags,
                            const std::string& mentions) {
    EXPECT_EQ(bsrmm_matrix_with_values(ctx.get(), like, values, cpu, flags, &out),
              BSRMM_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(bsrmm_last_error()).find(mentions), std::string::npos) << bsrmm_last_error();
    EXPECT_EQ(out, nullptr);
  };
  expect_invalid(original.get(), nullptr, 0, "values is NULL");
  expect_invalid(original.get(), a.values.data(), BSRMM_CREATE_SORT_INDICES, "flags");
  expect_invalid(nullptr, a.values.data(), 0, "like");
  expect_invalid(original.get(), a.values.data() + 1, 0, "aligned");
  EXPECT_EQ(bsrmm_matrix_with_values(ctx.get(), original.get(), a.values.data(), cpu, 0, nullptr),
            BSRMM_STATUS_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace bsrmm::test
