// bsrmm_matmul on the CPU against the float64 dense reference, over randomized operands:
// every dtype, both variants, both layouts of B and C with padded leading dimensions, A and
// A^T, square, rectangular, 1xN and Nx1 blocks, densities 0..1 with empty rows, N = 1,
// alpha/beta (beta = 0 with a NaN-poisoned C), bias and activations, 1 and several threads.
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

struct MatmulCase {
  int64_t block_rows = 4, block_cols = 4;
  int32_t bh = 4, bw = 4;
  double density = 0.5;
  int64_t n = 8;
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  bsrmm_layout b_layout = BSRMM_LAYOUT_ROW_MAJOR, c_layout = BSRMM_LAYOUT_ROW_MAJOR;
  int64_t b_pad = 0, c_pad = 0;
  bsrmm_op op = BSRMM_OP_NONE;
  double alpha = 1, beta = 0;
  bool bias = false;
  bsrmm_activation activation = BSRMM_ACTIVATION_NONE;
  const char* variant = "cpu_blocked_simd";
  int32_t threads = 1;
  uint64_t seed = 1;

  std::string name() const {
    static const char* dtypes[] = {"f32", "f16", "bf16", "f64"};
    static const char* acts[] = {"", "_relu", "_gelu", "_silu"};
    std::ostringstream s;
    s << dtypes[dtype] << "_" << block_rows * bh << "x" << block_cols * bw << "_b" << bh << "x"
      << bw << "_d" << static_cast<int>(density * 100) << "_n" << n
      << (b_layout == BSRMM_LAYOUT_ROW_MAJOR ? "_Br" : "_Bc") << (b_pad ? "p" : "")
      << (c_layout == BSRMM_LAYOUT_ROW_MAJOR ? "_Cr" : "_Cc") << (c_pad ? "p" : "")
      << (op == BSRMM_OP_TRANSPOSE ? "_AT" : "") << (beta != 0 ? "_beta" : "")
      << (alpha != 1 ? "_alpha" : "") << (bias ? "_bias" : "") << acts[activation]
      << (std::string(variant) == "cpu_blocked_simd" ? "_blocked" : "_reference") << "_t"
      << threads << "_s" << seed;
    return s.str();
  }
};

void PrintTo(const MatmulCase& tc, std::ostream* os) { *os << tc.name(); }

void run_case(const MatmulCase& tc) {
  Random rng(tc.seed);
  HostBsr a = random_bsr(rng, tc.block_rows, tc.block_cols, tc.bh, tc.bw, tc.density, tc.dtype);
  const bool t = tc.op == BSRMM_OP_TRANSPOSE;
  const int64_t m = t ? a.cols : a.rows;
  const int64_t k = t ? a.rows : a.cols;

  HostDense b(k, tc.n, tc.dtype, tc.b_layout, tc.b_pad);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < tc.n; ++j) b.set(i, j, round_to(tc.dtype, rng.uniform(-1, 1)));
  HostDense c(m, tc.n, tc.dtype, tc.c_layout, tc.c_pad);
  if (tc.beta != 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < tc.n; ++j) c.set(i, j, round_to(tc.dtype, rng.uniform(-1, 1)));
  }  // else: C keeps the NaN poison, which beta = 0 must not propagate
  const HostDense c_before = c;

  std::vector<double> bias_values;
  std::vector<unsigned char> bias_bytes;
  if (tc.bias) {
    bias_bytes.resize(static_cast<size_t>(m) * dtype_size(tc.dtype));
    for (int64_t i = 0; i < m; ++i) {
      bias_values.push_back(round_to(tc.dtype, rng.uniform(-1, 1)));
      store(tc.dtype, bias_bytes.data() + i * dtype_size(tc.dtype), bias_values.back());
    }
  }

  Context ctx;
  ctx.set_num_threads(tc.threads);
  ctx.set_variant(tc.variant);
  bsrmm_bsr_desc desc = a.desc();
  Matrix matrix(ctx, desc);
  bsrmm_matmul_options options = matmul_options();
  options.op_a = tc.op;
  options.alpha = tc.alpha;
  options.beta = tc.beta;
  options.bias = tc.bias ? bias_bytes.data() : nullptr;
  options.activation = tc.activation;
  bsrmm_dense bd = b.desc();
  bsrmm_dense cd = c.desc();
  matmul(ctx, matrix, bd, cd, options);
  if (m > 0 && tc.n > 0) EXPECT_EQ(ctx.last_variant(), tc.variant);

  const Expected expected = reference_matmul(a.to_dense(), a.rows, a.cols, tc.op, b, c_before,
                                             tc.alpha, tc.beta, tc.bias ? &bias_values : nullptr,
                                             tc.activation);
  expect_matches(c, expected, tc.name());
  EXPECT_TRUE(c.padding_untouched()) << "C's padding was written";
}

class Matmul : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(Matmul, MatchesFloat64Reference) { run_case(GetParam()); }

std::string case_name(const ::testing::TestParamInfo<MatmulCase>& info) {
  return std::to_string(info.index) + "_" + info.param.name();
}

const char* const variants[] = {"cpu_blocked_simd", "cpu_reference_f64acc"};
const bsrmm_dtype dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};

// Every dtype x variant x op x layout pair, on a shape with a ragged column tail (n = 13).
std::vector<MatmulCase> dtype_layout_cases() {
  std::vector<MatmulCase> cases;
  uint64_t seed = 100;
  for (bsrmm_dtype dtype : dtypes)
    for (const char* variant : variants)
      for (bsrmm_op op : {BSRMM_OP_NONE, BSRMM_OP_TRANSPOSE})
        for (bsrmm_layout bl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
          for (bsrmm_layout cl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
            MatmulCase tc;
            tc.block_rows = 6;
            tc.block_cols = 5;
            tc.bh = 8;
            tc.bw = 4;
            tc.density = 0.4;
            tc.n = 13;
            tc.dtype = dtype;
            tc.variant = variant;
            tc.op = op;
            tc.b_layout = bl;
            tc.c_layout = cl;
            tc.b_pad = 3;
            tc.c_pad = 2;
            tc.beta = 0.5;
            tc.seed = seed++;
            cases.push_back(tc);
          }
  return cases;
}

// Block shapes from 1x1 to 256-wide, square and rectangular, on both variants.
std::vector<MatmulCase> block_shape_cases() {
  const std::pair<int32_t, int32_t> shapes[] = {{1, 1},  {1, 8},  {8, 1},   {3, 5},  {5, 3},
                                                {16, 16}, {32, 32}, {64, 64}, {2, 256}, {256, 1},
                                                {7, 9},  {64, 16}};
  std::vector<MatmulCase> cases;
  uint64_t seed = 200;
  for (auto [bh, bw] : shapes)
    for (const char* variant : variants) {
      MatmulCase tc;
      tc.bh = bh;
      tc.bw = bw;
      tc.block_rows = std::max<int64_t>(1, 96 / bh);
      tc.block_cols = std::max<int64_t>(1, 96 / bw);
      tc.density = 0.3;
      tc.n = 29;
      tc.variant = variant;
      tc.threads = 2;
      tc.seed = seed++;
      cases.push_back(tc);
    }
  return cases;
}

// Sizes at the edges: empty patterns, full density, N = 1, empty dimensions, wide N, threads.
std::vector<MatmulCase> edge_cases() {
  std::vector<MatmulCase> cases;
  uint64_t seed = 300;
  auto add = [&](MatmulCase tc) {
    for (const char* variant : variants) {
      tc.variant = variant;
      tc.seed = seed++;
      cases.push_back(tc);
    }
  };
  MatmulCase tc;
  tc.density = 0;  // no blocks: C = beta C + bias
  tc.beta = 2;
  tc.bias = true;
  add(tc);
  tc = MatmulCase{};
  tc.density = 0.01;
  tc.block_rows = 20;
  tc.block_cols = 20;
  add(tc);
  tc = MatmulCase{};
  tc.density = 1;
  add(tc);
  tc = MatmulCase{};
  tc.n = 1;
  tc.block_rows = 12;
  add(tc);
  tc.c_layout = BSRMM_LAYOUT_COL_MAJOR;
  tc.b_layout = BSRMM_LAYOUT_COL_MAJOR;
  add(tc);
  tc = MatmulCase{};
  tc.n = 0;
  add(tc);
  tc = MatmulCase{};
  tc.block_rows = 0;
  add(tc);
  tc = MatmulCase{};
  tc.block_cols = 0;  // K = 0: C = beta C + bias
  tc.beta = -1;
  tc.bias = true;
  add(tc);
  tc = MatmulCase{};
  tc.n = 200;  // several column tiles and a tail
  tc.block_rows = 3;
  tc.threads = 4;
  add(tc);
  tc = MatmulCase{};
  tc.block_rows = 1;  // one block row: the columns are split across threads
  tc.n = 100;
  tc.threads = 3;
  add(tc);
  tc = MatmulCase{};
  tc.block_rows = 40;
  tc.block_cols = 10;
  tc.threads = 3;
  tc.alpha = -0.75;
  tc.beta = 0.25;
  add(tc);
  tc.dtype = BSRMM_DTYPE_F64;
  tc.n = 16;  // a multiple of the vector width: B used in place, no staging
  add(tc);
  tc.dtype = BSRMM_DTYPE_F32;
  add(tc);
  return cases;
}

// Every activation with bias, on every dtype.
std::vector<MatmulCase> epilogue_cases() {
  std::vector<MatmulCase> cases;
  uint64_t seed = 400;
  for (bsrmm_dtype dtype : dtypes)
    for (bsrmm_activation act : {BSRMM_ACTIVATION_NONE, BSRMM_ACTIVATION_RELU, BSRMM_ACTIVATION_GELU,
                                 BSRMM_ACTIVATION_SILU})
      for (const char* variant : variants) {
        MatmulCase tc;
        tc.dtype = dtype;
        tc.activation = act;
        tc.bias = true;
        tc.alpha = 1.5;
        tc.beta = 0.5;
        tc.n = 17;
        tc.variant = variant;
        tc.seed = seed++;
        cases.push_back(tc);
      }
  return cases;
}

// A random sweep over everything at once.
std::vector<MatmulCase> random_cases() {
  Random rng(2024);
  std::vector<MatmulCase> cases;
  const int32_t sides[] = {1, 2, 3, 4, 8, 16, 32};
  const double densities[] = {0.0, 0.01, 0.1, 0.3, 0.7, 1.0};
  for (int i = 0; i < 80; ++i) {
    MatmulCase tc;
    tc.bh = sides[rng.below(7)];
    tc.bw = sides[rng.below(7)];
    tc.block_rows = 1 + rng.below(std::max<int64_t>(1, 64 / tc.bh));
    tc.block_cols = 1 + rng.below(std::max<int64_t>(1, 64 / tc.bw));
    tc.density = densities[rng.below(6)];
    tc.n = 1 + rng.below(40);
    tc.dtype = dtypes[rng.below(4)];
    tc.b_layout = rng.chance(0.5) ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR;
    tc.c_layout = rng.chance(0.5) ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR;
    tc.b_pad = rng.below(3);
    tc.c_pad = rng.below(3);
    tc.op = rng.chance(0.5) ? BSRMM_OP_NONE : BSRMM_OP_TRANSPOSE;
    tc.alpha = rng.chance(0.5) ? 1.0 : rng.uniform(-2, 2);
    tc.beta = rng.chance(0.5) ? 0.0 : rng.uniform(-2, 2);
    tc.bias = rng.chance(0.3);
    tc.activation = static_cast<bsrmm_activation>(rng.below(4));
    tc.variant = variants[rng.below(2)];
    tc.threads = 1 + static_cast<int32_t>(rng.below(3));
    tc.seed = 1000 + i;
    cases.push_back(tc);
  }
  return cases;
}

// NaN in A, infinities in B and C: they propagate as IEEE arithmetic says (inf - inf = NaN).
TEST(MatmulSpecialValues, NanAndInfinityPropagate) {
  for (bsrmm_dtype dtype : dtypes) {
    for (const char* variant : variants) {
      SCOPED_TRACE(std::string(variant) + " dtype " + std::to_string(dtype));
      Random rng(31);
      HostBsr a = random_bsr(rng, 3, 3, 4, 4, 1.0, dtype);
      a.set_value(0, 0, 0, std::nan(""));  // row 0 of C becomes NaN
      HostDense b(12, 9, dtype);
      for (int64_t i = 0; i < 12; ++i)
        for (int64_t j = 0; j < 9; ++j) b.set(i, j, round_to(dtype, rng.uniform(-1, 1)));
      b.set(5, 2, INFINITY);  // column 2: +-inf
      b.set(6, 7, INFINITY);  // column 7: inf - inf where A's signs differ
      b.set(7, 7, -INFINITY);
      HostDense c(12, 9, dtype);
      c.fill(0.25);
      c.set(3, 4, INFINITY);
      const HostDense c_before = c;
      Context ctx;
      ctx.set_variant(variant);
      Matrix m(ctx, a.desc());
      bsrmm_matmul_options options = matmul_options();
      options.beta = 0.5;
      bsrmm_dense bd = b.desc(), cd = c.desc();
      matmul(ctx, m, bd, cd, options);
      expect_matches(c, reference_matmul(a.to_dense(), 12, 12, BSRMM_OP_NONE, b, c_before, 1.0, 0.5, nullptr,
                                         BSRMM_ACTIVATION_NONE),
                     "special values");
      EXPECT_TRUE(std::isnan(c.get(0, 0)));
      EXPECT_TRUE(std::isinf(c.get(3, 4)));
    }
  }
}

// GELU and SiLU at their ends, through each fast CPU variant's tile store (f32 runs them four
// lanes at a time, cpu/epilogue.hpp) and the reference: the bias puts NaN, +-inf and +-100 into
// some rows of act(A B + bias), C in both layouts. NaN stays NaN, +inf stays +inf, -inf gives
// 0; everything else matches float64 of x / (1 + exp(-t)) to the dtype's tolerance.
TEST(MatmulSpecialValues, GeluAndSiluAtTheirEnds) {
  const double specials[] = {std::nan(""), INFINITY, -INFINITY, -100.0, 100.0};
  for (bsrmm_dtype dtype : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F64}) {
    for (const char* variant : {"cpu_blocked_simd", "cpu_rowwise_simd", "cpu_reference_f64acc"}) {
      for (bsrmm_activation act : {BSRMM_ACTIVATION_GELU, BSRMM_ACTIVATION_SILU}) {
        for (bsrmm_layout layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
          SCOPED_TRACE(std::string(variant) + " dtype " + std::to_string(dtype) + " activation " +
                       std::to_string(act) + " layout " + std::to_string(layout));
          Random rng(47);
          HostBsr a = random_bsr(rng, 3, 2, 8, 8, 0.7, dtype);
          HostDense b(16, 37, dtype);
          fill_random(b, rng);
          HostDense c(24, 37, dtype, layout);
          const HostDense c_before = c;
          std::vector<double> bias(24);
          HostDense bias_array(24, 1, dtype);
          for (int64_t i = 0; i < 24; ++i) {
            // Rows 0, 3, 6, ... get a special value; the rest values across the activations' range.
            bias_array.set(i, 0, i % 3 == 0 ? specials[(i / 3) % 5] : round_to(dtype, rng.uniform(-12, 12)));
            bias[static_cast<size_t>(i)] = bias_array.get(i, 0);
          }
          Context ctx;
          ctx.set_variant(variant);
          Matrix m(ctx, a.desc());
          bsrmm_matmul_options options = matmul_options();
          options.activation = act;
          options.bias = bias_array.bytes().data();
          bsrmm_dense bd = b.desc(), cd = c.desc();
          try {
            matmul(ctx, m, bd, cd, options);
          } catch (const Error& error) {
            // cpu_rowwise_simd needs AVX-512 or AVX2 + FMA; where both are absent it refuses by
            // name and the other two variants carry the test.
            if (std::string(variant) == "cpu_rowwise_simd" && error.status() == BSRMM_STATUS_UNSUPPORTED) continue;
            throw;
          }
          const Expected z = reference_matmul(a.to_dense(), 24, 16, BSRMM_OP_NONE, b, c_before, 1.0, 0.0, &bias,
                                              BSRMM_ACTIVATION_NONE);
          const double tolerance = dtype == BSRMM_DTYPE_F32 ? 1e-5 : 1e-12;
          for (int64_t i = 0; i < 24; ++i) {
            for (int64_t j = 0; j < 37; ++j) {
              const double x = z.value[static_cast<size_t>(i * 37 + j)], got = c.get(i, j);
              if (std::isnan(x)) {
                EXPECT_TRUE(std::isnan(got)) << i << "," << j;
              } else if (std::isinf(x)) {
                EXPECT_EQ(got, x > 0 ? x : 0.0) << i << "," << j;
              } else {
                const double t = act == BSRMM_ACTIVATION_SILU ? x : 1.5957691216057308 * (x + 0.044715 * x * x * x);
                const double want = x / (1.0 + std::exp(-t));
                EXPECT_NEAR(got, want, tolerance * std::max(1.0, std::fabs(x))) << "x = " << x << " at " << i << "," << j;
              }
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DtypeLayout, Matmul, ::testing::ValuesIn(dtype_layout_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(BlockShape, Matmul, ::testing::ValuesIn(block_shape_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Edge, Matmul, ::testing::ValuesIn(edge_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Epilogue, Matmul, ::testing::ValuesIn(epilogue_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Random, Matmul, ::testing::ValuesIn(random_cases()), case_name);

}  // namespace
}  // namespace bsrmm::test
