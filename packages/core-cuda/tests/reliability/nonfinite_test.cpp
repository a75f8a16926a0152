// NaN and Inf propagate as IEEE 754 says, on every variant this build can run (CPU always; CUDA
// variants where a GPU is present), for every dtype, op and epilogue: NaN/Inf in A's stored
// blocks, in B (also under A's structural zeros, which are never multiplied, as in every sparse
// BLAS), in C read through beta, in the bias, and as alpha or beta themselves. The expected
// result is a float64 sum over A's stored blocks; every element is checked (NaN where NaN, the
// same infinity, otherwise within the dtype's bound), and C's padding must stay untouched. After
// them the same context multiplies finite inputs correctly.
#include "stress_support.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#if BSRMM_WITH_CUDA
#include "support/device_buffer.hpp"
#include "support/gpu_presence.hpp"
#endif

namespace bsrmm::test {
namespace {

struct NonfiniteCase {
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  bsrmm_op op = BSRMM_OP_NONE;
  double alpha = 1.0, beta = 0.5;
  bsrmm_activation activation = BSRMM_ACTIVATION_NONE;
  bool bias = true;
  int32_t block = 4;  // square blocks; 16 for the tensor-core variants
  uint64_t seed = 1;
};

std::string describe(const NonfiniteCase& tc, const std::string& variant) {
  static const char* dtypes[] = {"f32", "f16", "bf16", "f64"};
  return variant + " " + dtypes[tc.dtype] + (tc.op == BSRMM_OP_TRANSPOSE ? " A^T" : " A") + " alpha " +
         std::to_string(tc.alpha) + " beta " + std::to_string(tc.beta) + " activation " +
         std::to_string(static_cast<int>(tc.activation)) + (tc.bias ? " bias" : "");
}

struct Operands {
  HostBsr a;
  HostDense b, c;
  std::vector<double> bias;
  std::vector<unsigned char> bias_bytes;
};

// A and B with finite random values plus NaN, +Inf and -Inf at chosen places; C with a NaN
// (read only when beta != 0); the bias with an infinity.
Operands build(const NonfiniteCase& tc) {
  Random rng(tc.seed);
  Operands o{random_bsr(rng, 4, 3, tc.block, tc.block, 0.5, tc.dtype), HostDense(1, 1, tc.dtype),
             HostDense(1, 1, tc.dtype), {}, {}};
  HostBsr& a = o.a;
  if (a.nnzb() < 3) {  // the specials need three stored blocks
    a = random_bsr(rng, 4, 3, tc.block, tc.block, 1.0, tc.dtype);
  }
  a.set_value(0, 0, 0, std::nan(""));
  a.set_value(1, tc.block - 1, 0, INFINITY);
  a.set_value(a.nnzb() - 1, 1, 1, -INFINITY);
  const bool t = tc.op == BSRMM_OP_TRANSPOSE;
  const int64_t m = t ? a.cols : a.rows, k = t ? a.rows : a.cols, n = 6;
  o.b = HostDense(k, n, tc.dtype, BSRMM_LAYOUT_ROW_MAJOR, 2);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) o.b.set(i, j, round_to(tc.dtype, rng.uniform(-1, 1)));
  o.b.set(1, 2, std::nan(""));
  o.b.set(k - 1, 0, INFINITY);
  o.b.set(k / 2, n - 1, -INFINITY);
  // Odd padding on the CPU; on the GPU a leading dimension of 8k keeps rows 16-byte aligned.
  o.c = HostDense(m, n, tc.dtype, BSRMM_LAYOUT_COL_MAJOR, tc.block == 16 ? 8 : 1);
  if (tc.beta != 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) o.c.set(i, j, round_to(tc.dtype, rng.uniform(-1, 1)));
    o.c.set(m - 1, 3, std::nan(""));
  }
  if (tc.bias) {
    o.bias_bytes.resize(static_cast<size_t>(m) * dtype_size(tc.dtype));
    for (int64_t i = 0; i < m; ++i) {
      o.bias.push_back(i == 2 ? -INFINITY : round_to(tc.dtype, rng.uniform(-1, 1)));
      store(tc.dtype, o.bias_bytes.data() + i * dtype_size(tc.dtype), o.bias.back());
    }
  }
  return o;
}

// act(alpha * sum over A's stored blocks + beta * C + bias), in float64.
Expected stored_block_reference(const NonfiniteCase& tc, const Operands& o) {
  const HostBsr& a = o.a;
  const bool t = tc.op == BSRMM_OP_TRANSPOSE;
  Expected e;
  e.rows = t ? a.cols : a.rows;
  e.cols = o.b.cols();
  std::vector<double> sum(static_cast<size_t>(e.rows * e.cols), 0.0), mag(sum.size(), 0.0);
  for (int64_t r = 0; r + 1 < static_cast<int64_t>(a.row_ptr.size()); ++r) {
    for (int64_t p = a.row_ptr[static_cast<size_t>(r)]; p < a.row_ptr[static_cast<size_t>(r) + 1]; ++p) {
      for (int32_t i = 0; i < a.block_height; ++i) {
        for (int32_t kk = 0; kk < a.block_width; ++kk) {
          const int64_t row = r * a.block_height + i, col = a.col_idx[static_cast<size_t>(p)] * a.block_width + kk;
          const int64_t out = t ? col : row, inner = t ? row : col;
          for (int64_t j = 0; j < e.cols; ++j) {
            const double term = a.value(p, i, kk) * o.b.get(inner, j);
            sum[static_cast<size_t>(out * e.cols + j)] += term;
            mag[static_cast<size_t>(out * e.cols + j)] += std::fabs(term);
          }
        }
      }
    }
  }
  e.value.resize(sum.size());
  e.magnitude.resize(sum.size());
  for (int64_t i = 0; i < e.rows; ++i) {
    for (int64_t j = 0; j < e.cols; ++j) {
      const size_t at = static_cast<size_t>(i * e.cols + j);
      double x = tc.alpha * sum[at];
      double m = std::fabs(tc.alpha) * mag[at];
      if (tc.beta != 0) {
        x += tc.beta * o.c.get(i, j);
        m += std::fabs(tc.beta * o.c.get(i, j));
      }
      if (tc.bias) {
        x += o.bias[static_cast<size_t>(i)];
        m += std::fabs(o.bias[static_cast<size_t>(i)]);
      }
      e.value[at] = reference_activation(x, tc.activation);
      e.magnitude[at] = std::isfinite(m) ? m : 0.0;
    }
  }
  return e;
}

std::vector<NonfiniteCase> cases(int32_t block, std::vector<bsrmm_dtype> dtypes) {
  std::vector<NonfiniteCase> out;
  uint64_t seed = 1;
  for (bsrmm_dtype dtype : dtypes) {
    for (bsrmm_op op : {BSRMM_OP_NONE, BSRMM_OP_TRANSPOSE}) {
      for (bsrmm_activation act : {BSRMM_ACTIVATION_NONE, BSRMM_ACTIVATION_RELU, BSRMM_ACTIVATION_GELU,
                                   BSRMM_ACTIVATION_SILU}) {
        NonfiniteCase tc;
        tc.dtype = dtype;
        tc.op = op;
        tc.activation = act;
        tc.block = block;
        tc.seed = seed++;
        out.push_back(tc);
      }
      // beta == 0 (C's NaN never read), and alpha / beta that are themselves NaN or Inf.
      for (auto [alpha, beta] : {std::pair<double, double>{1.0, 0.0}, {NAN, 0.5}, {INFINITY, 0.0},
                                 {-INFINITY, 1.0}, {1.0, NAN}, {0.0, INFINITY}, {0.0, 0.0}}) {
        NonfiniteCase tc;
        tc.dtype = dtype;
        tc.op = op;
        tc.alpha = alpha;
        tc.beta = beta;
        tc.bias = false;
        tc.block = block;
        tc.seed = seed++;
        out.push_back(tc);
      }
    }
  }
  return out;
}

TEST(Nonfinite, PropagatesOnEveryCpuVariant) {
  int checked = 0;
  for (const char* variant : {"cpu_blocked_simd", "cpu_reference_f64acc"}) {
    Context ctx;
    ctx.set_tuning_mode(BSRMM_TUNING_OFF);
    ctx.set_num_threads(2);
    ctx.set_variant(variant);
    for (const NonfiniteCase& tc :
         cases(4, {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64})) {
      Operands o = build(tc);
      const HostDense c_before = o.c;
      bsrmm_bsr_desc desc = o.a.desc();
      const Matrix a(ctx, desc);
      bsrmm_matmul_options options = matmul_options();
      options.op_a = tc.op;
      options.alpha = tc.alpha;
      options.beta = tc.beta;
      options.activation = tc.activation;
      options.bias = tc.bias ? o.bias_bytes.data() : nullptr;
      bsrmm_dense bd = o.b.desc(), cd = o.c.desc();
      matmul(ctx, a, bd, cd, options);
      Operands for_reference{o.a, o.b, c_before, o.bias, {}};
      expect_matches(o.c, stored_block_reference(tc, for_reference), describe(tc, variant));
      EXPECT_TRUE(o.c.padding_untouched()) << describe(tc, variant);
      ++checked;
    }
    // Nothing sticks (no floating-point state changed, no poisoned cache): finite inputs next.
    expect_still_works(ctx, std::string("NaN/Inf inputs on ") + variant);
  }
  std::printf("[ nonfinite] %d CPU cases checked element by element\n", checked);
}

#if BSRMM_WITH_CUDA

TEST(Nonfinite, PropagatesOnEveryCudaVariant) {
  BSRMM_REQUIRE_GPU();
  Context ctx(cuda(0));
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  int checked = 0, unsupported = 0;
  for (int32_t index = 0; index < bsrmm_variant_count(); ++index) {
    const std::string variant = bsrmm_variant_name(index);
    bsrmm_variant_kind kind = BSRMM_VARIANT_MATMUL;
    ASSERT_EQ(bsrmm_variant_get_kind(index, &kind), BSRMM_STATUS_SUCCESS);
    if (variant.rfind("cpu_", 0) == 0 || kind != BSRMM_VARIANT_MATMUL) continue;
    ctx.set_variant(variant);
    for (const NonfiniteCase& tc :
         cases(16, {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64})) {
      Operands o = build(tc);
      const HostDense c_before = o.c;
      bsrmm_bsr_desc desc = o.a.desc();
      const Matrix a(ctx, desc);
      const DeviceBuffer b(o.b.bytes()), c(o.c.bytes());
      const DeviceBuffer bias(o.bias_bytes.empty() ? std::vector<unsigned char>(2) : o.bias_bytes);
      ASSERT_TRUE(b.get() && c.get() && bias.get()) << "cudaMalloc failed";
      bsrmm_matmul_options options = matmul_options();
      options.op_a = tc.op;
      options.alpha = tc.alpha;
      options.beta = tc.beta;
      options.activation = tc.activation;
      options.bias = tc.bias ? bias.get() : nullptr;
      bsrmm_dense bd = o.b.desc(), cd = o.c.desc();
      bd.data = b.get();
      cd.data = c.get();
      bd.device = cd.device = cuda(0);
      const bsrmm_status status = bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, &options);
      if (status == BSRMM_STATUS_UNSUPPORTED) {  // this variant does not take this dtype or shape
        ++unsupported;
        continue;
      }
      ASSERT_EQ(status, BSRMM_STATUS_SUCCESS) << describe(tc, variant) << ": " << bsrmm_last_error();
      ctx.synchronize();
      ASSERT_TRUE(c.download(o.c.bytes()));
      Operands for_reference{o.a, o.b, c_before, o.bias, {}};
      expect_matches(o.c, stored_block_reference(tc, for_reference), describe(tc, variant));
      EXPECT_TRUE(o.c.padding_untouched()) << describe(tc, variant);
      ++checked;
    }
  }
  std::printf("[ nonfinite] %d CUDA cases checked, %d variant/dtype pairs unsupported\n", checked, unsupported);
  EXPECT_GT(checked, 0);
}

#endif

}  // namespace
}  // namespace bsrmm::test
