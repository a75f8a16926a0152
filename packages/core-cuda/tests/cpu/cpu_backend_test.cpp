// The CPU backend through the Backend interface (src/backend/backend.hpp), as src/api calls it:
// every variant and the heuristic's pick against float64 on fresh random operands with a
// NaN-poisoned C; the dense copy asked for only by the variant that reads it, and the heuristic
// falling back to a sparse variant when that copy finds no memory; the tuner's candidates (the
// heuristic's pick first, thread counts); names it does not run refused.
#include "../../src/common/error.hpp"
#include "../../src/cpu/blas_library.hpp"
#include "../support/dense_reference.hpp"
#include "../support/random.hpp"
#include "../../src/cpu/rowwise.hpp"
#include "cpu_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace bsrmm::test {
namespace {

// op(A) densely in cpu::dense_copy_dtype, as the plan would build it, counting the requests;
// `out_of_memory` makes every request fail as an allocation beyond the machine's memory does.
class TestDenseCopy final : public backend::DenseCopy {
 public:
  TestDenseCopy(const HostBsr& a, bool out_of_memory) : out_of_memory_(out_of_memory) {
    const std::vector<double> dense = a.to_dense();
    if (cpu::dense_copy_dtype(a.dtype) == BSRMM_DTYPE_F64) {
      f64_ = dense;
    } else {
      f32_.assign(dense.begin(), dense.end());
    }
  }
  const void* get(void*) override {
    ++requests;
    if (out_of_memory_) detail::fail(BSRMM_STATUS_OUT_OF_MEMORY, "test: no memory for the dense copy");
    return f64_.empty() ? static_cast<const void*>(f32_.data()) : f64_.data();
  }
  bool kept() const override { return true; }
  int requests = 0;

 private:
  bool out_of_memory_;
  std::vector<double> f64_;
  std::vector<float> f32_;
};

// Operands of one product with random values: B uniform in [-1, 1), C all NaN (HostDense's
// fill) unless `beta` reads it, then random too.
struct Product {
  HostBsr a;
  HostDense b, c, c_before;
  std::vector<double> bias;
  std::vector<unsigned char> bias_bytes;

  Product(uint64_t seed, int64_t block_rows, int64_t block_cols, int32_t bh, int32_t bw, double density,
          int64_t n, bsrmm_dtype dtype, bool epilogue)
      : a(make_a(seed, block_rows, block_cols, bh, bw, density, dtype)),
        b(a.cols, n, dtype, BSRMM_LAYOUT_ROW_MAJOR, 1),
        c(a.rows, n, dtype, seed % 2 ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR, 2),
        c_before(c) {
    Random rng(seed * 7919 + 1);
    for (int64_t i = 0; i < a.cols; ++i)
      for (int64_t j = 0; j < n; ++j) b.set(i, j, round_to(dtype, rng.uniform(-1, 1)));
    if (epilogue) {
      for (int64_t i = 0; i < a.rows; ++i)
        for (int64_t j = 0; j < n; ++j) c.set(i, j, round_to(dtype, rng.uniform(-1, 1)));
      bias_bytes.resize(static_cast<size_t>(a.rows) * dtype_size(dtype));
      for (int64_t i = 0; i < a.rows; ++i) {
        bias.push_back(round_to(dtype, rng.uniform(-1, 1)));
        store(dtype, bias_bytes.data() + i * dtype_size(dtype), bias.back());
      }
    }
    c_before = c;
  }

  static HostBsr make_a(uint64_t seed, int64_t block_rows, int64_t block_cols, int32_t bh, int32_t bw,
                        double density, bsrmm_dtype dtype) {
    Random rng(seed);
    return random_bsr(rng, block_rows, block_cols, bh, bw, density, dtype);
  }

  Expected expected(const cpu::MatmulArgs& args) const {
    return reference_matmul(a.to_dense(), a.rows, a.cols, BSRMM_OP_NONE, b, c_before, args.alpha,
                            args.beta, bias.empty() ? nullptr : &bias, args.activation);
  }
};

void add_epilogue(cpu::MatmulArgs& args, const Product& product) {
  if (product.bias.empty()) return;
  args.alpha = -1.25;
  args.beta = 0.5;
  args.bias = product.bias_bytes.data();
  args.activation = BSRMM_ACTIVATION_SILU;
}

bool blas_found() { return cpu::blas::library(nullptr) != nullptr; }

// The status and message of what `run` throws (SUCCESS when it throws nothing).
template <typename Run>
std::pair<bsrmm_status, std::string> outcome(Run run) {
  try {
    run();
  } catch (const detail::Error& error) {
    return {error.status(), error.what()};
  }
  return {BSRMM_STATUS_SUCCESS, ""};
}

TEST(CpuBackend, EveryVariantAndTheHeuristicMatchFloat64) {
  detail::CpuWorkers workers;
  std::vector<std::string> variants{"", cpu::reference_variant, cpu::blocked_variant};
  if (blas_found()) variants.push_back(cpu::dense_variant);
  if (cpu::rowwise_kernels() != nullptr) variants.push_back(cpu::rowwise_variant);
  const bsrmm_dtype dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};
  int checked = 0;
  uint64_t seed = 11;
  for (const std::string& variant : variants)
    for (bsrmm_dtype dtype : dtypes)
      for (double density : {0.3, 1.0}) {
        const bool epilogue = seed % 2 == 0;
        Product product(seed++, 6, 5, 4, 3, density, 19, dtype, epilogue);
        CpuOperands operands(product.a, product.b, product.c);
        TestDenseCopy dense_copy(product.a, false);
        cpu::MatmulArgs args = operands.args;
        args.a_dense = &dense_copy;
        add_epilogue(args, product);
        cpu::CpuBackend backend(workers, 2);
        const std::string ran = backend.matmul(args, backend::Candidate{variant, 0});
        const std::string what = "variant '" + variant + "' dtype " + std::to_string(dtype) +
                                 " density " + std::to_string(density);
        if (!variant.empty()) EXPECT_EQ(ran, variant) << what;
        EXPECT_EQ(dense_copy.requests > 0, ran == cpu::dense_variant)
            << what << ": only " << cpu::dense_variant << " reads the dense copy (ran " << ran << ")";
        expect_matches(product.c, product.expected(args), what);
        EXPECT_TRUE(product.c.padding_untouched()) << what;
        ++checked;
      }
  std::printf("[ cpu backend] %d products checked over %zu variants (BLAS %s)\n", checked,
              variants.size(), blas_found() ? "found" : "absent");
}

// Where the heuristic would pick the dense GEMM, a dense copy that finds no memory makes it run
// its sparse pick instead, with the right answer; forcing the GEMM reports the memory error.
TEST(CpuBackend, HeuristicRunsASparseVariantWhenTheDenseCopyFindsNoMemory) {
  if (!blas_found()) GTEST_SKIP() << "no CBLAS: the heuristic never places cpu_dense_blas first";
  detail::CpuWorkers workers;
  Product product(3, 24, 24, 4, 4, 1.0, 64, BSRMM_DTYPE_F32, false);
  CpuOperands operands(product.a, product.b, product.c);
  TestDenseCopy dense_copy(product.a, true);
  cpu::MatmulArgs args = operands.args;
  args.a_dense = &dense_copy;
  std::string missing;
  if (cpu::dense_decision(args, cpu::blas::library(&missing), missing).placement != cpu::DensePlacement::first)
    GTEST_SKIP() << "this BLAS is not a known optimised one: the heuristic never places the GEMM first";

  cpu::CpuBackend backend(workers, 0);
  const std::string ran = backend.matmul(args, backend::Candidate{});
  EXPECT_NE(ran, cpu::dense_variant);
  EXPECT_NE(ran, cpu::reference_variant) << "the oracle is never the heuristic's pick";
  EXPECT_EQ(dense_copy.requests, 1);
  expect_matches(product.c, product.expected(args), "after the dense copy found no memory, " + ran);

  const auto forced = outcome([&] { backend.matmul(args, backend::Candidate{cpu::dense_variant, 0}); });
  EXPECT_EQ(forced.first, BSRMM_STATUS_OUT_OF_MEMORY) << forced.second;
}

TEST(CpuBackend, TimedRunsWriteTheProductToo) {
  detail::CpuWorkers workers;
  Product product(5, 7, 9, 2, 5, 0.5, 33, BSRMM_DTYPE_F32, true);
  CpuOperands operands(product.a, product.b, product.c);
  cpu::MatmulArgs args = operands.args;
  add_epilogue(args, product);
  cpu::CpuBackend backend(workers, 0);
  const double ms = backend.time_matmul(args, backend::Candidate{cpu::blocked_variant, 1});
  EXPECT_GT(ms, 0.0);
  expect_matches(product.c, product.expected(args), "timed run");
  EXPECT_EQ(backend.clock(), backend::Clock::host);
  EXPECT_EQ(backend.arch(), "cpu");
}

// The tuner's candidates: CPU variants only, the heuristic's pick first; a thread setting is
// kept as it is, and without one each variant comes at the default count, then at the powers of
// two below it, descending to 1.
TEST(CpuBackend, CandidatesStartWithTheHeuristicsPickAndFollowTheThreadSetting) {
  detail::CpuWorkers workers;
  const std::vector<std::string> names = cpu::variant_names();
  const auto is_cpu_variant = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  uint64_t seed = 21;
  for (auto [bh, bw] : {std::pair<int32_t, int32_t>{4, 4}, {2, 3}, {16, 16}})
    for (int64_t n : {1, 64, 512}) {
      Product product(seed++, 8, 8, bh, bw, 0.3, n, BSRMM_DTYPE_F32, false);
      CpuOperands operands(product.a, product.b, product.c);
      const std::string what = std::to_string(bh) + "x" + std::to_string(bw) + " N " + std::to_string(n);

      cpu::CpuBackend three(workers, 3);
      const std::vector<backend::Candidate> fixed = three.matmul_candidates(operands.args);
      ASSERT_FALSE(fixed.empty()) << what;
      for (const backend::Candidate& candidate : fixed) {
        EXPECT_EQ(candidate.threads, 3) << what;
        EXPECT_TRUE(is_cpu_variant(candidate.variant)) << what << ": " << candidate.variant;
      }
      EXPECT_EQ(fixed.front().variant, three.matmul(operands.args, backend::Candidate{}))
          << what << ": the heuristic's pick comes first";

      cpu::CpuBackend chosen(workers, 0);
      const std::vector<backend::Candidate> counts = chosen.matmul_candidates(operands.args);
      ASSERT_FALSE(counts.empty()) << what;
      EXPECT_EQ(counts.front().threads, workers.default_threads) << what;
      for (std::size_t i = 0; i < counts.size(); ++i) {
        const bool starts = i == 0 || counts[i].variant != counts[i - 1].variant;
        if (starts) {
          EXPECT_EQ(counts[i].threads, workers.default_threads) << what << ": " << counts[i].variant;
          continue;
        }
        EXPECT_LT(counts[i].threads, counts[i - 1].threads) << what;
        EXPECT_EQ(counts[i].threads & (counts[i].threads - 1), 0) << counts[i].threads << " is not a power of two";
        if (counts[i - 1].threads == workers.default_threads)
          EXPECT_GE(counts[i].threads * 2, workers.default_threads)
              << what << ": the largest power of two below the default comes next";
      }
      EXPECT_EQ(counts.back().threads, 1) << what;
    }
}

TEST(CpuBackend, RefusesNamesItDoesNotRun) {
  detail::CpuWorkers workers;
  Product product(9, 3, 3, 2, 2, 1.0, 4, BSRMM_DTYPE_F32, false);
  CpuOperands operands(product.a, product.b, product.c);
  cpu::CpuBackend backend(workers, 1);
  for (const char* name : {"generic_f32_simt_m64n64k16", "no_such_variant"}) {
    const auto result = outcome([&] { backend.matmul(operands.args, backend::Candidate{name, 0}); });
    EXPECT_EQ(result.first, BSRMM_STATUS_UNSUPPORTED) << name;
    EXPECT_NE(result.second.find(name), std::string::npos) << result.second;
  }
  // The dense variant with no dense copy offered (or no BLAS) declines, saying which.
  const auto dense = outcome([&] { backend.matmul(operands.args, backend::Candidate{cpu::dense_variant, 0}); });
  EXPECT_EQ(dense.first, BSRMM_STATUS_UNSUPPORTED) << dense.second;
  EXPECT_NE(dense.second.find(cpu::dense_variant), std::string::npos) << dense.second;
  for (int64_t i = 0; i < product.a.rows; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_TRUE(std::isnan(product.c.get(i, j))) << "a refused run writes nothing";
}

}  // namespace
}  // namespace bsrmm::test
