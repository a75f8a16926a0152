// fp8 multiplies on the CPU against float64 of the dequantised operands: every pairing of E4M3
// and E5M2, every kind of scale for A and for B, C in f32, f16 and bf16, the epilogue, B in
// either layout, N = 1 and 7; on the heuristic's pick (a fast variant over A's dequantised f32
// values and B widened to f32) and on each of the three fp8 variants forced. Fresh random inputs
// per case; C starts as NaN (beta = 0 must not read it).
#include "../support/dense_reference.hpp"
#include "../support/fp8_operands.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace bsrmm::test {
namespace {

struct Fp8Case {
  bsrmm_dtype a_dtype, b_dtype, c_dtype;
  bsrmm_scale_kind a_kind, b_kind;
};

std::string describe(const Fp8Case& c) {
  return std::string(c.a_dtype == BSRMM_DTYPE_FLOAT8_E4M3 ? "e4m3" : "e5m2") + "x" +
         (c.b_dtype == BSRMM_DTYPE_FLOAT8_E4M3 ? "e4m3" : "e5m2") + "_c" + std::to_string(c.c_dtype) +
         "_a" + std::to_string(c.a_kind) + "_b" + std::to_string(c.b_kind);
}

struct Epilogue {
  double alpha = 1.0, beta = 0.0;
  bool bias = false;
  bsrmm_activation activation = BSRMM_ACTIVATION_NONE;
  bsrmm_layout b_layout = BSRMM_LAYOUT_ROW_MAJOR;
  bsrmm_op op_a = BSRMM_OP_NONE;  // TRANSPOSE: A^T, whose blocks keep their scales
  int64_t n = 7;                  // columns of B and C
  std::string variant;            // forced ("" for the heuristic's pick)
};

// The CPU variants that multiply fp8 (cpu_rowwise_simd only where AVX-512 is).
const char* const kFp8Variants[] = {"cpu_reference_f64acc", "cpu_blocked_simd", "cpu_rowwise_simd"};

// One multiply of fresh random operands (block 3 x 4, some block rows empty), checked against
// the float64 reference of the dequantised operands. Returns the variant that ran, or "" when
// the forced cpu_rowwise_simd declined (no AVX-512 here).
std::string check_case(const Fp8Case& k, const Epilogue& run, uint64_t seed) {
  Random rng(seed);
  HostBsr a = random_bsr(rng, 5, 4, 3, 4, 0.5, k.a_dtype);
  const std::vector<float> a_scales = random_scales(rng, scale_count(a, k.a_kind));
  const bool transposed = run.op_a == BSRMM_OP_TRANSPOSE;
  const int64_t op_rows = transposed ? a.cols : a.rows, op_cols = transposed ? a.rows : a.cols;
  HostDense b(op_cols, run.n, k.b_dtype, run.b_layout, 2);
  fill_random(b, rng);
  const std::vector<float> b_scales =
      random_scales(rng, k.b_kind == BSRMM_SCALE_PER_COLUMN ? b.cols() : 1);
  HostDense c(op_rows, b.cols(), k.c_dtype);  // NaN everywhere
  if (run.beta != 0.0) fill_random(c, rng);
  const HostDense c_before = c;
  std::vector<double> bias_values;
  HostDense bias(op_rows, 1, k.c_dtype);
  if (run.bias) {
    fill_random(bias, rng);
    for (int64_t i = 0; i < op_rows; ++i) bias_values.push_back(bias.get(i, 0));
  }

  Context ctx;
  ctx.set_variant(run.variant);
  const Matrix matrix = Matrix::scaled(ctx, a.desc(), scales_of(a_scales, k.a_kind));
  const bsrmm_scales b_scale_desc = scales_of(b_scales, k.b_kind);
  bsrmm_matmul_options options = matmul_options();
  options.alpha = run.alpha;
  options.beta = run.beta;
  options.bias = run.bias ? bias.bytes().data() : nullptr;
  options.activation = run.activation;
  options.op_a = run.op_a;
  options.b_scales = &b_scale_desc;
  const bsrmm_dense b_desc = b.desc();
  bsrmm_dense c_desc = c.desc();
  const bsrmm_status status = bsrmm_matmul(ctx.get(), matrix.get(), &b_desc, &c_desc, &options);
  if (status == BSRMM_STATUS_UNSUPPORTED && run.variant == "cpu_rowwise_simd") return "";
  EXPECT_EQ(status, BSRMM_STATUS_SUCCESS) << bsrmm_last_error();

  const Expected expected =
      reference_matmul(dequantised(a, a_scales, k.a_kind), a.rows, a.cols, run.op_a,
                       dequantised(b, b_scales), c_before, run.alpha, run.beta,
                       run.bias ? &bias_values : nullptr, run.activation);
  expect_matches(c, expected, describe(k));
  return ctx.last_variant();
}

class Fp8Matmul : public ::testing::TestWithParam<Fp8Case> {};

TEST_P(Fp8Matmul, MatchesFloat64OfTheDequantisedOperands) {
  uint64_t seed = 27;
  for (int64_t n : {int64_t{7}, int64_t{1}}) {
    Epilogue run;
    run.n = n;
    const std::string picked = check_case(GetParam(), run, seed++);
    EXPECT_TRUE(picked == "cpu_blocked_simd" || picked == "cpu_rowwise_simd") << picked;
    for (const char* variant : kFp8Variants) {
      run.variant = variant;
      const std::string ran = check_case(GetParam(), run, seed++);
      if (!ran.empty()) EXPECT_EQ(ran, variant);
    }
  }
}

std::vector<Fp8Case> every_case() {
  std::vector<Fp8Case> cases;
  for (bsrmm_dtype a : {BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2})
    for (bsrmm_dtype b : {BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2})
      for (bsrmm_dtype c : {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16})
        for (bsrmm_scale_kind ak : {BSRMM_SCALE_PER_TENSOR, BSRMM_SCALE_PER_BLOCK, BSRMM_SCALE_PER_BLOCK_ROW})
          for (bsrmm_scale_kind bk : {BSRMM_SCALE_PER_TENSOR, BSRMM_SCALE_PER_COLUMN})
            cases.push_back(Fp8Case{a, b, c, ak, bk});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Pairings, Fp8Matmul, ::testing::ValuesIn(every_case()),
                         [](const ::testing::TestParamInfo<Fp8Case>& info) { return describe(info.param); });

TEST(Fp8MatmulEpilogue, AlphaBetaBiasActivationAndColumnMajorB) {
  const Fp8Case k{BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2, BSRMM_DTYPE_BF16,
                  BSRMM_SCALE_PER_BLOCK, BSRMM_SCALE_PER_COLUMN};
  uint64_t seed = 100;
  for (bsrmm_activation act : {BSRMM_ACTIVATION_NONE, BSRMM_ACTIVATION_RELU, BSRMM_ACTIVATION_GELU,
                               BSRMM_ACTIVATION_SILU}) {
    for (bsrmm_layout layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR}) {
      Epilogue run;
      run.alpha = -1.5;
      run.beta = 0.75;
      run.bias = true;
      run.activation = act;
      run.b_layout = layout;
      check_case(k, run, seed++);
    }
  }
}

// op(A) = A^T: the plan's A^T keeps each block's scale (per block of A^T for A's per-block and
// per-block-row scales: a block row of A is a block column of A^T), with the epilogue.
TEST(Fp8MatmulTransposed, EachBlockKeepsItsScale) {
  uint64_t seed = 300;
  for (bsrmm_scale_kind a_kind : {BSRMM_SCALE_PER_TENSOR, BSRMM_SCALE_PER_BLOCK, BSRMM_SCALE_PER_BLOCK_ROW}) {
    for (bool epilogue : {false, true}) {
      const Fp8Case k{BSRMM_DTYPE_FLOAT8_E4M3, BSRMM_DTYPE_FLOAT8_E5M2, BSRMM_DTYPE_F32, a_kind,
                      BSRMM_SCALE_PER_COLUMN};
      Epilogue run;
      run.op_a = BSRMM_OP_TRANSPOSE;
      if (epilogue) {
        run.alpha = 0.5;
        run.beta = -1.0;
        run.bias = true;
        run.activation = BSRMM_ACTIVATION_GELU;
        run.b_layout = BSRMM_LAYOUT_COL_MAJOR;
      }
      for (const char* variant : kFp8Variants) {
        run.variant = variant;
        const std::string ran = check_case(k, run, seed++);
        if (!ran.empty()) EXPECT_EQ(ran, variant);
      }
    }
  }
}

// Sorting moves blocks; each keeps its own scale.
TEST(Fp8Matrix, SortingIndicesMovesTheBlockScales) {
  Random rng(31);
  HostBsr a = random_bsr(rng, 2, 4, 2, 2, 1.0, BSRMM_DTYPE_FLOAT8_E4M3);
  std::vector<float> scales = random_scales(rng, a.nnzb());
  const std::vector<double> want = dequantised(a, scales, BSRMM_SCALE_PER_BLOCK);
  // Reverse the blocks of every row, with their scales.
  HostBsr shuffled = a;
  std::vector<float> shuffled_scales = scales;
  for (size_t r = 0; r + 1 < a.row_ptr.size(); ++r) {
    const int64_t begin = a.row_ptr[r], end = a.row_ptr[r + 1];
    for (int64_t p = begin; p < end; ++p) {
      const int64_t q = begin + end - 1 - p;
      shuffled.col_idx[static_cast<size_t>(q)] = a.col_idx[static_cast<size_t>(p)];
      shuffled_scales[static_cast<size_t>(q)] = scales[static_cast<size_t>(p)];
      for (int32_t i = 0; i < 2; ++i)
        for (int32_t j = 0; j < 2; ++j) shuffled.set_value(q, i, j, a.value(p, i, j));
    }
  }
  Context ctx;
  const Matrix m = Matrix::scaled(ctx, shuffled.desc(), scales_of(shuffled_scales, BSRMM_SCALE_PER_BLOCK),
                                  BSRMM_CREATE_SORT_INDICES);
  bsrmm_scale_kind kind{};
  int64_t count = 0;
  // NULL data asks for the kind and count only.
  ASSERT_EQ(bsrmm_matrix_export_scales(m.get(), &kind, &count, nullptr), BSRMM_STATUS_SUCCESS)
      << bsrmm_last_error();
  EXPECT_EQ(count, a.nnzb());
  std::vector<float> stored(static_cast<size_t>(a.nnzb()));
  ASSERT_EQ(bsrmm_matrix_export_scales(m.get(), &kind, &count, stored.data()), BSRMM_STATUS_SUCCESS)
      << bsrmm_last_error();
  EXPECT_EQ(kind, BSRMM_SCALE_PER_BLOCK);
  EXPECT_EQ(count, a.nnzb());
  EXPECT_EQ(stored, scales);  // back in sorted (the original) order
  // A copy keeps them too, and multiplies to the same product.
  const Matrix copy = m.copy_to(ctx);
  ASSERT_EQ(bsrmm_matrix_export_scales(copy.get(), &kind, &count, stored.data()), BSRMM_STATUS_SUCCESS);
  EXPECT_EQ(stored, scales);
  HostDense b(a.cols, 3, BSRMM_DTYPE_FLOAT8_E4M3);
  fill_random(b, rng);
  const std::vector<float> one{1.0f};
  const bsrmm_scales b_scales = scales_of(one, BSRMM_SCALE_PER_TENSOR);
  bsrmm_matmul_options options = matmul_options();
  options.b_scales = &b_scales;
  HostDense c(a.rows, 3, BSRMM_DTYPE_F32);
  bsrmm_dense c_desc = c.desc();
  matmul(ctx, copy, b.desc(), c_desc, options);
  const HostDense no_c(a.rows, 3, BSRMM_DTYPE_F32);
  expect_matches(c, reference_matmul(want, a.rows, a.cols, BSRMM_OP_NONE, dequantised(b, one), no_c, 1.0,
                                     0.0, nullptr, BSRMM_ACTIVATION_NONE),
                 "sorted fp8 copy");
}

// The tuner measures fp8 problems (the fast variants at their thread counts; the reference only
// runs when forced) and files them under a key that names the three dtypes.
TEST(Fp8Matmul, TuneMeasuresTheFastVariants) {
  Random rng(41);
  HostBsr a = random_bsr(rng, 4, 4, 4, 4, 0.5, BSRMM_DTYPE_FLOAT8_E5M2);
  const std::vector<float> a_scales = random_scales(rng, a.nnzb());
  HostDense b(a.cols, 5, BSRMM_DTYPE_FLOAT8_E4M3);
  fill_random(b, rng);
  const std::vector<float> b_scales = random_scales(rng, 5);
  HostDense c(a.rows, 5, BSRMM_DTYPE_F16);
  Context ctx;
  const Matrix m = Matrix::scaled(ctx, a.desc(), scales_of(a_scales, BSRMM_SCALE_PER_BLOCK));
  const bsrmm_scales bs = scales_of(b_scales, BSRMM_SCALE_PER_COLUMN);
  bsrmm_matmul_options options = matmul_options();
  options.b_scales = &bs;
  const bsrmm_dense b_desc = b.desc();
  bsrmm_dense c_desc = c.desc();
  ASSERT_EQ(bsrmm_tune(ctx.get(), m.get(), &b_desc, &c_desc, &options), BSRMM_STATUS_SUCCESS)
      << bsrmm_last_error();
  EXPECT_TRUE(ctx.last_variant() == "cpu_blocked_simd" || ctx.last_variant() == "cpu_rowwise_simd")
      << ctx.last_variant();
  const HostDense no_c(a.rows, 5, BSRMM_DTYPE_F16);
  expect_matches(c, reference_matmul(dequantised(a, a_scales, BSRMM_SCALE_PER_BLOCK), a.rows, a.cols,
                                     BSRMM_OP_NONE, dequantised(b, b_scales), no_c, 1.0, 0.0, nullptr,
                                     BSRMM_ACTIVATION_NONE),
                 "tuned fp8");
  size_t needed = 0;
  ASSERT_EQ(bsrmm_tuner_cache_entries(nullptr, 0, &needed), BSRMM_STATUS_SUCCESS);
  std::string entries(needed, '\0');
  ASSERT_EQ(bsrmm_tuner_cache_entries(entries.data(), entries.size(), nullptr), BSRMM_STATUS_SUCCESS);
  EXPECT_NE(entries.find("dtype=float8_e5m2*float8_e4m3->f16"), std::string::npos) << entries;
}

}  // namespace
}  // namespace bsrmm::test
