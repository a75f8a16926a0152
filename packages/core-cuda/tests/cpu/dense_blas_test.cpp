// cpu_dense_blas (one BLAS GEMM over the plan's dense copy of op(A), then bsrmm's epilogue)
// against a float64 sum over A's stored blocks: every dtype, op, layout pair with padding, odd
// block shapes, N = 1, alpha/beta with a NaN-poisoned C, bias and activations, NaN/Inf in B
// under A's structural zeros (which a dense product would turn into 0 * Inf = NaN). Then the
// heuristic (dense where A is dense, blocked where sparse) and the tuner. The BLAS-absent path:
// blas_library_test.cpp.
//
// The BLAS: $BSRMM_BLAS, else the default names, else (set before any test runs) the OpenBLAS
// bundled with the toolchain's numpy/scipy, as the Python binding would point BSRMM_BLAS at it.
// Without any, the tests that need one skip, saying so.
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <glob.h>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

class FindBlas : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* set = std::getenv("BSRMM_BLAS");
    if (set != nullptr && *set != '\0') return;
    for (const char* name : {"libopenblas.so.0", "libmkl_rt.so.2", "libmkl_rt.so.3"})
      if (dlopen(name, RTLD_NOW | RTLD_LOCAL) != nullptr) return;
    // packages/core-cuda/tests/cpu/this.cpp -> the repository root.
    std::string root = __FILE__;
    for (int up = 0; up < 5; ++up) root = root.substr(0, root.find_last_of('/'));
    const std::string pattern =
        root + "/.toolchain/venv/lib/python3*/site-packages/*.libs/libscipy_openblas*.so";
    glob_t found{};
    if (glob(pattern.c_str(), 0, nullptr, &found) == 0 && found.gl_pathc > 0)
      setenv("BSRMM_BLAS", found.gl_pathv[0], 0);
    globfree(&found);
  }
};
const ::testing::Environment* const find_blas = ::testing::AddGlobalTestEnvironment(new FindBlas);

constexpr const char* dense_variant = "cpu_dense_blas";
constexpr const char* blocked_variant = "cpu_blocked_simd";

// Why `variant` cannot run here ("" when it can): a tiny forced multiply says.
std::string why_not(const char* variant) {
  Context ctx;
  ctx.set_variant(variant);
  HostBsr a;
  a.rows = a.cols = 1;
  a.col_idx = {0};
  a.row_ptr = {0, 1};
  a.values.resize(sizeof(float));
  HostDense b(1, 1, BSRMM_DTYPE_F32), c(1, 1, BSRMM_DTYPE_F32);
  bsrmm_bsr_desc desc = a.desc();
  Matrix matrix(ctx, desc);
  bsrmm_dense bd = b.desc(), cd = c.desc();
  const bsrmm_matmul_options options = matmul_options();
  const bsrmm_status status = bsrmm_matmul(ctx.get(), matrix.get(), &bd, &cd, &options);
  return status == BSRMM_STATUS_SUCCESS ? std::string() : std::string(bsrmm_last_error());
}

std::string blas_missing() {
  static const std::string why = why_not(dense_variant);
  return why;
}

#define REQUIRE_BLAS()                                                      \
  do {                                                                      \
    if (!blas_missing().empty()) GTEST_SKIP() << "no CBLAS: " << blas_missing(); \
  } while (0)

struct DenseCase {
  int64_t block_rows = 6, block_cols = 5;
  int32_t bh = 4, bw = 4;
  double density = 0.5;
  int64_t n = 13;
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  bsrmm_layout b_layout = BSRMM_LAYOUT_ROW_MAJOR, c_layout = BSRMM_LAYOUT_ROW_MAJOR;
  int64_t b_pad = 0, c_pad = 0;
  bsrmm_op op = BSRMM_OP_NONE;
  double alpha = 1, beta = 0;
  bool bias = false;
  bsrmm_activation activation = BSRMM_ACTIVATION_NONE;
  bool nonfinite_b = false;  // NaN / +-Inf in B, some under A's structural zeros
  int32_t threads = 2;
  uint64_t seed = 1;

  std::string name() const {
    static const char* dtypes[] = {"f32", "f16", "bf16", "f64"};
    static const char* acts[] = {"", "_relu", "_gelu", "_silu"};
    std::ostringstream s;
    s << dtypes[dtype] << "_b" << bh << "x" << bw << "_" << block_rows << "x" << block_cols << "_d"
      << static_cast<int>(density * 100) << "_n" << n
      << (b_layout == BSRMM_LAYOUT_ROW_MAJOR ? "_Br" : "_Bc") << (b_pad ? "p" : "")
      << (c_layout == BSRMM_LAYOUT_ROW_MAJOR ? "_Cr" : "_Cc") << (c_pad ? "p" : "")
      << (op == BSRMM_OP_TRANSPOSE ? "_AT" : "") << (beta != 0 ? "_beta" : "")
      << (alpha != 1 ? "_alpha" : "") << (bias ? "_bias" : "") << acts[activation]
      << (nonfinite_b ? "_nonfinite" : "") << "_t" << threads << "_s" << seed;
    return s.str();
  }
};

void PrintTo(const DenseCase& tc, std::ostream* os) { *os << tc.name(); }

// act(alpha * sum over A's stored blocks + beta * C + bias), in float64: structural zeros never
// multiply B, as in the sparse variants.
Expected stored_block_reference(const DenseCase& tc, const HostBsr& a, const HostDense& b,
                                const HostDense& c_before, const std::vector<double>& bias) {
  const bool t = tc.op == BSRMM_OP_TRANSPOSE;
  Expected e;
  e.rows = t ? a.cols : a.rows;
  e.cols = b.cols();
  std::vector<double> sum(static_cast<size_t>(e.rows * e.cols), 0.0), mag(sum.size(), 0.0);
  for (int64_t r = 0; r + 1 < static_cast<int64_t>(a.row_ptr.size()); ++r)
    for (int64_t p = a.row_ptr[static_cast<size_t>(r)]; p < a.row_ptr[static_cast<size_t>(r) + 1]; ++p)
      for (int32_t i = 0; i < a.block_height; ++i)
        for (int32_t kk = 0; kk < a.block_width; ++kk) {
          const int64_t row = r * a.block_height + i, col = a.col_idx[static_cast<size_t>(p)] * a.block_width + kk;
          const int64_t out = t ? col : row, inner = t ? row : col;
          for (int64_t j = 0; j < e.cols; ++j) {
            const double term = a.value(p, i, kk) * b.get(inner, j);
            sum[static_cast<size_t>(out * e.cols + j)] += term;
            mag[static_cast<size_t>(out * e.cols + j)] += std::fabs(term);
          }
        }
  e.value.resize(sum.size());
  e.magnitude.resize(sum.size());
  for (int64_t i = 0; i < e.rows; ++i)
    for (int64_t j = 0; j < e.cols; ++j) {
      const size_t at = static_cast<size_t>(i * e.cols + j);
      double x = tc.alpha * sum[at];
      double m = std::fabs(tc.alpha) * mag[at];
      if (tc.beta != 0) {
        x += tc.beta * c_before.get(i, j);
        m += std::fabs(tc.beta * c_before.get(i, j));
      }
      if (tc.bias) {
        x += bias[static_cast<size_t>(i)];
        m += std::fabs(bias[static_cast<size_t>(i)]);
      }
      e.value[at] = reference_activation(x, tc.activation);
      e.magnitude[at] = std::isfinite(m) ? m : 0.0;
    }
  return e;
}

void run_case(const DenseCase& tc, const char* variant, const char* expect_variant) {
  Random rng(tc.seed);
  HostBsr a = random_bsr(rng, tc.block_rows, tc.block_cols, tc.bh, tc.bw, tc.density, tc.dtype);
  // Non-zero values everywhere A stores one, so a structural zero is the only zero.
  for (int64_t p = 0; p < a.nnzb(); ++p)
    for (int32_t i = 0; i < tc.bh; ++i)
      for (int32_t j = 0; j < tc.bw; ++j)
        if (a.value(p, i, j) == 0.0) a.set_value(p, i, j, 0.5);
  const bool t = tc.op == BSRMM_OP_TRANSPOSE;
  const int64_t m = t ? a.cols : a.rows;
  const int64_t k = t ? a.rows : a.cols;
  HostDense b(k, tc.n, tc.dtype, tc.b_layout, tc.b_pad);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < tc.n; ++j) b.set(i, j, round_to(tc.dtype, rng.uniform(-1, 1)));
  if (tc.nonfinite_b && k > 0 && tc.n > 0) {
    b.set(k - 1, 0, INFINITY);
    b.set(k / 2, tc.n - 1, -INFINITY);
    b.set(0, tc.n / 2, std::nan(""));
  }
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
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  if (variant != nullptr) ctx.set_variant(variant);
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
  if (m > 0 && tc.n > 0) {
    EXPECT_EQ(ctx.last_variant(), expect_variant) << tc.name();
  }
  expect_matches(c, stored_block_reference(tc, a, b, c_before, bias_values), tc.name());
  EXPECT_TRUE(c.padding_untouched()) << "C's padding was written: " << tc.name();
  // A second multiply reuses the plan's dense copy.
  HostDense c2 = c_before;
  bsrmm_dense cd2 = c2.desc();
  matmul(ctx, matrix, bd, cd2, options);
  expect_matches(c2, stored_block_reference(tc, a, b, c_before, bias_values), tc.name() + " (again)");
}

class DenseBlas : public ::testing::TestWithParam<DenseCase> {};

TEST_P(DenseBlas, MatchesStoredBlockReference) {
  REQUIRE_BLAS();
  run_case(GetParam(), dense_variant, dense_variant);
}

std::string case_name(const ::testing::TestParamInfo<DenseCase>& info) {
  return std::to_string(info.index) + "_" + info.param.name();
}

const bsrmm_dtype dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};

std::vector<DenseCase> layout_cases() {
  std::vector<DenseCase> cases;
  uint64_t seed = 100;
  for (bsrmm_dtype dtype : dtypes)
    for (bsrmm_op op : {BSRMM_OP_NONE, BSRMM_OP_TRANSPOSE})
      for (bsrmm_layout bl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
        for (bsrmm_layout cl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
          for (double beta : {0.0, 0.5}) {
            DenseCase tc;
            tc.bh = 3;
            tc.bw = 5;
            tc.dtype = dtype;
            tc.op = op;
            tc.b_layout = bl;
            tc.c_layout = cl;
            tc.b_pad = 3;
            tc.c_pad = 2;
            tc.beta = beta;
            tc.alpha = beta == 0 ? 1.0 : -0.75;
            tc.seed = seed++;
            cases.push_back(tc);
          }
  return cases;
}

std::vector<DenseCase> shape_cases() {
  const std::pair<int32_t, int32_t> shapes[] = {{1, 1}, {3, 3}, {5, 3}, {6, 6}, {7, 9}, {16, 16}, {32, 8}};
  std::vector<DenseCase> cases;
  uint64_t seed = 200;
  for (bsrmm_dtype dtype : dtypes)
    for (auto [bh, bw] : shapes)
      for (int64_t n : {1, 29}) {
        DenseCase tc;
        tc.dtype = dtype;
        tc.bh = bh;
        tc.bw = bw;
        tc.block_rows = std::max<int64_t>(1, 48 / bh);
        tc.block_cols = std::max<int64_t>(1, 40 / bw);
        tc.density = 0.4;
        tc.n = n;
        tc.seed = seed++;
        cases.push_back(tc);
      }
  return cases;
}

std::vector<DenseCase> epilogue_cases() {
  std::vector<DenseCase> cases;
  uint64_t seed = 300;
  for (bsrmm_dtype dtype : dtypes)
    for (bsrmm_activation act : {BSRMM_ACTIVATION_NONE, BSRMM_ACTIVATION_RELU, BSRMM_ACTIVATION_GELU,
                                 BSRMM_ACTIVATION_SILU})
      for (bool nonfinite : {false, true}) {
        DenseCase tc;
        tc.dtype = dtype;
        tc.activation = act;
        tc.bias = true;
        tc.alpha = 1.5;
        tc.beta = 0.5;
        tc.n = 17;
        tc.nonfinite_b = nonfinite;
        tc.seed = seed++;
        cases.push_back(tc);
      }
  return cases;
}

// NaN / Inf in B under structural zeros, on the direct path (beta 0, no epilogue: the GEMM
// writes C) and the staged one, alpha 0 included (NaN must still propagate), both ops.
std::vector<DenseCase> nonfinite_cases() {
  std::vector<DenseCase> cases;
  uint64_t seed = 400;
  for (bsrmm_dtype dtype : dtypes)
    for (bsrmm_op op : {BSRMM_OP_NONE, BSRMM_OP_TRANSPOSE})
      for (auto [alpha, beta] : {std::pair<double, double>{1.0, 0.0}, {-2.0, 0.0}, {0.0, 0.0}, {1.0, 0.5}})
        for (bsrmm_layout cl : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
          DenseCase tc;
          tc.dtype = dtype;
          tc.op = op;
          tc.alpha = alpha;
          tc.beta = beta;
          tc.c_layout = cl;
          tc.c_pad = 1;
          tc.density = 0.35;
          tc.nonfinite_b = true;
          tc.seed = seed++;
          cases.push_back(tc);
        }
  return cases;
}

std::vector<DenseCase> edge_cases() {
  std::vector<DenseCase> cases;
  DenseCase tc;
  tc.density = 0;  // no blocks: C = beta C + bias
  tc.beta = 2;
  tc.bias = true;
  cases.push_back(tc);
  tc = DenseCase{};
  tc.density = 1;
  tc.threads = 1;
  cases.push_back(tc);
  tc = DenseCase{};
  tc.n = 0;
  cases.push_back(tc);
  tc = DenseCase{};
  tc.block_rows = 1;
  tc.n = 100;
  tc.threads = 3;
  cases.push_back(tc);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Layout, DenseBlas, ::testing::ValuesIn(layout_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(BlockShape, DenseBlas, ::testing::ValuesIn(shape_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Epilogue, DenseBlas, ::testing::ValuesIn(epilogue_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Nonfinite, DenseBlas, ::testing::ValuesIn(nonfinite_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Edge, DenseBlas, ::testing::ValuesIn(edge_cases()), case_name);

// Untuned, a dense enough A runs the GEMM (with a known optimised BLAS) and a sparse one the
// blocked kernel; both answers are right.
TEST(DenseBlasHeuristic, DenseAPicksTheGemmSparseAPicksBlocked) {
  REQUIRE_BLAS();
  DenseCase tc;
  tc.block_rows = tc.block_cols = 24;
  tc.bh = tc.bw = 4;
  tc.n = 64;
  tc.density = 1.0;
  // (numpy's OpenBLAS, MKL or a system OpenBLAS: an optimised one)
  run_case(tc, nullptr, dense_variant);
  tc.density = 0.05;
  tc.seed = 2;
  // The sparse pick: tiny blocks run cpu_rowwise_simd where its AVX-512 kernels are built and
  // chosen (cpuid, BSRMM_CPU_ISA; a sanitized build has none), else the blocked variant.
  const bool rowwise_runs = why_not("cpu_rowwise_simd").empty();
  run_case(tc, nullptr, rowwise_runs ? "cpu_rowwise_simd" : blocked_variant);
}

// The tuner times the dense GEMM where it could win and may pick it; either way the answer is
// right and the choice is one of the CPU variants.
TEST(DenseBlasHeuristic, TunerConsidersTheGemm) {
  REQUIRE_BLAS();
  Random rng(5);
  HostBsr a = random_bsr(rng, 8, 8, 32, 32, 0.9, BSRMM_DTYPE_F32);
  HostDense b(a.cols, 64, BSRMM_DTYPE_F32), c(a.rows, 64, BSRMM_DTYPE_F32);
  for (int64_t i = 0; i < a.cols; ++i)
    for (int64_t j = 0; j < 64; ++j) b.set(i, j, round_to(BSRMM_DTYPE_F32, rng.uniform(-1, 1)));
  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_FORCE);
  bsrmm_bsr_desc desc = a.desc();
  Matrix matrix(ctx, desc);
  bsrmm_dense bd = b.desc(), cd = c.desc();
  const bsrmm_matmul_options options = matmul_options();
  matmul(ctx, matrix, bd, cd, options);
  const std::string ran = ctx.last_variant();
  EXPECT_TRUE(ran == dense_variant || ran == blocked_variant || ran == "cpu_rowwise_simd") << ran;
  DenseCase tc;
  expect_matches(c, stored_block_reference(tc, a, b, HostDense(a.rows, 64, BSRMM_DTYPE_F32), {}), ran);
}

}  // namespace
}  // namespace bsrmm::test
