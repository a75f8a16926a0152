// bsrmm_context_set_sm_budget on a GPU: multiplies whose persistent grids are capped at 8 SMs,
// so every CTA (or cluster) runs many tiles and the balanced work lists are cut for 8 workers
// (4 clusters), not for the device's SMs. Each product is checked element by element against
// float64 with C NaN-poisoned (gpu_test_support.hpp): the heuristic's choice for each dtype and
// A^T, every square-64 bf16 sm90 variant forced by name (row tiles, CTA pairs, the 512-wide
// tiles, transposed), the dense fallback (cuBLASLt told the SM target) and the packed narrow
// kernel. A budget of 1 SM and one above the device's count run too. Skips without a GPU; the
// sm90 variants skip on devices other than compute capability 9.0.
#include "gpu_test_support.hpp"

#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

constexpr int32_t kBudget = 8;

// M = 2048, K = 1024 at blocks of 64: 32 block rows x N / 256 tiles, far more than 8 CTAs.
Problem budgeted(bsrmm_dtype dtype, int64_t n) {
  Problem p = shaped_problem(dtype, 32, 16, 64, 64, n, 0.3);
  p.empty_rows = true;
  p.sm_budget = kBudget;
  return p;
}

void expect_right(const Problem& p) {
  SCOPED_TRACE(p.describe() + ", seed " + std::to_string(test_seed()));
  const Outcome outcome = run_and_check(p);
  EXPECT_LE(outcome.relative_error, tolerance(p));
}

bool is_hopper() {
  cudaDeviceProp prop{};
  return cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major == 9 && prop.minor == 0;
}

TEST(SmBudget, HeuristicChoiceForEachDtypeAndTranspose) {
  BSRMM_REQUIRE_GPU();
  for (const bsrmm_dtype dtype : {BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F32, BSRMM_DTYPE_F64})
    for (const bsrmm_op op : {BSRMM_OP_NONE, BSRMM_OP_TRANSPOSE}) {
      Problem p = budgeted(dtype, 1536);
      p.op = op;
      expect_right(p);
    }
}

TEST(SmBudget, OneSmAndMoreThanTheDeviceHas) {
  BSRMM_REQUIRE_GPU();
  for (const int32_t budget : {1, 1 << 20}) {
    Problem p = budgeted(BSRMM_DTYPE_BF16, 1088);
    p.sm_budget = budget;
    expect_right(p);
  }
}

TEST(SmBudget, EverySquare64Bf16Sm90Variant) {
  BSRMM_REQUIRE_GPU();
  if (!is_hopper()) GTEST_SKIP() << "the sm90 variants need compute capability 9.0";
  int forced = 0;
  for (int32_t i = 0; i < bsrmm_variant_count(); ++i) {
    const std::string name = bsrmm_variant_name(i);
    // (fp8 row tiles, "sm90_tma_wgmma_e4m3xe4m3_bf16_b64_...", take fp8 operands: fp8_test.cpp.)
    if (name.rfind("sm90_tma_wgmma_bf16_b64_", 0) != 0) continue;
    // Cluster variants take N tiles in pairs: 1088 leaves the last pair half empty.
    Problem p = budgeted(BSRMM_DTYPE_BF16, name.find("_c2") != std::string::npos ? 1088 : 1536);
    if (name.find("_bcol") != std::string::npos) p.b_layout = BSRMM_LAYOUT_COL_MAJOR;
    if (name.find("_ccol") != std::string::npos) p.c_layout = BSRMM_LAYOUT_COL_MAJOR;
    // "_b64_wide": blocks 64 high and a larger multiple of 64 wide (transposed_variants.cu).
    if (name.find("_wide_") != std::string::npos) p.block_width = 128;
    p.variant = name;
    expect_right(p);
    ++forced;
  }
  EXPECT_GT(forced, 0) << "the build has no square-64 bf16 sm90 variant";
}

TEST(SmBudget, DenseFallbackAndPackedNarrow) {
  BSRMM_REQUIRE_GPU();
  Problem dense = budgeted(BSRMM_DTYPE_F16, 512);
  dense.variant = "dense_cublaslt_f16";
  expect_right(dense);
  // The packed kernel sizes its persistent grid from the SMs (resident CTAs per SM x SMs).
  Problem packed = budgeted(BSRMM_DTYPE_F32, 4);
  packed.block_rows = 512;
  packed.block_cols = 256;
  packed.block_height = packed.block_width = 4;
  packed.variant = "narrow_f32_simt_packed";
  expect_right(packed);
}

}  // namespace
}  // namespace bsrmm::test
