// bsrmm_sddmm on CUDA device 0 against the float64 reference (support/sddmm_reference.hpp), the
// same cases as the CPU suite (every dtype, blocks 1x1 to 64x32, X and Y row- or column-major
// with padded leading dimensions, beta = 0 over NaN-poisoned values and beta != 0) plus 128x128
// blocks at T = 4096, and the weight-gradient layout (X column-major, a transposed view, with a
// padded ld) at blocks 16 to 128 and T 64 to 4096. f16 / bf16 cases that meet the mma.sync
// kernel's conditions (leading dimensions multiples of 8 elements, 16-byte aligned data, T a
// multiple of 8, block sides multiples of 16; either layout of X and Y) must run it; the rest
// run the SIMT kernel. Skips without a GPU.
#include "../support/random.hpp"
#include "../support/sddmm_reference.hpp"
#include "gpu_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace bsrmm::test {
namespace {

const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};

struct GpuSddmmCase {
  int64_t block_rows = 4, block_cols = 5;
  int32_t bh = 16, bw = 16;
  double density = 0.5;
  int64_t t = 64;
  bsrmm_dtype dtype = BSRMM_DTYPE_F16;
  bsrmm_layout x_layout = BSRMM_LAYOUT_ROW_MAJOR, y_layout = BSRMM_LAYOUT_ROW_MAJOR;
  int64_t x_pad = 0, y_pad = 0;
  double alpha = 1, beta = 0;
  std::string expect_variant;  // a prefix of the variant that must run ("" any)
  uint64_t seed = 1;

  std::string name() const {
    std::ostringstream s;
    s << dtype_label(dtype) << "_" << block_rows * bh << "x" << block_cols * bw << "_b" << bh << "x"
      << bw << "_T" << t << (x_layout == BSRMM_LAYOUT_ROW_MAJOR ? "_Xr" : "_Xc") << x_pad
      << (y_layout == BSRMM_LAYOUT_ROW_MAJOR ? "_Yr" : "_Yc") << y_pad << (beta != 0 ? "_beta" : "")
      << "_s" << seed;
    return s.str();
  }
};

void PrintTo(const GpuSddmmCase& tc, std::ostream* os) { *os << tc.name(); }

class GpuSddmm : public ::testing::TestWithParam<GpuSddmmCase> {
 protected:
  void SetUp() override { BSRMM_REQUIRE_GPU(); }
};

TEST_P(GpuSddmm, MatchesFloat64Reference) {
  const GpuSddmmCase& tc = GetParam();
  const uint64_t seed = tc.seed ^ test_seed();
  Random rng(seed);
  SddmmProblem p = make_sddmm_problem(tc, rng);

  bsrmm_context_t ctx_raw = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(gpu, &ctx_raw));
  ContextHandle ctx(ctx_raw);
  bsrmm_bsr_desc desc = p.pattern.desc();
  bsrmm_matrix_t matrix_raw = nullptr;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx.get(), &desc, 0, &matrix_raw));
  MatrixHandle matrix(matrix_raw);

  DeviceBuffer x_device(p.x.bytes()), y_device(p.y.bytes()), values_device(p.values.bytes());
  bsrmm_dense xd = p.x.desc(), yd = p.y.desc(), vd = p.values.desc();
  xd.data = x_device.get();
  yd.data = y_device.get();
  vd.data = values_device.get();
  xd.device = yd.device = vd.device = gpu;
  bsrmm_sddmm_options options = bsrmm_sddmm_options_default();
  options.alpha = tc.alpha;
  options.beta = tc.beta;
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_sddmm(ctx.get(), matrix.get(), &xd, &yd, &vd, &options));
  ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx.get()));
  ASSERT_TRUE(values_device.download(p.values.bytes()));

  const std::string ran = bsrmm_context_last_variant(ctx.get());
  if (p.pattern.nnzb() > 0) {
    EXPECT_EQ(ran.rfind(tc.expect_variant, 0), 0u) << "ran " << ran << ", expected " << tc.expect_variant;
  }
  expect_matches(p.values, p.expected(),
                 tc.name() + " (" + ran + ", seed " + std::to_string(seed) + ")");
}

std::string case_name(const ::testing::TestParamInfo<GpuSddmmCase>& info) {
  return std::to_string(info.index) + "_" + info.param.name();
}

const bsrmm_dtype dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};
const std::pair<int32_t, int32_t> block_shapes[] = {{1, 1}, {2, 3}, {4, 4}, {16, 16}, {64, 32}};

bool tensor_dtype(bsrmm_dtype dtype) { return dtype == BSRMM_DTYPE_F16 || dtype == BSRMM_DTYPE_BF16; }

// Every dtype x block shape x layout pair; pads 8 (rows stay 16-byte aligned) and odd pads.
std::vector<GpuSddmmCase> shape_layout_cases() {
  std::vector<GpuSddmmCase> cases;
  uint64_t seed = 100;
  for (bsrmm_dtype dtype : dtypes)
    for (auto [bh, bw] : block_shapes)
      for (bsrmm_layout xl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
        for (bsrmm_layout yl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
          for (int64_t pad : {8, 3}) {
            GpuSddmmCase tc;
            tc.bh = bh;
            tc.bw = bw;
            tc.block_rows = std::max<int64_t>(2, 96 / bh);
            tc.block_cols = std::max<int64_t>(2, 96 / bw);
            tc.density = 0.4;
            tc.t = pad == 8 ? 72 : 45;
            tc.dtype = dtype;
            tc.x_layout = xl;
            tc.y_layout = yl;
            // Padding along the contiguous dimension: X's ld = T + pad row-major.
            tc.x_pad = pad;
            tc.y_pad = pad;
            tc.beta = seed % 2 == 0 ? 0.0 : 0.5;
            tc.alpha = seed % 3 == 0 ? 1.0 : -1.25;
            // pad 8 with T = 72 and M, K multiples of 16 keeps every ld a multiple of 8.
            const bool mma = tensor_dtype(dtype) && bh % 16 == 0 && bw % 16 == 0 && pad == 8;
            tc.expect_variant = mma ? "sm80_sddmm_" : "cuda_sddmm_simt_";
            tc.seed = seed++;
            cases.push_back(tc);
          }
  return cases;
}

// 128 x 128 blocks at T = 4096, the training shape: the widest mma tile for f16 / bf16 with Y
// in either layout, the SIMT kernel for f32 / f64.
std::vector<GpuSddmmCase> large_block_cases() {
  std::vector<GpuSddmmCase> cases;
  uint64_t seed = 300;
  for (bsrmm_dtype dtype : dtypes)
    for (bsrmm_layout yl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
      GpuSddmmCase tc;
      tc.bh = 128;
      tc.bw = 128;
      tc.block_rows = 3;
      tc.block_cols = 3;
      tc.density = 0.5;
      tc.t = 4096;
      tc.dtype = dtype;
      tc.y_layout = yl;
      tc.beta = yl == BSRMM_LAYOUT_ROW_MAJOR ? 0.0 : 1.0;
      tc.expect_variant = dtype == BSRMM_DTYPE_F16    ? "sm80_sddmm_f16_mma16816_t128x128"
                          : dtype == BSRMM_DTYPE_BF16 ? "sm80_sddmm_bf16_mma16816_t128x128"
                                                      : "cuda_sddmm_simt_";
      tc.seed = seed++;
      cases.push_back(tc);
    }
  return cases;
}

// The full name of the mma variant for a square block side (the largest tile that divides it).
std::string mma_name(bsrmm_dtype dtype, int32_t side, bsrmm_layout x_layout, bsrmm_layout y_layout) {
  const std::string tile = std::to_string(side) + "x" + std::to_string(side);
  return std::string("sm80_sddmm_") + (dtype == BSRMM_DTYPE_F16 ? "f16" : "bf16") + "_mma16816_t" +
         tile + (x_layout == BSRMM_LAYOUT_COL_MAJOR ? "_xc" : "") +
         (y_layout == BSRMM_LAYOUT_COL_MAJOR ? "_yc" : "_yr");
}

// A weight gradient dW = dY^T X: X = dY^T is column-major (M contiguous) with ld >= M. Blocks 16
// to 128 (each its own tile), T from one chunk to the training length and T = 264 (a partial
// last 32-deep chunk), pads 8 and 40 on X, both layouts of Y; beta 0 (NaN poison) and beta != 0.
std::vector<GpuSddmmCase> column_major_x_cases() {
  std::vector<GpuSddmmCase> cases;
  uint64_t seed = 400;
  for (bsrmm_dtype dtype : {BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16})
    for (int32_t side : {16, 32, 64, 128})
      for (int64_t t : {64, 264, 4096})
        for (bsrmm_layout yl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
          GpuSddmmCase tc;
          tc.bh = tc.bw = side;
          tc.block_rows = std::max<int64_t>(2, 256 / side);
          tc.block_cols = std::max<int64_t>(3, 384 / side);
          tc.density = side >= 64 ? 0.5 : 0.3;
          tc.t = t;
          tc.dtype = dtype;
          tc.x_layout = BSRMM_LAYOUT_COL_MAJOR;
          tc.y_layout = yl;
          tc.x_pad = seed % 2 == 0 ? 8 : 40;
          tc.y_pad = 8;
          tc.beta = seed % 3 == 0 ? 0.75 : 0.0;
          tc.alpha = seed % 4 == 0 ? -0.5 : 1.0;
          tc.expect_variant = mma_name(dtype, side, tc.x_layout, yl);
          tc.seed = seed++;
          cases.push_back(tc);
        }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(ShapesLayouts, GpuSddmm, ::testing::ValuesIn(shape_layout_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(LargeBlocks, GpuSddmm, ::testing::ValuesIn(large_block_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(ColumnMajorX, GpuSddmm, ::testing::ValuesIn(column_major_x_cases()),
                         case_name);

}  // namespace
}  // namespace bsrmm::test
