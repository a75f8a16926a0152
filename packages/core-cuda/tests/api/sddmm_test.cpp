// bsrmm_sddmm on the CPU against the float64 reference (support/sddmm_reference.hpp), over
// randomized operands: every dtype, block shapes 1x1 to 64x32, both layouts of X and Y with
// padded leading dimensions, T below, at and above the kernel's span (a ragged tail each time),
// alpha/beta (beta = 0 with NaN-poisoned values), T = 0, empty patterns, 1 and several threads.
#include "../support/random.hpp"
#include "../support/sddmm_reference.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace bsrmm::test {
namespace {

struct SddmmCase {
  int64_t block_rows = 4, block_cols = 5;
  int32_t bh = 4, bw = 4;
  double density = 0.5;
  int64_t t = 37;
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  bsrmm_layout x_layout = BSRMM_LAYOUT_ROW_MAJOR, y_layout = BSRMM_LAYOUT_ROW_MAJOR;
  int64_t x_pad = 0, y_pad = 0;
  double alpha = 1, beta = 0;
  int32_t threads = 2;
  uint64_t seed = 1;

  std::string name() const {
    static const char* dtypes[] = {"f32", "f16", "bf16", "f64"};
    std::ostringstream s;
    s << dtypes[dtype] << "_" << block_rows * bh << "x" << block_cols * bw << "_b" << bh << "x" << bw
      << "_d" << static_cast<int>(density * 100) << "_T" << t
      << (x_layout == BSRMM_LAYOUT_ROW_MAJOR ? "_Xr" : "_Xc") << (x_pad ? "p" : "")
      << (y_layout == BSRMM_LAYOUT_ROW_MAJOR ? "_Yr" : "_Yc") << (y_pad ? "p" : "")
      << (beta != 0 ? "_beta" : "") << (alpha != 1 ? "_alpha" : "") << "_t" << threads << "_s" << seed;
    return s.str();
  }
};

void PrintTo(const SddmmCase& tc, std::ostream* os) { *os << tc.name(); }

void run_case(const SddmmCase& tc) {
  Random rng(tc.seed);
  SddmmProblem p = make_sddmm_problem(tc, rng);

  Context ctx;
  ctx.set_num_threads(tc.threads);
  bsrmm_bsr_desc desc = p.pattern.desc();
  Matrix matrix(ctx, desc);
  bsrmm_dense xd = p.x.desc();
  bsrmm_dense yd = p.y.desc();
  bsrmm_dense vd = p.values.desc();
  sddmm(ctx, matrix, xd, yd, vd, tc.alpha, tc.beta);

  expect_matches(p.values, p.expected(), tc.name());
}

class Sddmm : public ::testing::TestWithParam<SddmmCase> {};

TEST_P(Sddmm, MatchesFloat64Reference) { run_case(GetParam()); }

std::string case_name(const ::testing::TestParamInfo<SddmmCase>& info) {
  return std::to_string(info.index) + "_" + info.param.name();
}

const bsrmm_dtype dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};
const std::pair<int32_t, int32_t> block_shapes[] = {{1, 1}, {2, 3}, {4, 4}, {16, 16}, {64, 32}};

// Every dtype x block shape x layout pair of X and Y, padded leading dimensions, both betas.
std::vector<SddmmCase> shape_layout_cases() {
  std::vector<SddmmCase> cases;
  uint64_t seed = 100;
  for (bsrmm_dtype dtype : dtypes)
    for (auto [bh, bw] : block_shapes)
      for (bsrmm_layout xl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
        for (bsrmm_layout yl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
          SddmmCase tc;
          tc.bh = bh;
          tc.bw = bw;
          tc.block_rows = std::max<int64_t>(2, 48 / bh);
          tc.block_cols = std::max<int64_t>(2, 48 / bw);
          tc.density = bh >= 16 ? 0.6 : 0.3;
          tc.t = 45;
          tc.dtype = dtype;
          tc.x_layout = xl;
          tc.y_layout = yl;
          tc.x_pad = 3;
          tc.y_pad = 5;
          tc.beta = (seed % 2 == 0) ? 0.0 : -0.75;
          tc.alpha = (seed % 3 == 0) ? 1.0 : 1.5;
          tc.seed = seed++;
          cases.push_back(tc);
        }
  return cases;
}

// T across the vector width and the kernel's span (512 f32 / 256 f64 elements per pass):
// exact multiples, ragged tails, several spans, on unpadded in-place and packed operands.
std::vector<SddmmCase> depth_cases() {
  std::vector<SddmmCase> cases;
  uint64_t seed = 200;
  for (bsrmm_dtype dtype : dtypes)
    for (int64_t t : {1, 7, 8, 64, 256, 257, 512, 1100})
      for (bsrmm_layout layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
        SddmmCase tc;
        tc.bh = 4;
        tc.bw = 8;
        tc.block_rows = 3;
        tc.block_cols = 3;
        tc.t = t;
        tc.dtype = dtype;
        tc.x_layout = layout;
        // X row-major with Y column-major is the in-place pair; the other pairs pack.
        tc.y_layout = layout == BSRMM_LAYOUT_ROW_MAJOR ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
        tc.beta = 0.5;
        tc.seed = seed++;
        cases.push_back(tc);
      }
  return cases;
}

// Edges: T = 0, an empty pattern, a full one, one thread, many threads over few blocks.
std::vector<SddmmCase> edge_cases() {
  std::vector<SddmmCase> cases;
  uint64_t seed = 300;
  auto add = [&](SddmmCase tc) {
    tc.seed = seed++;
    cases.push_back(tc);
  };
  SddmmCase tc;
  tc.t = 0;  // values = beta * values
  tc.beta = 2;
  add(tc);
  tc.beta = 0;  // values = 0 over the poison
  add(tc);
  tc = SddmmCase{};
  tc.density = 0;
  add(tc);
  tc = SddmmCase{};
  tc.density = 1;
  tc.threads = 1;
  add(tc);
  tc = SddmmCase{};
  tc.block_rows = 1;
  tc.block_cols = 2;
  tc.density = 1;
  tc.threads = 5;
  add(tc);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(ShapesLayouts, Sddmm, ::testing::ValuesIn(shape_layout_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Depths, Sddmm, ::testing::ValuesIn(depth_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Edges, Sddmm, ::testing::ValuesIn(edge_cases()), case_name);

}  // namespace
}  // namespace bsrmm::test
