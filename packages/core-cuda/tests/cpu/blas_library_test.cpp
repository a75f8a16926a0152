// The CPU dense fallback's BLAS loading and placement: a library that is not there declines with
// the reason (what was tried, and BSRMM_BLAS), and without a BLAS the variant is never a
// candidate nor the heuristic's pick; with one, the placement follows A's density.
#include "../../src/cpu/blas_library.hpp"
#include "../../src/cpu/cpu_backend.hpp"

#include <gtest/gtest.h>

#include <string>

namespace bsrmm::test {
namespace {

class FakeBlas final : public cpu::blas::Library {
 public:
  explicit FakeBlas(bool optimized) : optimized_(optimized) {}
  bool gemm(cpu::blas::Order, bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
            const float*, int64_t, float, float*, int64_t) const override {
    return false;
  }
  bool gemm(cpu::blas::Order, bool, bool, int64_t, int64_t, int64_t, double, const double*,
            int64_t, const double*, int64_t, double, double*, int64_t) const override {
    return false;
  }
  const std::string& description() const override { return name_; }
  bool optimized() const override { return optimized_; }

 private:
  bool optimized_;
  std::string name_ = "fake";
};

cpu::MatmulArgs square(int32_t block, int64_t block_rows, int64_t nnzb, int64_t n, bsrmm_dtype dtype) {
  cpu::MatmulArgs args{};
  args.a.block_height = args.a.block_width = block;
  args.a.block_row_count = args.a.block_col_count = block_rows;
  args.a.nnzb = nnzb;
  args.a.dtype = dtype;
  args.b = bsrmm_dense{nullptr, block_rows * block, n, n, BSRMM_LAYOUT_ROW_MAJOR, dtype, {BSRMM_DEVICE_CPU, 0}};
  args.c = args.b;
  return args;
}

TEST(BlasLibrary, AbsentLibraryDeclinesSayingWhy) {
  std::string why;
  EXPECT_EQ(cpu::blas::load({"/nonexistent/libopenblas.so.0"}, &why), nullptr);
  EXPECT_NE(why.find("/nonexistent/libopenblas.so.0"), std::string::npos) << why;
  EXPECT_NE(why.find("BSRMM_BLAS"), std::string::npos) << why;
}

TEST(BlasLibrary, WithoutBlasTheDenseVariantIsNeverPlaced) {
  const cpu::MatmulArgs full = square(32, 8, 64, 64, BSRMM_DTYPE_F32);
  const cpu::DenseDecision decision = cpu::dense_decision(full, nullptr, "no CBLAS (test)");
  EXPECT_EQ(decision.placement, cpu::DensePlacement::none);
  EXPECT_EQ(decision.refusal, "no CBLAS (test)");
}

TEST(BlasLibrary, PlacementFollowsDensity) {
  const FakeBlas optimized(true), unknown(false);
  for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F64, BSRMM_DTYPE_F16}) {
    // Every block present: the GEMM is the default; a reference/unknown BLAS is only timed.
    EXPECT_EQ(cpu::dense_decision(square(4, 8, 64, 64, dtype), &optimized, "").placement,
              cpu::DensePlacement::first);
    EXPECT_EQ(cpu::dense_decision(square(4, 8, 64, 64, dtype), &unknown, "").placement,
              cpu::DensePlacement::candidate);
    // Three quarters of the blocks of 32: timed by the tuner, not the default.
    EXPECT_EQ(cpu::dense_decision(square(32, 8, 48, 64, dtype), &optimized, "").placement,
              cpu::DensePlacement::candidate);
    // 1 block in 64: never worth a dense product.
    EXPECT_EQ(cpu::dense_decision(square(32, 8, 1, 64, dtype), &optimized, "").placement,
              cpu::DensePlacement::none);
  }
}

TEST(BlasLibrary, DenseCopyBeyondMemoryIsRefused) {
  const FakeBlas optimized(true);
  // 2^22 x 2^22 f32 elements: 64 TiB.
  const cpu::MatmulArgs huge = square(256, int64_t{1} << 14, int64_t{1} << 20, 64, BSRMM_DTYPE_F32);
  const cpu::DenseDecision decision = cpu::dense_decision(huge, &optimized, "");
  EXPECT_EQ(decision.placement, cpu::DensePlacement::none);
  EXPECT_NE(decision.refusal.find("memory"), std::string::npos) << decision.refusal;
}

}  // namespace
}  // namespace bsrmm::test
