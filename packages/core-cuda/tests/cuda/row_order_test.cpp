// The schedule's row order on a GPU: uploaded only where it reorders rows. Rows of equal length
// keep their order (the sort is stable), so the kernels get no row_order and walk rows in place;
// a skewed pattern keeps its longest-first order on the device. The kernels' products over both
// kinds of pattern are checked by ForcedVariant (density-1 cases have equal rows) and the
// narrow, sm90 and sm80 tests.
#include "../../src/matrix/bsr_matrix.hpp"
#include "../../src/matrix/plan.hpp"
#include "../support/host_arrays.hpp"
#include "gpu_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace bsrmm::test {
namespace {

const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};

// A block_rows x block_cols pattern whose row r holds lengths[r] blocks (columns 0, 1, ...).
HostBsr with_row_lengths(const std::vector<int32_t>& lengths, int64_t block_cols) {
  HostBsr a;
  a.block_height = 4;
  a.block_width = 4;
  a.rows = int64_t(lengths.size()) * a.block_height;
  a.cols = block_cols * a.block_width;
  a.dtype = BSRMM_DTYPE_F32;
  a.row_ptr = {0};
  for (int32_t length : lengths) {
    for (int32_t c = 0; c < length; ++c) a.col_idx.push_back(c);
    a.row_ptr.push_back(a.nnzb());
  }
  a.values.assign(static_cast<size_t>(a.nnzb() * a.block_elements()) * sizeof(float), 0);
  return a;
}

// `a` by value: desc() is not const; create() copies the arrays it points at.
const matrix::Schedule& schedule_of(std::unique_ptr<matrix::BsrMatrix>& m, HostBsr a) {
  const bsrmm_bsr_desc desc = a.desc();
  m = matrix::BsrMatrix::create(desc, 0, gpu, nullptr);
  return m->plan().schedule(nullptr);
}

TEST(GpuRowOrder, EqualRowsUploadNoOrder) {
  BSRMM_REQUIRE_GPU();
  std::unique_ptr<matrix::BsrMatrix> m;
  const matrix::Schedule& s = schedule_of(m, with_row_lengths({3, 3, 3, 3, 3}, 4));
  EXPECT_EQ(s.row_order, (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(s.device_row_order.data(), nullptr) << "the identity order costs the kernels a load for nothing";
}

TEST(GpuRowOrder, RowsLongestFirstAlreadyInPlaceUploadNoOrder) {
  BSRMM_REQUIRE_GPU();
  std::unique_ptr<matrix::BsrMatrix> m;
  const matrix::Schedule& s = schedule_of(m, with_row_lengths({4, 2, 2, 0}, 4));
  EXPECT_EQ(s.device_row_order.data(), nullptr);
}

TEST(GpuRowOrder, SkewedRowsUploadTheirOrder) {
  BSRMM_REQUIRE_GPU();
  std::unique_ptr<matrix::BsrMatrix> m;
  const matrix::Schedule& s = schedule_of(m, with_row_lengths({1, 4, 0, 2}, 4));
  EXPECT_EQ(s.row_order, (std::vector<int32_t>{1, 3, 0, 2}));
  ASSERT_NE(s.device_row_order.data(), nullptr);
  std::vector<int32_t> on_device(s.row_order.size());
  ASSERT_EQ(cudaMemcpy(on_device.data(), s.device_row_order.data(), on_device.size() * sizeof(int32_t),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(on_device, s.row_order);
}

}  // namespace
}  // namespace bsrmm::test
