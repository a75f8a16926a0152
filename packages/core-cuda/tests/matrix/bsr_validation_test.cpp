// One test per rule a BSR description must meet: each asserts the status and a fragment of the
// message that names the argument and the rule.
#include "../support/host_arrays.hpp"

#include <bsrmm/bsrmm.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace bsrmm::test {
namespace {

class BsrValidation : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(bsrmm_context_create({BSRMM_DEVICE_CPU, 0}, &ctx_), BSRMM_STATUS_SUCCESS); }
  void TearDown() override { bsrmm_context_destroy(ctx_); }

  // 3 block rows x 4 block columns of 2 x 3 blocks; block row 1 is empty.
  static HostBsr valid() {
    HostBsr m;
    m.rows = 6;
    m.cols = 12;
    m.block_height = 2;
    m.block_width = 3;
    m.row_ptr = {0, 2, 2, 5};
    m.col_idx = {0, 3, 1, 2, 3};
    m.values.resize(static_cast<size_t>(m.nnzb() * m.block_elements()) * 4);
    for (int64_t p = 0; p < m.nnzb(); ++p)
      for (int32_t i = 0; i < 2; ++i)
        for (int32_t j = 0; j < 3; ++j) m.set_value(p, i, j, static_cast<double>(p * 10 + i * 3 + j));
    return m;
  }

  void expect_rejected(const bsrmm_bsr_desc& desc, const std::string& fragment,
                       uint32_t flags = BSRMM_CREATE_DEFAULT,
                       bsrmm_status status = BSRMM_STATUS_INVALID_ARGUMENT) {
    bsrmm_matrix_t matrix = reinterpret_cast<bsrmm_matrix_t>(0x1);
    EXPECT_EQ(bsrmm_matrix_create(ctx_, &desc, flags, &matrix), status) << bsrmm_last_error();
    EXPECT_EQ(matrix, nullptr) << "out must be NULL after a failure";
    EXPECT_NE(std::string(bsrmm_last_error()).find(fragment), std::string::npos)
        << "message: " << bsrmm_last_error() << "\nexpected fragment: " << fragment;
    bsrmm_matrix_destroy(matrix);
  }

  void expect_accepted(const bsrmm_bsr_desc& desc, uint32_t flags = BSRMM_CREATE_DEFAULT) {
    bsrmm_matrix_t matrix = nullptr;
    EXPECT_EQ(bsrmm_matrix_create(ctx_, &desc, flags, &matrix), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
    EXPECT_NE(matrix, nullptr);
    bsrmm_matrix_destroy(matrix);
  }

  bsrmm_context_t ctx_ = nullptr;
};

TEST_F(BsrValidation, AcceptsValidMatrixWithEitherIndexWidth) {
  HostBsr m = valid();
  expect_accepted(m.desc(BSRMM_INDEX_I32));
  expect_accepted(m.desc(BSRMM_INDEX_I64));
}

TEST_F(BsrValidation, AcceptsEmptyMatrices) {
  HostBsr empty;  // 0 x 0, no blocks, row_ptr = {0}
  expect_accepted(empty.desc());
  HostBsr no_blocks = valid();
  no_blocks.row_ptr = {0, 0, 0, 0};
  no_blocks.col_idx.clear();
  no_blocks.values.clear();
  expect_accepted(no_blocks.desc());  // col_idx and values may be NULL when nnzb = 0
  bsrmm_bsr_desc zero_rows = empty.desc();
  zero_rows.cols = 12;
  zero_rows.row_ptr = nullptr;  // no block rows: row_ptr may be NULL
  expect_accepted(zero_rows);
}

TEST_F(BsrValidation, AcceptsNanValues) {
  HostBsr m = valid();
  m.set_value(0, 0, 0, std::nan(""));
  expect_accepted(m.desc());
}

TEST_F(BsrValidation, NullArguments) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  bsrmm_matrix_t matrix = nullptr;
  EXPECT_EQ(bsrmm_matrix_create(ctx_, nullptr, 0, &matrix), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("desc is NULL"), std::string::npos);
  EXPECT_EQ(bsrmm_matrix_create(ctx_, &desc, 0, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("out is NULL"), std::string::npos);
  EXPECT_EQ(bsrmm_matrix_create(nullptr, &desc, 0, &matrix), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("ctx is NULL"), std::string::npos);
}

TEST_F(BsrValidation, DtypeOutOfRange) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.dtype = static_cast<bsrmm_dtype>(9);
  expect_rejected(desc, "desc.dtype = 9 is not a bsrmm_dtype");
}

TEST_F(BsrValidation, IndexTypeOutOfRange) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.index_type = static_cast<bsrmm_index_type>(-1);
  expect_rejected(desc, "desc.index_type = -1 is not a bsrmm_index_type");
}

TEST_F(BsrValidation, DeviceOutOfRange) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.device.type = static_cast<bsrmm_device_type>(7);
  expect_rejected(desc, "desc.device.type = 7 is not a bsrmm_device_type");
  desc.device = {BSRMM_DEVICE_CPU, 2};
  expect_rejected(desc, "desc.device.ordinal = 2 for a CPU device, must be 0");
  desc.device = {BSRMM_DEVICE_CUDA, -1};
  expect_rejected(desc, "desc.device.ordinal = -1 is negative");
}

TEST_F(BsrValidation, NegativeSizes) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.rows = -6;
  expect_rejected(desc, "desc.rows = -6 is negative");
  desc = m.desc();
  desc.cols = -1;
  expect_rejected(desc, "desc.cols = -1 is negative");
  desc = m.desc();
  desc.nnzb = -5;
  expect_rejected(desc, "desc.nnzb = -5 is negative");
}

TEST_F(BsrValidation, BlockSideOutsideLimits) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.block_height = 0;
  expect_rejected(desc, "desc.block_height = 0 is outside 1..256");
  desc = m.desc();
  desc.block_width = 257;
  expect_rejected(desc, "desc.block_width = 257 is outside 1..256 (GPU kernels keep a block's tile on chip");
}

TEST_F(BsrValidation, RowsNotMultipleOfBlockHeight) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.rows = 7;
  expect_rejected(desc, "desc.rows = 7 is not a multiple of desc.block_height = 2");
}

TEST_F(BsrValidation, ColsNotMultipleOfBlockWidth) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.cols = 13;
  expect_rejected(desc, "desc.cols = 13 is not a multiple of desc.block_width = 3");
}

TEST_F(BsrValidation, BlockCountsBeyondInt32) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.block_height = 1;
  desc.rows = int64_t{1} << 32;
  expect_rejected(desc, "block rows exceeds INT32_MAX: bsrmm stores block indices as int32");
  desc = m.desc();
  desc.block_width = 1;
  desc.cols = int64_t{1} << 32;
  expect_rejected(desc, "block columns exceeds INT32_MAX");
  desc = m.desc(BSRMM_INDEX_I64);
  desc.nnzb = int64_t{1} << 31;
  expect_rejected(desc, "desc.nnzb = 2147483648 exceeds INT32_MAX");
}

TEST_F(BsrValidation, MoreBlocksThanTheGridHolds) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.nnzb = 13;
  expect_rejected(desc, "desc.nnzb = 13 exceeds block_row_count * block_col_count = 3 * 4 = 12");
}

TEST_F(BsrValidation, NullArraysWhereEntriesAreNeeded) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.row_ptr = nullptr;
  expect_rejected(desc, "desc.row_ptr is NULL but the matrix has 3 block rows");
  desc = m.desc();
  desc.col_idx = nullptr;
  expect_rejected(desc, "desc.col_idx is NULL but desc.nnzb = 5");
  desc = m.desc();
  desc.values = nullptr;
  expect_rejected(desc, "desc.values is NULL but desc.nnzb = 5");
}

TEST_F(BsrValidation, RowPtrMustStartAtZero) {
  HostBsr m = valid();
  m.row_ptr[0] = 3;
  expect_rejected(m.desc(), "desc.row_ptr[0] = 3, must be 0");
}

TEST_F(BsrValidation, RowPtrMustBeMonotone) {
  HostBsr m = valid();
  m.row_ptr = {0, 4, 2, 5};
  expect_rejected(m.desc(), "desc.row_ptr is not monotone: row_ptr[1] = 4 > row_ptr[2] = 2");
}

TEST_F(BsrValidation, RowPtrMustNotPassNnzb) {
  HostBsr m = valid();
  m.row_ptr = {0, 6, 6, 5};
  expect_rejected(m.desc(), "desc.row_ptr[1] = 6 > desc.nnzb = 5");
}

TEST_F(BsrValidation, RowPtrMustEndAtNnzb) {
  HostBsr m = valid();
  m.row_ptr = {0, 2, 2, 4};
  expect_rejected(m.desc(), "desc.row_ptr[3] = 4 (its last entry) must equal desc.nnzb = 5");
}

TEST_F(BsrValidation, Int64RowPtrBeyondInt32) {
  HostBsr m = valid();
  m.row_ptr = {0, int64_t{1} << 33, 2, 5};
  expect_rejected(m.desc(BSRMM_INDEX_I64), "desc.row_ptr[1] = 8589934592 exceeds INT32_MAX");
}

TEST_F(BsrValidation, ColumnIndexNegative) {
  HostBsr m = valid();
  m.col_idx[2] = -1;
  expect_rejected(m.desc(), "desc.col_idx[2] = -1 is negative");
}

TEST_F(BsrValidation, ColumnIndexOutOfRange) {
  HostBsr m = valid();
  m.col_idx[4] = 40;
  expect_rejected(m.desc(), "desc.col_idx[4] = 40 >= block column count 4");
}

TEST_F(BsrValidation, Int64ColumnIndexBeyondInt32) {
  HostBsr m = valid();
  m.col_idx[1] = int64_t{1} << 40;
  expect_rejected(m.desc(BSRMM_INDEX_I64), "desc.col_idx[1] = 1099511627776 exceeds INT32_MAX");
}

TEST_F(BsrValidation, ColumnsUnsortedWithinRow) {
  HostBsr m = valid();
  m.col_idx = {0, 3, 2, 1, 3};
  expect_rejected(m.desc(), "desc.col_idx not sorted in block row 2: col_idx[3] = 1 after col_idx[2] = 2"
                            " (pass BSRMM_CREATE_SORT_INDICES to sort)");
}

TEST_F(BsrValidation, DuplicateColumns) {
  HostBsr m = valid();
  m.col_idx = {0, 3, 1, 1, 3};
  expect_rejected(m.desc(), "duplicate block in block row 2: desc.col_idx[3] = 1 repeats desc.col_idx[2]");
}

TEST_F(BsrValidation, DuplicateColumnsFoundAfterSorting) {
  HostBsr m = valid();
  m.col_idx = {0, 3, 3, 1, 3};
  expect_rejected(m.desc(), "duplicate block in block row 2: column 3 appears at desc.col_idx[2] and desc.col_idx[4]",
                  BSRMM_CREATE_SORT_INDICES);
}

TEST_F(BsrValidation, UnknownFlags) {
  HostBsr m = valid();
  expect_rejected(m.desc(), "flags = 12 has unknown bits 12", 12u);
}

TEST_F(BsrValidation, BorrowNeedsTheContextsCudaDevice) {
  HostBsr m = valid();
  expect_rejected(m.desc(), "BSRMM_CREATE_BORROW_VALUES needs desc.values on the context's CUDA device",
                  BSRMM_CREATE_BORROW_VALUES);
}

TEST_F(BsrValidation, MisalignedValues) {
  HostBsr m = valid();
  std::vector<unsigned char> shifted(m.values.size() + 1);
  bsrmm_bsr_desc desc = m.desc();
  desc.values = shifted.data() + 1;
  expect_rejected(desc, "desc.values is not aligned to 4 bytes");
}

#if !BSRMM_WITH_CUDA
TEST_F(BsrValidation, CudaArraysWithoutCuda) {
  HostBsr m = valid();
  bsrmm_bsr_desc desc = m.desc();
  desc.device = {BSRMM_DEVICE_CUDA, 0};
  expect_rejected(desc, "bsrmm was built without CUDA", 0, BSRMM_STATUS_NO_DEVICE);
}
#endif

}  // namespace
}  // namespace bsrmm::test
