// The f64 tensor-core (DMMA) variants of src/cuda/sm80: the untuned heuristic runs them for f64
// blocks whose sides are multiples of 16 once N reaches the mma width (the narrow kernels keep
// smaller N), and every one of them, forced, stays exact to f64 over long block rows (many
// pipeline stages round the ring), uneven and empty rows, N tails, both B and C layouts and
// every epilogue term. The short shapes of each variant are in variants_test.cpp.
#include "gpu_test_support.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

constexpr const char* kPrefix = "sm80_f64_";

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::vector<std::string> dmma_variants() {
  std::vector<std::string> names;
  for (int32_t i = 0; i < bsrmm_variant_count(); ++i) {
    const std::string name = bsrmm_variant_name(i);
    if (starts_with(name, kPrefix)) names.push_back(name);
  }
  return names;
}

Problem f64_problem(int64_t block_rows, int64_t block_cols, int32_t bh, int32_t bw, int64_t n, double density) {
  return shaped_problem(BSRMM_DTYPE_F64, block_rows, block_cols, bh, bw, n, density);
}

struct Pick {
  const char* label;
  int32_t bh, bw;
  int64_t n;
};

// The heuristic's pick, with the tuner off. The device must run DMMA (sm_80+) for the sm80
// family to be eligible at all.
TEST(Sm80F64Heuristic, PicksDmmaFromMmaWidth) {
  BSRMM_REQUIRE_GPU();
  int major = 0;
  ASSERT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 8) GTEST_SKIP() << "DMMA needs compute capability 8.0+, device 0 has " << major;
  const Pick picks[] = {{"b16 N 16", 16, 16, 16},    {"b32 N 1000", 32, 32, 1000}, {"b64 N 256", 64, 64, 256},
                        {"b64x32 N 100", 64, 32, 100}, {"b128 N 64", 128, 128, 64}, {"b16x48 N 24", 16, 48, 24}};
  for (const Pick& pick : picks) {
    SCOPED_TRACE(pick.label);
    Problem p = f64_problem(std::max<int64_t>(2, 256 / pick.bh), std::max<int64_t>(2, 256 / pick.bw), pick.bh,
                            pick.bw, pick.n, 0.4);
    p.empty_rows = true;
    const Outcome outcome = run_and_check(p);
    EXPECT_TRUE(starts_with(outcome.variant, kPrefix)) << "ran " << outcome.variant;
  }
}

// Below N = 4 (DMMA's n8 at most a quarter used; from 4 the DMMA tiles won, docs/perf-log.md
// entry 79).
TEST(Sm80F64Heuristic, NarrowKeepsSmallN) {
  BSRMM_REQUIRE_GPU();
  for (int64_t n : {1, 2}) {
    SCOPED_TRACE("N " + std::to_string(n));
    const Outcome outcome = run_and_check(f64_problem(8, 8, 32, 32, n, 0.5));
    EXPECT_TRUE(starts_with(outcome.variant, "narrow_")) << "ran " << outcome.variant;
  }
}

// What a DMMA variant's name promises: the row tile, the N tile, the k chunk, B's layout.
struct Tile {
  int bm = 0, bn = 0, kc = 0;
  bool b_col_major = false;
};

Tile parse_tile(const std::string& name) {
  Tile tile;
  int stages = 0, warps_m = 0, warps_n = 0;
  char layout[8] = {};
  if (std::sscanf(name.c_str(), "sm80_f64_m%dn%dk%d_s%d_w%dx%d_b%7[a-z]", &tile.bm, &tile.bn, &tile.kc, &stages,
                  &warps_m, &warps_n, layout) == 7)
    tile.b_col_major = std::string(layout) == "col";
  return tile;
}

class ForcedDmma : public ::testing::TestWithParam<std::string> {};

TEST_P(ForcedDmma, LongRowsMatchFloat64) {
  BSRMM_REQUIRE_GPU();
  const std::string name = GetParam();
  const Tile tile = parse_tile(name);
  ASSERT_GT(tile.bm, 0) << "variant name not understood by this test: " << name;

  Problem base = f64_problem(4, 24, 2 * tile.bm, 2 * tile.kc, 2 * tile.bn + 5, 0.5);
  base.variant = name;
  base.b_layout = tile.b_col_major ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;

  Problem plain = base;  // ~12 blocks of 2 k chunks per row: every stage of the ring reused
  plain.empty_rows = true;
  run_and_check(plain);

  Problem epilogue = base;  // a one-element tail past a 16-byte vector, column-major C, every term
  epilogue.n = tile.bn + 1;
  epilogue.alpha = 0.3;
  epilogue.beta = -0.7;
  epilogue.bias = true;
  epilogue.activation = BSRMM_ACTIVATION_RELU;
  epilogue.c_layout = BSRMM_LAYOUT_COL_MAJOR;
  epilogue.c_ld_pad = 2;
  run_and_check(epilogue);

  Problem dense = base;  // every block stored, the block's width the k chunk, a padded B
  dense.block_rows = 3;
  dense.block_cols = 9;
  dense.block_width = tile.kc;
  dense.density = 1.0;
  dense.n = 3 * tile.bn - 3;
  dense.b_ld_pad = 6;
  dense.beta = 2.0;
  dense.activation = BSRMM_ACTIVATION_GELU;
  run_and_check(dense);
}

INSTANTIATE_TEST_SUITE_P(Sm80F64, ForcedDmma, ::testing::ValuesIn(dmma_variants()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ForcedDmma);

}  // namespace
}  // namespace bsrmm::test
