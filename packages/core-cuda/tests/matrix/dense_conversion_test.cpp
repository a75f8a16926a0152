// from_dense / to_dense: which blocks are kept (NaN counts, -0.0 does not), round trips in every
// dtype and layout, padding left alone, and the argument rules.
#include "../support/host_arrays.hpp"
#include "../support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace bsrmm::test {
namespace {

TEST(DenseConversion, KeepsExactlyTheBlocksWithANonZero) {
  Context ctx;
  HostDense dense(4, 9, BSRMM_DTYPE_F32);
  dense.fill(0.0);
  dense.set(0, 0, -0.0);        // block (0, 0): only a negative zero -> dropped
  dense.set(1, 3, std::nan(""));  // block (0, 1): NaN counts as non-zero
  dense.set(3, 7, 2.5);         // block (1, 2)
  bsrmm_dense d = dense.desc();
  Matrix m = Matrix::from_dense(ctx, d, 2, 3);
  const bsrmm_matrix_info info = m.info();
  EXPECT_EQ(info.nnzb, 2);
  std::vector<int32_t> row(3), col(2);
  m.export_to(BSRMM_INDEX_I32, row.data(), col.data(), nullptr);
  EXPECT_EQ(row, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(col, (std::vector<int32_t>{1, 2}));
}

TEST(DenseConversion, RoundTripsEveryDtypeAndLayout) {
  Random rng(11);
  for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64}) {
    for (bsrmm_layout layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
      SCOPED_TRACE(std::to_string(dtype) + " layout " + std::to_string(layout));
      Context ctx;
      HostDense in(12, 15, dtype, layout, 2);
      in.fill(0.0);
      for (int64_t bi = 0; bi < 4; ++bi)
        for (int64_t bj = 0; bj < 3; ++bj)
          if (rng.chance(0.5))
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 5; ++j)
                if (rng.chance(0.7)) in.set(bi * 3 + i, bj * 5 + j, round_to(dtype, rng.uniform(-4, 4)));
      bsrmm_dense d = in.desc();
      Matrix m = Matrix::from_dense(ctx, d, 3, 5);
      HostDense out(12, 15, dtype, layout == BSRMM_LAYOUT_ROW_MAJOR ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR, 3);
      bsrmm_dense od = out.desc();
      m.to_dense(ctx, od);
      for (int64_t i = 0; i < 12; ++i)
        for (int64_t j = 0; j < 15; ++j) ASSERT_EQ(out.get(i, j), in.get(i, j)) << i << ", " << j;
      EXPECT_TRUE(out.padding_untouched());
    }
  }
}

TEST(DenseConversion, ZeroMatrixHasNoBlocksAndEmptyMatricesWork) {
  Context ctx;
  HostDense zeros(8, 8, BSRMM_DTYPE_F64);
  zeros.fill(0.0);
  bsrmm_dense d = zeros.desc();
  EXPECT_EQ(Matrix::from_dense(ctx, d, 4, 4).info().nnzb, 0);
  HostDense empty(0, 8, BSRMM_DTYPE_F32);
  bsrmm_dense e = empty.desc();
  Matrix m = Matrix::from_dense(ctx, e, 4, 4);
  EXPECT_EQ(m.info().rows, 0);
  m.to_dense(ctx, e);
}

TEST(DenseConversion, FromDenseRules) {
  Context ctx;
  HostDense dense(6, 6, BSRMM_DTYPE_F32);
  dense.fill(1.0);
  bsrmm_dense d = dense.desc();
  bsrmm_matrix_t out = nullptr;
  auto expect = [&](int32_t bh, int32_t bw, const bsrmm_dense& desc, const std::string& fragment) {
    EXPECT_EQ(bsrmm_matrix_from_dense(ctx.get(), &desc, bh, bw, &out), BSRMM_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(bsrmm_last_error()).find(fragment), std::string::npos) << bsrmm_last_error();
    EXPECT_EQ(out, nullptr);
  };
  expect(4, 3, d, "dense.rows = 6 is not a multiple of block_height = 4");
  expect(3, 4, d, "dense.cols = 6 is not a multiple of block_width = 4");
  expect(0, 3, d, "block_height = 0 is outside 1..256");
  expect(3, 300, d, "block_width = 300 is outside 1..256");
  bsrmm_dense bad = d;
  bad.ld = 5;
  expect(3, 3, bad, "dense.ld = 5 < dense.cols = 6");
  EXPECT_EQ(bsrmm_matrix_from_dense(ctx.get(), nullptr, 3, 3, &out), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("dense is NULL"), std::string::npos);
}

TEST(DenseConversion, ToDenseRules) {
  Random rng(12);
  HostBsr a = random_bsr(rng, 2, 2, 2, 2, 1.0, BSRMM_DTYPE_F32);
  Context ctx;
  Matrix m(ctx, a.desc());
  auto expect = [&](HostDense& out, const std::string& fragment) {
    bsrmm_dense d = out.desc();
    EXPECT_EQ(bsrmm_matrix_to_dense(ctx.get(), m.get(), &d), BSRMM_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(bsrmm_last_error()).find(fragment), std::string::npos) << bsrmm_last_error();
  };
  HostDense wrong_shape(4, 5, BSRMM_DTYPE_F32);
  expect(wrong_shape, "out is 4 x 5 but the matrix is 4 x 4");
  HostDense wrong_dtype(4, 4, BSRMM_DTYPE_F64);
  expect(wrong_dtype, "out.dtype is f64 but the matrix is f32");
}

}  // namespace
}  // namespace bsrmm::test
