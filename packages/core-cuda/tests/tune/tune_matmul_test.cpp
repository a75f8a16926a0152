// Tuning through the C ABI on the CPU, where the candidates are both CPU variants at several
// thread counts: bsrmm_tune and the AUTO / FORCE / OFF modes compute the right C (checked
// against float64 with C poisoned, or random when beta reads it: a measuring run that wrote
// the caller's C would show as a wrong result), store and reuse their choice, and a cache that
// is corrupt or cannot be written changes nothing but a warning.
#include "cache_sandbox.hpp"
#include "cpu_problem.hpp"
#include "tune/cache_entry.hpp"
#include "tune/cpu_identity.hpp"
#include "tune/json.hpp"
#include "tune/tuner.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace bsrmm::test {
namespace {

struct Outcome {
  std::string variant;
  int64_t measurements = 0;  // measured candidate sets during the call
};

// Multiplies `problem` through `ctx` (bsrmm_tune when `tune_now`), checks every element of C
// against the float64 reference and C's padding, and says what ran.
Outcome run_checked(Context& ctx, CpuProblem& problem, bool tune_now = false) {
  problem.reset_c();
  Matrix a(ctx, problem.a.desc());
  const bsrmm_dense b = problem.b.desc();
  bsrmm_dense c = problem.c.desc();
  const bsrmm_matmul_options options = problem.options();
  const int64_t before = tuner::measurement_count();
  Outcome run;
  if (tune_now) {
    run.variant = bsrmm::tune(ctx, a, b, c, options);
  } else {
    matmul(ctx, a, b, c, options);
    run.variant = ctx.last_variant();
  }
  run.measurements = tuner::measurement_count() - before;
  expect_matches(problem.c, problem.expected(), "C after " + run.variant);
  EXPECT_TRUE(problem.c.padding_untouched()) << "C's padding was written";
  return run;
}

bool is_cpu_variant(const std::string& name) {
  return name == "cpu_blocked_simd" || name == "cpu_reference_f64acc";
}

std::vector<tuner::Entry> abi_entries() {
  const tuner::Json json = tuner::parse_json(tuner_cache_entries());
  std::vector<tuner::Entry> entries;
  for (const tuner::Json& item : json.items()) entries.push_back(tuner::entry_from_json(item));
  return entries;
}

TEST(TuneMatmul, TuneMeasuresStoresAndComputesC) {
  CpuProblemSpec transposed_gelu;
  transposed_gelu.op = BSRMM_OP_TRANSPOSE;
  transposed_gelu.beta = -0.75;
  transposed_gelu.bias = true;
  transposed_gelu.activation = BSRMM_ACTIVATION_GELU;
  CpuProblemSpec half;
  half.dtype = BSRMM_DTYPE_F16;
  half.beta = 1.0;
  CpuProblemSpec f64;
  f64.dtype = BSRMM_DTYPE_F64;
  f64.bh = 3;
  f64.bw = 5;
  uint64_t seed = 11;
  for (const CpuProblemSpec& spec : {CpuProblemSpec{}, transposed_gelu, half, f64}) {
    CacheSandbox sandbox;
    CpuProblem problem(seed++, spec);
    Context ctx;
    const Outcome run = run_checked(ctx, problem, true);
    EXPECT_TRUE(is_cpu_variant(run.variant)) << run.variant;
    EXPECT_EQ(run.measurements, 1);

    const std::vector<tuner::Entry> entries = abi_entries();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].variant, run.variant);
    EXPECT_EQ(entries[0].device, tuner::cpu_identity());
    EXPECT_EQ(entries[0].library_version, bsrmm_version());
    EXPECT_NE(entries[0].key.find("arch=cpu"), std::string::npos) << entries[0].key;
    EXPECT_GT(entries[0].threads, 0);
    EXPECT_GT(entries[0].time_ms, 0);
    EXPECT_GE(entries[0].candidates, 2) << "both CPU variants were candidates";
    EXPECT_EQ(tuner_cache_warning(), "");
  }
}

TEST(TuneMatmul, MeasuringNeverTouchesTheCallersC) {
  // beta = 1 reads C: were any of the dozens of measuring runs to write the caller's C, the
  // final result would hold alpha*A*B more than once.
  CacheSandbox sandbox;
  CpuProblemSpec spec;
  spec.beta = 1.0;
  spec.alpha = 1.0;
  spec.bias = true;
  CpuProblem problem(21, spec);
  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_FORCE);
  const Outcome first = run_checked(ctx, problem);
  EXPECT_EQ(first.measurements, 1);
  const Outcome second = run_checked(ctx, problem);
  EXPECT_EQ(second.measurements, 1) << "FORCE measures on every call";
}

TEST(TuneMatmul, AutoReusesTheChoiceInEveryContext) {
  CacheSandbox sandbox;
  CpuProblem problem(31, CpuProblemSpec{});
  Context first;
  first.set_tuning_mode(BSRMM_TUNING_AUTO);
  const Outcome measured = run_checked(first, problem);
  EXPECT_EQ(measured.measurements, 1);
  const Outcome reused = run_checked(first, problem);
  EXPECT_EQ(reused.measurements, 0);
  EXPECT_EQ(reused.variant, measured.variant);

  // Another context, other values, the same key.
  CpuProblem same_shape(32, CpuProblemSpec{});
  Context second;
  const Outcome other = run_checked(second, same_shape);
  EXPECT_EQ(other.measurements, 0);
  EXPECT_EQ(other.variant, measured.variant);
  EXPECT_EQ(abi_entries().size(), 1u);
}

TEST(TuneMatmul, OffAndForcedVariantsNeverLookUp) {
  CacheSandbox sandbox;
  CpuProblem problem(41, CpuProblemSpec{});
  Context off;
  off.set_tuning_mode(BSRMM_TUNING_OFF);
  const Outcome heuristic = run_checked(off, problem);
  EXPECT_EQ(heuristic.measurements, 0);
  EXPECT_EQ(heuristic.variant, "cpu_blocked_simd");

  Context forced;
  forced.set_variant("cpu_reference_f64acc");
  const Outcome named = run_checked(forced, problem);
  EXPECT_EQ(named.measurements, 0);
  EXPECT_EQ(named.variant, "cpu_reference_f64acc");
  EXPECT_TRUE(abi_entries().empty());

  // bsrmm_tune is asked to choose: it measures even on a context with a forced variant.
  const Outcome tuned = run_checked(forced, problem, true);
  EXPECT_EQ(tuned.measurements, 1);
  EXPECT_EQ(abi_entries().size(), 1u);
}

TEST(TuneMatmul, AnExplicitThreadCountIsKept) {
  CacheSandbox sandbox;
  CpuProblem problem(51, CpuProblemSpec{});
  Context ctx;
  ctx.set_num_threads(1);
  run_checked(ctx, problem, true);
  const std::vector<tuner::Entry> entries = abi_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].threads, 1);
  EXPECT_EQ(entries[0].candidates, 2) << "two variants at the context's one thread";
}

TEST(TuneMatmul, EmptyPatternsAreNotTuned) {
  CacheSandbox sandbox;
  CpuProblemSpec spec;
  spec.density = 0;
  spec.beta = 2;
  spec.bias = true;
  CpuProblem problem(61, spec);
  Context ctx;
  const Outcome run = run_checked(ctx, problem);
  EXPECT_EQ(run.measurements, 0);
  EXPECT_TRUE(abi_entries().empty());
}

TEST(TuneMatmul, CorruptCacheStillGivesCorrectResults) {
  for (const char* text : {"garbage{", "{\"format\": \"bsrmm-tuning-cache\", \"format_vers",
                           "{\"format\": \"bsrmm-tuning-cache\", \"format_version\": 99, "
                           "\"entries\": []}"}) {
    SCOPED_TRACE(text);
    CacheSandbox sandbox;
    sandbox.write(text);
    CpuProblem problem(71, CpuProblemSpec{});
    Context ctx;
    testing::internal::CaptureStderr();
    const Outcome run = run_checked(ctx, problem);
    const std::string printed = testing::internal::GetCapturedStderr();
    EXPECT_EQ(run.measurements, 1) << "nothing was trusted from the bad file";
    EXPECT_NE(printed.find("bsrmm: ignoring the tuning cache"), std::string::npos) << printed;
    EXPECT_NE(tuner_cache_warning().find(sandbox.path()), std::string::npos)
        << tuner_cache_warning();
    ASSERT_EQ(abi_entries().size(), 1u) << "the store rewrote the file";
    EXPECT_EQ(tuner::parse_json(sandbox.read()).find("format_version")->as_number(), 1);
  }
}

TEST(TuneMatmul, UnwritableCacheStillGivesCorrectResults) {
  for (const bool directory : {false, true}) {
    SCOPED_TRACE(directory ? "the cache path is a directory" : "the cache path is below a file");
    CacheSandbox sandbox;
    if (directory) {
      ASSERT_TRUE(std::filesystem::create_directory(sandbox.path()));
    } else {
      sandbox.write("a regular file");
      sandbox.use(sandbox.path() + "/tuning.json");
    }
    CpuProblem problem(81, CpuProblemSpec{});
    Context ctx;
    testing::internal::CaptureStderr();
    const Outcome first = run_checked(ctx, problem);
    const Outcome second = run_checked(ctx, problem);
    const std::string printed = testing::internal::GetCapturedStderr();
    EXPECT_EQ(first.measurements, 1);
    EXPECT_EQ(second.measurements, 0) << "the choice is kept in memory";
    EXPECT_EQ(second.variant, first.variant);
    EXPECT_NE(printed.find("bsrmm: cannot write the tuning cache"), std::string::npos) << printed;
    EXPECT_NE(tuner_cache_warning().find("kept in memory"), std::string::npos);
    EXPECT_EQ(abi_entries().size(), 1u);
    if (directory) {
      EXPECT_EQ(bsrmm_tuner_cache_clear(), BSRMM_STATUS_IO_ERROR);
      EXPECT_NE(std::string(bsrmm_last_error()).find("bsrmm_tuner_cache_clear: cannot replace"),
                std::string::npos)
          << bsrmm_last_error();
    } else {
      EXPECT_EQ(bsrmm_tuner_cache_clear(), BSRMM_STATUS_SUCCESS) << "nothing on disk to clear";
    }
    EXPECT_TRUE(abi_entries().empty());
  }
}

TEST(TuneAbi, TextFollowsTheBufferConvention) {
  CacheSandbox sandbox;
  const std::string path = sandbox.path();
  size_t needed = 0;
  ASSERT_EQ(bsrmm_tuner_cache_path(nullptr, 0, &needed), BSRMM_STATUS_SUCCESS);
  EXPECT_EQ(needed, path.size() + 1);
  std::vector<char> small(needed - 1, 'x');
  EXPECT_EQ(bsrmm_tuner_cache_path(small.data(), small.size(), &needed),
            BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("needs " + std::to_string(path.size() + 1)),
            std::string::npos)
      << bsrmm_last_error();
  EXPECT_EQ(small[0], 'x') << "a short buffer receives nothing";
  EXPECT_EQ(bsrmm_tuner_cache_path(nullptr, 5, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  std::vector<char> fits(needed);
  ASSERT_EQ(bsrmm_tuner_cache_path(fits.data(), fits.size(), nullptr), BSRMM_STATUS_SUCCESS);
  EXPECT_EQ(std::string(fits.data()), path);
  EXPECT_EQ(tuner_cache_path(), path);
  EXPECT_EQ(tuner_cache_entries(), "[]\n");
}

TEST(TuneAbi, ClearForgetsEveryEntry) {
  CacheSandbox sandbox;
  CpuProblem problem(91, CpuProblemSpec{});
  Context ctx;
  run_checked(ctx, problem);
  ASSERT_EQ(abi_entries().size(), 1u);
  tuner_cache_clear();
  EXPECT_TRUE(abi_entries().empty());
  EXPECT_TRUE(tuner::parse_json(sandbox.read()).find("entries")->items().empty());
  EXPECT_EQ(run_checked(ctx, problem).measurements, 1) << "cleared: measured again";
}

TEST(TuneAbi, BadArgumentsAreRefusedByName) {
  CacheSandbox sandbox;
  CpuProblem problem(101, CpuProblemSpec{});
  Context ctx;
  Matrix a(ctx, problem.a.desc());
  bsrmm_dense b = problem.b.desc();
  bsrmm_dense c = problem.c.desc();
  EXPECT_EQ(bsrmm_tune(nullptr, a.get(), &b, &c, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("bsrmm_tune: ctx is NULL"), std::string::npos);
  b.rows += 1;
  EXPECT_EQ(bsrmm_tune(ctx.get(), a.get(), &b, &c, nullptr), BSRMM_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bsrmm_last_error()).find("B.rows"), std::string::npos);
  EXPECT_TRUE(abi_entries().empty());
}

}  // namespace
}  // namespace bsrmm::test
