// The CUDA runtime layer through the C ABI: device discovery (with the reason when there is
// none), and contexts that make their own device current only for the duration of a call.
#include "gpu_test_support.hpp"

#include <string>

namespace bsrmm::test {
namespace {

// Runs everywhere: with a GPU the count is positive; without one the status is NO_DEVICE and
// the message says why (no driver, driver too old, no device).
TEST(CudaRuntime, DeviceCountOrReason) {
  int32_t count = -1;
  const bsrmm_status status = bsrmm_cuda_device_count(&count);
  if (!bsrmm_cuda_compiled()) {
    EXPECT_BSRMM(BSRMM_STATUS_NO_DEVICE, status);
    return;
  }
  if (status == BSRMM_STATUS_SUCCESS) {
    EXPECT_GT(count, 0);
  } else {
    EXPECT_BSRMM(BSRMM_STATUS_NO_DEVICE, status);
    const std::string why = bsrmm_last_error();
    EXPECT_FALSE(why.empty());
    const bool names_cause = why.find("driver") != std::string::npos ||
                             why.find("device") != std::string::npos;
    EXPECT_TRUE(names_cause) << why;
  }
}

TEST(CudaRuntime, CallerCurrentDeviceIsKept) {
  BSRMM_REQUIRE_GPU();
  ASSERT_CUDA(cudaSetDevice(0));
  Problem p;
  p.block_rows = 4;
  p.block_cols = 4;
  p.block_height = 32;
  p.block_width = 32;
  p.n = 64;
  run_and_check(p);
  int current = -1;
  ASSERT_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, 0);
}

// A context on device 1 works while the caller's thread has device 0 current, and leaves it so.
TEST(CudaRuntime, ContextOnSecondDevice) {
  BSRMM_REQUIRE_GPU();
  if (gpu_count() < 2) GTEST_SKIP() << "needs two CUDA devices, found " << gpu_count();
  ASSERT_CUDA(cudaSetDevice(0));
  bsrmm_context_t ctx = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CUDA, 1}, &ctx));
  std::vector<int32_t> row_ptr{0, 1};
  std::vector<int32_t> col_idx{0};
  std::vector<float> values(16 * 16, 0.5f);
  bsrmm_bsr_desc desc{16, 16, 16, 16, 1, row_ptr.data(), col_idx.data(), BSRMM_INDEX_I32,
                      values.data(), BSRMM_DTYPE_F32, bsrmm_device{BSRMM_DEVICE_CPU, 0}};
  bsrmm_matrix_t a = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx, &desc, 0, &a));
  DeviceBuffer b(16 * 8 * 4, 1);
  DeviceBuffer c(16 * 8 * 4, 1);
  std::vector<float> ones(16 * 8, 1.0f);
  b.upload(ones.data(), ones.size() * 4);
  const bsrmm_device gpu1{BSRMM_DEVICE_CUDA, 1};
  bsrmm_dense b_desc{b.get(), 16, 8, 8, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F32, gpu1};
  bsrmm_dense c_desc{c.get(), 16, 8, 8, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F32, gpu1};
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matmul(ctx, a, &b_desc, &c_desc, nullptr));
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx));
  std::vector<float> out(16 * 8, 0.0f);
  c.download(out.data(), out.size() * 4);
  for (float v : out) EXPECT_EQ(v, 8.0f);  // 16 products of 0.5 * 1
  int current = -1;
  ASSERT_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, 0);
  bsrmm_matrix_destroy(a);
  bsrmm_context_destroy(ctx);
}

}  // namespace
}  // namespace bsrmm::test
