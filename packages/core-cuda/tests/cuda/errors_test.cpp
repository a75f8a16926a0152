// Bad input on the GPU path gets the right status and a message, never a crash: host memory
// passed as device memory, operands on another device than the context, wrong leading
// dimensions, mismatched sizes, a device that does not exist, a forced variant that cannot run.
#include "gpu_test_support.hpp"

#include <memory>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

// A 128 x 128 f16 A (block 64) on cuda:0, with B (128 x 32) and C (128 x 32) in device memory.
class GpuBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    BSRMM_REQUIRE_GPU();
    bsrmm_context_t raw = nullptr;
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(gpu_, &raw));
    ctx_.reset(raw);
    std::vector<int32_t> row_ptr{0, 1, 2};
    std::vector<int32_t> col_idx{1, 0};
    std::vector<uint16_t> values(2 * 64 * 64, 0x3c00);  // 1.0 in f16
    bsrmm_bsr_desc desc{};
    desc.rows = 128;
    desc.cols = 128;
    desc.block_height = 64;
    desc.block_width = 64;
    desc.nnzb = 2;
    desc.row_ptr = row_ptr.data();
    desc.col_idx = col_idx.data();
    desc.index_type = BSRMM_INDEX_I32;
    desc.values = values.data();
    desc.dtype = BSRMM_DTYPE_F16;
    desc.device = bsrmm_device{BSRMM_DEVICE_CPU, 0};
    bsrmm_matrix_t matrix = nullptr;
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx_.get(), &desc, 0, &matrix));
    a_.reset(matrix);
    b_buffer_ = DeviceBuffer(128 * 32 * 2);
    c_buffer_ = DeviceBuffer(128 * 32 * 2);
    std::vector<uint16_t> ones(128 * 32, 0x3c00);
    b_buffer_.upload(ones.data(), ones.size() * 2);
    b_ = bsrmm_dense{b_buffer_.get(), 128, 32, 32, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F16, gpu_};
    c_ = bsrmm_dense{c_buffer_.get(), 128, 32, 32, BSRMM_LAYOUT_ROW_MAJOR, BSRMM_DTYPE_F16, gpu_};
  }

  bsrmm_status multiply() { return bsrmm_matmul(ctx_.get(), a_.get(), &b_, &c_, nullptr); }

  const bsrmm_device gpu_{BSRMM_DEVICE_CUDA, 0};
  ContextHandle ctx_;
  MatrixHandle a_;
  DeviceBuffer b_buffer_;
  DeviceBuffer c_buffer_;
  bsrmm_dense b_{};
  bsrmm_dense c_{};
};

TEST_F(GpuBadInput, ValidOperandsSucceed) {
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, multiply());
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx_.get()));
}

TEST_F(GpuBadInput, HostPointerPassedAsDevice) {
  std::vector<uint16_t> host(128 * 32, 0x3c00);
  b_.data = host.data();
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, multiply());
  EXPECT_NE(std::string(bsrmm_last_error()).find("B"), std::string::npos) << bsrmm_last_error();
}

TEST_F(GpuBadInput, HostOutputPassedAsDevice) {
  std::vector<uint16_t> host(128 * 32);
  c_.data = host.data();
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, multiply());
}

TEST_F(GpuBadInput, OperandOnAnotherDevice) {
  b_.device = bsrmm_device{BSRMM_DEVICE_CPU, 0};
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, multiply());
  if (gpu_count() >= 2) {
    b_.device = bsrmm_device{BSRMM_DEVICE_CUDA, 1};
    EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, multiply());
  }
}

TEST_F(GpuBadInput, LeadingDimensionTooSmall) {
  b_.ld = 31;  // row-major: ld must be >= cols
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, multiply());
  b_.ld = 32;
  c_.layout = BSRMM_LAYOUT_COL_MAJOR;
  c_.ld = 32;  // column-major: ld must be >= rows (128)
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, multiply());
}

TEST_F(GpuBadInput, SizesDoNotMatch) {
  b_.rows = 64;  // A has 128 columns
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, multiply());
  b_.rows = 128;
  c_.rows = 64;  // A has 128 rows
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, multiply());
  c_.rows = 128;
  c_.cols = 16;  // B has 32 columns
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, multiply());
}

TEST_F(GpuBadInput, ForcedVariantThatCannotRun) {
  // An f32-only variant on an f16 problem: the registry refuses it by name.
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_variant(ctx_.get(), "generic_f32_simt_m64n64k16"));
  EXPECT_BSRMM(BSRMM_STATUS_UNSUPPORTED, multiply());
  EXPECT_NE(std::string(bsrmm_last_error()).find("generic_f32_simt_m64n64k16"), std::string::npos)
      << bsrmm_last_error();
}

TEST_F(GpuBadInput, UnknownVariantName) {
  EXPECT_BSRMM(BSRMM_STATUS_INVALID_ARGUMENT, bsrmm_context_set_variant(ctx_.get(), "sm80_no_such_kernel"));
}

TEST(GpuDevices, NonexistentOrdinal) {
  BSRMM_REQUIRE_GPU();
  bsrmm_context_t ctx = nullptr;
  EXPECT_BSRMM(BSRMM_STATUS_NO_DEVICE,
               bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CUDA, gpu_count() + 3}, &ctx));
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::string(bsrmm_last_error()).find("ordinal"), std::string::npos) << bsrmm_last_error();
}

}  // namespace
}  // namespace bsrmm::test
