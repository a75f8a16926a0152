// The dense fallback (src/cuda/dense_fallback/): its placement rule on the CPU, and on a GPU with
// cuBLASLt each dense_cublaslt_* variant forced by name against the float64 reference (random
// operands, poisoned C, every element checked): square and rectangular blocks, both layouts of
// B and C, op(A) = A^T, alpha/beta, bias and every activation, a caller's stream, a misaligned
// B, borrowed values (the per-call dense copy); and NaN/Inf in B under A's structural zeros, which the dense GEMM alone would spread.
#include "../support/host_arrays.hpp"
#include "../support/random.hpp"
#include "cuda/dense_fallback/cublaslt_library.hpp"
#include "cuda/dense_fallback/heuristic.hpp"
#include "gpu_test_support.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

using cuda::dense_fallback::break_even_density;
using cuda::dense_fallback::Placement;
using cuda::dense_fallback::placement;
using cuda::dense_fallback::tiny_block_break_even;
using cuda::dense_fallback::tiny_block_placement;
using cuda::dense_fallback::SparseFamily;

// ---- the placement rule (host code, runs everywhere) ----

TEST(DenseFallbackRule, BreakEvenIsTheFittedTable) {
  // docs/perf-log.md, entry "dense fallback": crossings of the H100 grid against dense cuBLAS.
  EXPECT_DOUBLE_EQ(break_even_density(16, 16, SparseFamily::sm90), 0.20);
  EXPECT_DOUBLE_EQ(break_even_density(32, 32, SparseFamily::sm90), 0.45);
  EXPECT_DOUBLE_EQ(break_even_density(64, 64, SparseFamily::sm90), 0.55);
  EXPECT_DOUBLE_EQ(break_even_density(128, 128, SparseFamily::sm90), 0.84);
  EXPECT_DOUBLE_EQ(break_even_density(16, 16, SparseFamily::sm80), 0.09);
  EXPECT_DOUBLE_EQ(break_even_density(32, 32, SparseFamily::sm80), 0.17);
  EXPECT_DOUBLE_EQ(break_even_density(64, 64, SparseFamily::sm80), 0.31);
  EXPECT_DOUBLE_EQ(break_even_density(128, 128, SparseFamily::sm80), 0.41);
  // Generic kernels are unmeasured and take the sm80 values.
  EXPECT_DOUBLE_EQ(break_even_density(64, 64, SparseFamily::generic), 0.31);
  // sm80: a 16 x 64 block has the area of a 32 x 32 one. sm90 runs it as four 16 x 16 parts
  // (and 32 x 64 as two 32 x 32 ones), and blocks 64 or 128 high at their height's rate.
  EXPECT_DOUBLE_EQ(break_even_density(16, 64, SparseFamily::sm80), 0.17);
  EXPECT_DOUBLE_EQ(break_even_density(16, 64, SparseFamily::sm90), 0.20);
  EXPECT_DOUBLE_EQ(break_even_density(32, 64, SparseFamily::sm90), 0.45);
  EXPECT_DOUBLE_EQ(break_even_density(64, 32, SparseFamily::sm90), 0.55);
  EXPECT_DOUBLE_EQ(break_even_density(64, 128, SparseFamily::sm90), 0.55);
  EXPECT_DOUBLE_EQ(break_even_density(128, 64, SparseFamily::sm90), 0.84);
  EXPECT_GT(break_even_density(64, 32, SparseFamily::sm80), 0.17);
  EXPECT_LT(break_even_density(64, 32, SparseFamily::sm80), 0.31);
  // A width the row tiles do not take goes by area (64 x 16 that of block 32).
  EXPECT_DOUBLE_EQ(break_even_density(64, 16, SparseFamily::sm90), 0.45);
  // Between measured sizes: interpolated; outside them: clamped.
  const double b48 = break_even_density(48, 48, SparseFamily::sm90);
  EXPECT_GT(b48, 0.45);
  EXPECT_LT(b48, 0.55);
  EXPECT_DOUBLE_EQ(break_even_density(4, 4, SparseFamily::sm90), 0.20);
  EXPECT_DOUBLE_EQ(break_even_density(256, 256, SparseFamily::sm90), 0.84);
}

TEST(DenseFallbackRule, PlacementFollowsDensityBlockAndDtype) {
  const auto f16 = BSRMM_DTYPE_F16, bf16 = BSRMM_DTYPE_BF16, f32 = BSRMM_DTYPE_F32;
  // The grid cells of docs/perf-log.md: b16 loses to dense from d = 0.25, b32 at 0.5; b64
  // still wins at 0.5 (421 vs 387 TFLOPS); b128 wins everywhere measured.
  EXPECT_EQ(placement(0.125, f16, 16, 16, SparseFamily::sm90), Placement::last);
  EXPECT_EQ(placement(0.25, f16, 16, 16, SparseFamily::sm90), Placement::first);
  EXPECT_EQ(placement(0.25, bf16, 16, 16, SparseFamily::sm90), Placement::first);
  EXPECT_EQ(placement(0.25, f16, 32, 32, SparseFamily::sm90), Placement::last);
  EXPECT_EQ(placement(0.5, f16, 32, 32, SparseFamily::sm90), Placement::first);
  EXPECT_EQ(placement(0.5, f16, 64, 64, SparseFamily::sm90), Placement::last);
  EXPECT_EQ(placement(0.6, f16, 64, 64, SparseFamily::sm90), Placement::first);
  EXPECT_EQ(placement(0.5, f16, 128, 128, SparseFamily::sm90), Placement::last);
  EXPECT_EQ(placement(0.9, f16, 128, 128, SparseFamily::sm90), Placement::first);
  // Far below the break-even the dense copy is not even timed.
  EXPECT_EQ(placement(0.05, f16, 16, 16, SparseFamily::sm90), Placement::skip);
  EXPECT_EQ(placement(0.25, f16, 128, 128, SparseFamily::sm90), Placement::skip);
  // The slower sm80 kernels hand over earlier.
  EXPECT_EQ(placement(0.5, f16, 128, 128, SparseFamily::sm80), Placement::first);
  // No measurement backs a default for f32/f64: timed, never the untuned pick.
  EXPECT_EQ(placement(0.9, f32, 16, 16, SparseFamily::sm80), Placement::last);
  EXPECT_EQ(placement(1.0, BSRMM_DTYPE_F64, 16, 16, SparseFamily::generic), Placement::last);
  EXPECT_EQ(placement(0.01, f32, 16, 16, SparseFamily::sm80), Placement::skip);
  // Monotone in density for every measured block size.
  for (int32_t block : {16, 32, 64, 128}) {
    Placement previous = Placement::skip;
    for (double d = 0.0; d <= 1.0; d += 0.01) {
      const Placement now = placement(d, f16, block, block, SparseFamily::sm90);
      EXPECT_GE(int(now), int(previous)) << "block " << block << " density " << d;
      previous = now;
    }
    EXPECT_EQ(previous, Placement::first) << "a full block-" << block << " matrix goes dense";
  }
}

TEST(DenseFallbackRule, TinyBlocksAtLargeNAreTimedFromAFewPercent) {
  const auto f16 = BSRMM_DTYPE_F16, f32 = BSRMM_DTYPE_F32, f64 = BSRMM_DTYPE_F64;
  // The H100 coverage suite's tf32 8 x 8 power-law case (d 0.031, N 1024): dense tf32 took
  // 0.112 ms, the narrow kernel 0.187, and the dense copy was never timed.
  EXPECT_EQ(tiny_block_placement(0.031, f32, true, 1024, false, 64), Placement::last);
  // The same in exact f32 (a SIMT SGEMM, ~50 TFLOPS): the narrow kernel stays.
  EXPECT_EQ(tiny_block_placement(0.031, f32, false, 1024, false, 64), Placement::skip);
  EXPECT_EQ(tiny_block_placement(0.06, f64, false, 1024, false, 64), Placement::last);
  // A stencil's 2 x 2 bf16-like density (0.00055 at N 1024) is far below any dense GEMM.
  EXPECT_EQ(tiny_block_placement(0.00055, f16, false, 1024, false, 64), Placement::skip);
  // f16 at N 4096 from ~0.4%, but at N 32 the GEMM reads all of A for little work.
  EXPECT_EQ(tiny_block_placement(0.004, f16, false, 4096, false, 64), Placement::last);
  EXPECT_EQ(tiny_block_placement(0.004, f16, false, 32, false, 64), Placement::skip);
  // On skewed rows (power-law) from twice the break-even the dense GEMM is the default: tf32 and
  // bf16 power-law 2x2-8x8 at d 1/32, N 256-1024 ran 1.3-7x faster dense (entry 79); f64's
  // break-even (~0.09) is far above 1/32, so there the tuner still decides.
  EXPECT_EQ(tiny_block_placement(0.031, f32, true, 1024, true, 64), Placement::first);
  EXPECT_EQ(tiny_block_placement(0.031, f16, false, 256, true, 64), Placement::first);
  EXPECT_EQ(tiny_block_placement(0.031, f64, false, 1024, true, 64), Placement::skip);
  EXPECT_EQ(tiny_block_placement(0.004, f16, false, 4096, true, 64), Placement::last);
  // Uniform rows by block area: 2x2 from twice the break-even, 4x4 from four times, 8x8 never
  // (bf16 8x8 at d 1/32, N 256: the mma kernel ran 2x faster than dense; entry 81).
  EXPECT_EQ(tiny_block_placement(0.031, f16, false, 256, false, 4), Placement::first);
  EXPECT_EQ(tiny_block_placement(0.031, f16, false, 256, false, 16), Placement::first);
  EXPECT_EQ(tiny_block_placement(0.031, f32, true, 256, false, 16), Placement::last);
  EXPECT_EQ(tiny_block_placement(0.031, f16, false, 256, false, 64), Placement::last);
  EXPECT_EQ(tiny_block_placement(0.031, f32, true, 64, false, 4), Placement::last) << "N 64: below twice";
  // Never rising with N, and never past the rate ratio once compute-bound.
  double previous = 1.0;
  for (int64_t n = 17; n <= 65536; n *= 2) {
    const double even = tiny_block_break_even(f16, false, n);
    EXPECT_LE(even, previous) << "N " << n;
    EXPECT_GE(even, 5.0 / 700.0) << "N " << n;
    previous = even;
  }
}

// ---- the variants on a GPU ----

// Skips without a GPU or without cuBLASLt, with the reason.
#define REQUIRE_CUBLASLT()                                                  \
  do {                                                                      \
    BSRMM_REQUIRE_GPU();                                                    \
    std::string why;                                                        \
    if (::bsrmm::cuda::lt::api(&why) == nullptr) GTEST_SKIP() << why;       \
  } while (0)

struct Kind {
  const char* variant;
  bsrmm_dtype dtype;
  bsrmm_f32_mode f32_mode;
};

const Kind kKinds[] = {
    {"dense_cublaslt_f16", BSRMM_DTYPE_F16, BSRMM_F32_EXACT},
    {"dense_cublaslt_bf16", BSRMM_DTYPE_BF16, BSRMM_F32_EXACT},
    {"dense_cublaslt_tf32", BSRMM_DTYPE_F32, BSRMM_F32_TF32},
    {"dense_cublaslt_f32", BSRMM_DTYPE_F32, BSRMM_F32_EXACT},
    {"dense_cublaslt_f64", BSRMM_DTYPE_F64, BSRMM_F32_EXACT},
};

class DenseFallback : public ::testing::TestWithParam<Kind> {};

TEST_P(DenseFallback, MatchesFloat64Reference) {
  REQUIRE_CUBLASLT();
  const Kind kind = GetParam();
  Problem base;
  base.variant = kind.variant;
  base.dtype = kind.dtype;
  base.f32_mode = kind.f32_mode;

  Problem direct = base;  // beta 0, no epilogue: cuBLASLt writes C; structural zeros present
  direct.block_rows = 6;
  direct.block_cols = 5;
  direct.density = 0.4;
  direct.n = 72;
  direct.alpha = 1.5;
  run_and_check(direct);

  Problem rectangular = base;  // staged (beta), column-major B, odd N, an empty block row
  rectangular.block_rows = 5;
  rectangular.block_cols = 3;
  rectangular.block_height = 8;
  rectangular.block_width = 24;
  rectangular.empty_rows = true;
  rectangular.n = 37;
  rectangular.b_layout = BSRMM_LAYOUT_COL_MAJOR;
  rectangular.beta = 0.5;
  run_and_check(rectangular);

  Problem transposed = base;  // op(A) = A^T, column-major C with padding, bias + GELU
  transposed.op = BSRMM_OP_TRANSPOSE;
  transposed.block_rows = 3;
  transposed.block_cols = 4;
  transposed.block_height = 32;
  transposed.block_width = 16;
  transposed.n = 50;
  transposed.c_layout = BSRMM_LAYOUT_COL_MAJOR;
  transposed.c_ld_pad = 3;
  transposed.bias = true;
  transposed.activation = BSRMM_ACTIVATION_GELU;
  transposed.device_arrays = true;
  run_and_check(transposed);

  Problem both_col = base;  // column-major B and C, bias + ReLU, negative alpha
  both_col.block_rows = 4;
  both_col.block_cols = 6;
  both_col.b_layout = BSRMM_LAYOUT_COL_MAJOR;
  both_col.c_layout = BSRMM_LAYOUT_COL_MAJOR;
  both_col.n = 33;
  both_col.alpha = -0.75;
  both_col.bias = true;
  both_col.activation = BSRMM_ACTIVATION_RELU;
  run_and_check(both_col);

  Problem full = base;  // no structural zeros (no column check), SiLU with beta, N = 1
  full.block_rows = 3;
  full.block_cols = 2;
  full.density = 1.0;
  full.n = 1;
  full.beta = -1.25;
  full.activation = BSRMM_ACTIVATION_SILU;
  run_and_check(full);

  Problem zero_alpha = base;  // alpha 0 runs staged: C = beta * C exactly
  zero_alpha.alpha = 0.0;
  zero_alpha.beta = 2.0;
  zero_alpha.n = 16;
  run_and_check(zero_alpha);

  Problem misaligned = base;  // B one element into its buffer, rows of odd length
  misaligned.b_offset = 1;
  misaligned.b_ld_pad = 1;
  misaligned.b_ld_align = 1;
  misaligned.n = 21;
  run_and_check(misaligned);

  // A step's matrix (values borrowed, as torch builds one per call): op(A) goes densely into the
  // call's own scratch, not the plan. Rows of 16-byte multiples (copied in 16-byte pieces), then
  // odd widths and an empty block row (element by element), with bias + GELU on the staged path.
  Problem borrowed = base;
  borrowed.device_arrays = true;
  borrowed.borrow_values = true;
  borrowed.block_rows = 7;
  borrowed.block_cols = 5;
  borrowed.block_height = 16;
  borrowed.block_width = 16;
  borrowed.n = 40;
  run_and_check(borrowed);
  Problem borrowed_odd = borrowed;
  borrowed_odd.block_height = 3;
  borrowed_odd.block_width = 5;
  borrowed_odd.empty_rows = true;
  borrowed_odd.bias = true;
  borrowed_odd.activation = BSRMM_ACTIVATION_GELU;
  run_and_check(borrowed_odd);

  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Problem streamed = base;  // the caller's stream, staged
  streamed.stream = stream;
  streamed.block_rows = 8;
  streamed.n = 256;
  streamed.bias = true;
  run_and_check(streamed);
  ASSERT_CUDA(cudaStreamDestroy(stream));
}

INSTANTIATE_TEST_SUITE_P(Kinds, DenseFallback, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return std::string(info.param.variant).substr(15);
                         });

// B holds NaN and infinities in rows that A's structural zeros meet: the dense GEMM gives NaN
// for whole columns there; the result must be the sum over stored blocks, as every sparse
// kernel computes it. The columns are found from the product's first row, which C's layout
// lays out contiguously (row-major) or ldc apart (column-major); block row 0 misses block
// column 2, so that row's non-finite products come from structural zeros alone.
TEST(DenseFallbackNonfinite, BUnderStructuralZerosStaysOutOfTheSum) {
  REQUIRE_CUBLASLT();
  const bsrmm_dtype dtype = BSRMM_DTYPE_F16;
  Random rng(test_seed());
  SCOPED_TRACE("replay with BSRMM_TEST_SEED=" + std::to_string(test_seed()));
  // 6 x 6 blocks of 16, about half present; block column 2 absent from block row 0 only.
  HostBsr a;
  a.rows = a.cols = 6 * 16;
  a.block_height = a.block_width = 16;
  a.dtype = dtype;
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = 0; c < 6; ++c) {
      if (c == 2 ? r == 0 : !rng.chance(0.5)) continue;
      a.col_idx.push_back(c);
      a.values.resize(size_t(a.nnzb() * a.block_elements()) * dtype_size(dtype));
      for (int32_t i = 0; i < 16; ++i)
        for (int32_t j = 0; j < 16; ++j) a.set_value(a.nnzb() - 1, i, j, round_to(dtype, rng.uniform(-1, 1)));
    }
    a.row_ptr.push_back(a.nnzb());
  }
  const int64_t m = a.rows, k = a.cols, n = 64;

  const auto name = [](bsrmm_layout layout) { return layout == BSRMM_LAYOUT_ROW_MAJOR ? "row-major" : "column-major"; };
  for (bsrmm_layout b_layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
    for (bsrmm_layout c_layout : {BSRMM_LAYOUT_ROW_MAJOR, BSRMM_LAYOUT_COL_MAJOR})
      for (bool staged : {false, true}) {
        SCOPED_TRACE(std::string("B ") + name(b_layout) + ", C " + name(c_layout) +
                     (staged ? ", staged (beta, ReLU)" : ", direct"));
        HostDense b(k, n, dtype, b_layout);
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < n; ++j) b.set(i, j, round_to(dtype, rng.uniform(-1, 1)));
        b.set(2 * 16 + 3, 5, INFINITY);    // under block column 2: zero in block row 0
        b.set(2 * 16 + 9, 40, std::nan(""));
        b.set(2 * 16 + 15, 63, -INFINITY);
        HostDense c(m, n, dtype, c_layout);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) c.set(i, j, staged ? round_to(dtype, rng.uniform(-1, 1)) : std::nan(""));
        const double alpha = 1.0, beta = staged ? 0.5 : 0.0;
        const bsrmm_activation activation = staged ? BSRMM_ACTIVATION_RELU : BSRMM_ACTIVATION_NONE;

        // act(alpha * sum over stored blocks + beta * C), in float64.
        std::vector<double> expected(size_t(m * n)), magnitude(size_t(m * n));
        for (int64_t r = 0; r < 6; ++r)
          for (int32_t i = 0; i < 16; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double sum = 0, mag = 0;
              for (int64_t p = a.row_ptr[size_t(r)]; p < a.row_ptr[size_t(r) + 1]; ++p)
                for (int32_t kk = 0; kk < 16; ++kk) {
                  const double term = a.value(p, i, kk) * b.get(a.col_idx[size_t(p)] * 16 + kk, j);
                  sum += term;
                  mag += std::fabs(term);
                }
              const int64_t row = r * 16 + i;
              double x = alpha * sum + (staged ? beta * c.get(row, j) : 0.0);
              if (staged) x = std::isnan(x) ? x : (x > 0 ? x : 0.0);
              expected[size_t(row * n + j)] = x;
              magnitude[size_t(row * n + j)] = mag + (staged ? std::fabs(beta * c.get(row, j)) : 0.0);
            }

        bsrmm_context_t ctx = nullptr;
        ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CUDA, 0}, &ctx));
        ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_variant(ctx, "dense_cublaslt_f16"));
        bsrmm_matrix_t matrix = nullptr;
        bsrmm_bsr_desc desc = a.desc();
        ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx, &desc, BSRMM_CREATE_DEFAULT, &matrix));
        DeviceBuffer b_device(b.bytes().size()), c_device(c.bytes().size());
        b_device.upload(b.bytes().data(), b.bytes().size());
        c_device.upload(c.bytes().data(), c.bytes().size());
        bsrmm_dense bd = b.desc(), cd = c.desc();
        bd.data = b_device.get();
        cd.data = c_device.get();
        bd.device = cd.device = bsrmm_device{BSRMM_DEVICE_CUDA, 0};
        bsrmm_matmul_options options = bsrmm_matmul_options_default();
        options.alpha = alpha;
        options.beta = beta;
        options.activation = activation;
        ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matmul(ctx, matrix, &bd, &cd, &options));
        ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx));
        EXPECT_STREQ(bsrmm_context_last_variant(ctx), "dense_cublaslt_f16");
        c_device.download(c.bytes().data(), c.bytes().size());
        bsrmm_matrix_destroy(matrix);
        bsrmm_context_destroy(ctx);

        int bad = 0;
        for (int64_t i = 0; i < m && bad < 10; ++i)
          for (int64_t j = 0; j < n && bad < 10; ++j) {
            const double want = expected[size_t(i * n + j)], got = c.get(i, j);
            const bool ok = std::isnan(want)   ? std::isnan(got)
                            : std::isinf(want) ? got == want
                                               : std::fabs(got - want) <= 2e-3 * magnitude[size_t(i * n + j)] + 1e-3;
            if (!ok) {
              ++bad;
              ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", expected " << want;
            }
          }
      }
}

}  // namespace
}  // namespace bsrmm::test
