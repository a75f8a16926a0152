// Matrix storage through the C ABI: info, export in both index widths, the sort option (blocks
// move with their columns), copies, and the plan's transposed matrix and schedule.
#include "../../src/matrix/bsr_matrix.hpp"
#include "../../src/matrix/plan.hpp"
#include "../support/host_arrays.hpp"
#include "../support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace bsrmm::test {
namespace {

std::vector<double> dense_of(Context& ctx, const Matrix& m) {
  const bsrmm_matrix_info info = m.info();
  HostDense out(info.rows, info.cols, info.dtype);
  bsrmm_dense d = out.desc();
  m.to_dense(ctx, d);
  std::vector<double> values;
  for (int64_t i = 0; i < info.rows; ++i)
    for (int64_t j = 0; j < info.cols; ++j) values.push_back(out.get(i, j));
  return values;
}

TEST(BsrMatrix, InfoDescribesTheMatrix) {
  Random rng(1);
  HostBsr a = random_bsr(rng, 5, 7, 3, 2, 0.4, BSRMM_DTYPE_BF16);
  Context ctx;
  Matrix m(ctx, a.desc());
  const bsrmm_matrix_info info = m.info();
  EXPECT_EQ(info.rows, 15);
  EXPECT_EQ(info.cols, 14);
  EXPECT_EQ(info.block_height, 3);
  EXPECT_EQ(info.block_width, 2);
  EXPECT_EQ(info.nnzb, a.nnzb());
  EXPECT_EQ(info.dtype, BSRMM_DTYPE_BF16);
  EXPECT_EQ(info.device.type, BSRMM_DEVICE_CPU);
}

TEST(BsrMatrix, ExportReturnsTheArraysInEitherIndexWidth) {
  Random rng(2);
  HostBsr a = random_bsr(rng, 6, 6, 4, 4, 0.5, BSRMM_DTYPE_F64);
  Context ctx;
  Matrix m(ctx, a.desc(BSRMM_INDEX_I64));

  std::vector<int32_t> row32(a.row_ptr.size(), -7), col32(a.col_idx.size(), -7);
  std::vector<unsigned char> values(a.values.size(), 0xab);
  m.export_to(BSRMM_INDEX_I32, row32.data(), col32.data(), values.data());
  EXPECT_TRUE(std::equal(row32.begin(), row32.end(), a.row_ptr.begin()));
  EXPECT_TRUE(std::equal(col32.begin(), col32.end(), a.col_idx.begin()));
  EXPECT_EQ(values, a.values);

  std::vector<int64_t> row64(a.row_ptr.size(), -7), col64(a.col_idx.size(), -7);
  m.export_to(BSRMM_INDEX_I64, row64.data(), col64.data(), nullptr);  // NULL skips values
  EXPECT_EQ(row64, a.row_ptr);
  EXPECT_EQ(col64, a.col_idx);

  bsrmm_status status = bsrmm_matrix_export(m.get(), static_cast<bsrmm_index_type>(5), nullptr, nullptr, nullptr);
  EXPECT_EQ(status, BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("index_type = 5"), std::string::npos);
}

TEST(BsrMatrix, SortOptionMovesBlocksWithTheirColumns) {
  Random rng(3);
  HostBsr sorted = random_bsr(rng, 4, 8, 2, 3, 0.6, BSRMM_DTYPE_F32);
  // Reverse the blocks of every row: columns unsorted, each block still paired with its column.
  HostBsr shuffled = sorted;
  const size_t block_bytes = static_cast<size_t>(sorted.block_elements()) * 4;
  for (size_t r = 0; r + 1 < sorted.row_ptr.size(); ++r) {
    const int64_t begin = sorted.row_ptr[r], end = sorted.row_ptr[r + 1];
    for (int64_t p = begin; p < end; ++p) {
      const int64_t q = end - 1 - (p - begin);
      shuffled.col_idx[static_cast<size_t>(p)] = sorted.col_idx[static_cast<size_t>(q)];
      std::memcpy(shuffled.values.data() + p * block_bytes, sorted.values.data() + q * block_bytes, block_bytes);
    }
  }
  Context ctx;
  Matrix m(ctx, shuffled.desc(), BSRMM_CREATE_SORT_INDICES);
  std::vector<int64_t> col(sorted.col_idx.size());
  std::vector<unsigned char> values(sorted.values.size());
  m.export_to(BSRMM_INDEX_I64, nullptr, col.data(), values.data());
  EXPECT_EQ(col, sorted.col_idx);
  EXPECT_EQ(values, sorted.values);
  EXPECT_EQ(dense_of(ctx, m), sorted.to_dense());
}

TEST(BsrMatrix, CopyToGivesAnIndependentEqualMatrix) {
  Random rng(4);
  HostBsr a = random_bsr(rng, 5, 5, 2, 2, 0.5, BSRMM_DTYPE_F16);
  Context ctx;
  Matrix copy = [&] {
    Matrix original(ctx, a.desc());
    return original.copy_to(ctx);
  }();  // the original is gone
  EXPECT_EQ(dense_of(ctx, copy), a.to_dense());
}

TEST(Plan, TransposedMatrixIsATransposeBlockForBlock) {
  Random rng(5);
  HostBsr a = random_bsr(rng, 7, 5, 3, 2, 0.4, BSRMM_DTYPE_F32);
  const bsrmm_bsr_desc desc = a.desc();
  auto m = matrix::BsrMatrix::create(desc, 0, {BSRMM_DEVICE_CPU, 0}, nullptr);
  const matrix::BsrMatrix& t = m->plan().transposed(*m, nullptr);
  EXPECT_EQ(&t, &m->plan().transposed(*m, nullptr)) << "built once and cached";
  ASSERT_EQ(t.shape().rows, a.cols);
  ASSERT_EQ(t.shape().cols, a.rows);
  ASSERT_EQ(t.shape().block_height, 2);
  ASSERT_EQ(t.shape().block_width, 3);
  ASSERT_EQ(t.shape().nnzb, a.nnzb());

  std::vector<double> dense_t(static_cast<size_t>(a.rows * a.cols), 0.0);
  const float* values = t.values().as<const float>();
  for (int64_t r = 0; r < t.shape().block_row_count; ++r) {
    for (int32_t p = t.row_ptr()[r]; p < t.row_ptr()[r + 1]; ++p) {
      if (p > t.row_ptr()[r]) EXPECT_LT(t.col_idx()[p - 1], t.col_idx()[p]) << "rows of A^T sorted";
      for (int32_t i = 0; i < 2; ++i)
        for (int32_t j = 0; j < 3; ++j)
          dense_t[static_cast<size_t>((r * 2 + i) * a.rows + t.col_idx()[p] * 3 + j)] = values[p * 6 + i * 3 + j];
    }
  }
  const std::vector<double> dense = a.to_dense();
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j)
      EXPECT_EQ(dense_t[static_cast<size_t>(j * a.rows + i)], dense[static_cast<size_t>(i * a.cols + j)]);
}

TEST(Plan, ScheduleOrdersRowsLongestFirstAndAccumulatesWork) {
  HostBsr a;
  a.rows = 8;
  a.cols = 8;
  a.block_height = 2;
  a.block_width = 2;
  a.row_ptr = {0, 1, 4, 4, 6};
  a.col_idx = {0, 0, 1, 3, 1, 2};
  a.values.resize(static_cast<size_t>(a.nnzb() * 4) * 4);
  const bsrmm_bsr_desc desc = a.desc();
  auto m = matrix::BsrMatrix::create(desc, 0, {BSRMM_DEVICE_CPU, 0}, nullptr);
  const matrix::Schedule& s = m->plan().schedule(nullptr);
  EXPECT_EQ(s.row_order, (std::vector<int32_t>{1, 3, 0, 2}));
  ASSERT_EQ(s.work_prefix.size(), 5u);
  EXPECT_EQ(s.work_prefix[0], 0);
  for (size_t r = 0; r < 4; ++r) EXPECT_LT(s.work_prefix[r], s.work_prefix[r + 1]) << "empty rows still cost";
  EXPECT_GT(s.work_prefix[2] - s.work_prefix[1], s.work_prefix[1] - s.work_prefix[0]);
  // Block column 3 is used, 0..2 too; packed positions follow the used list.
  EXPECT_EQ(s.used_columns, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(s.packed_col_idx, (std::vector<int32_t>{0, 0, 1, 3, 1, 2}));
}

TEST(Plan, UsedColumnsSkipColumnsWithoutBlocks) {
  HostBsr a;
  a.rows = 4;
  a.cols = 20;
  a.block_height = 2;
  a.block_width = 2;
  a.row_ptr = {0, 2, 3};
  a.col_idx = {2, 9, 7};
  a.values.resize(static_cast<size_t>(a.nnzb() * 4) * 4);
  const bsrmm_bsr_desc desc = a.desc();
  auto m = matrix::BsrMatrix::create(desc, 0, {BSRMM_DEVICE_CPU, 0}, nullptr);
  const matrix::Schedule& s = m->plan().schedule(nullptr);
  EXPECT_EQ(s.used_columns, (std::vector<int32_t>{2, 7, 9}));
  EXPECT_EQ(s.packed_col_idx, (std::vector<int32_t>{0, 2, 1}));
}

}  // namespace
}  // namespace bsrmm::test
