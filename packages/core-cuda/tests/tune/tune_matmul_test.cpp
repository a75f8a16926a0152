// Tuning through the C ABI on the CPU, where the candidates are the CPU variants at several
// thread counts (the reference only on small problems): bsrmm_tune and the AUTO / FORCE / OFF modes compute the right C (checked
// against float64 with C poisoned, or random when beta reads it: a measuring run that wrote
// the caller's C would show as a wrong result), store and reuse their choice, and a cache that
// is corrupt or cannot be written changes nothing but a warning.
#include "cache_sandbox.hpp"
#include "cpu_problem.hpp"
#include "../support/scoped_env.hpp"
#include "tune/cache_entry.hpp"
#include "tune/cpu_identity.hpp"
#include "tune/json.hpp"
#include "tune/tuner.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

// AUTO multiplies of `problem` until one measures: the key's tuning call, the third at the
// latest (sooner where an earlier test of this process met the key). Returns that call's run.
Outcome run_until_tuned(Context& ctx, CpuProblem& problem) {
  Outcome run;
  for (int call = 1; call <= tuner::auto_tuning_call; ++call) {
    run = run_checked(ctx, problem);
    if (run.measurements > 0) return run;
  }
  ADD_FAILURE() << "AUTO did not tune by call " << tuner::auto_tuning_call;
  return run;
}

bool is_cpu_variant(const std::string& name) {
  return name == "cpu_blocked_simd" || name == "cpu_rowwise_simd" || name == "cpu_reference_f64acc";
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

// A short script never pays for tuning: AUTO runs the heuristic's pick (and stores nothing)
// until the third call of a key in the process, which measures.
TEST(TuneMatmul, AutoTunesAKeyOnItsThirdCall) {
  CacheSandbox sandbox;
  CpuProblemSpec spec;
  spec.n = 3000;  // a key no other test meets
  CpuProblem problem(33, spec);
  Context off;
  off.set_tuning_mode(BSRMM_TUNING_OFF);
  const std::string heuristic = run_checked(off, problem).variant;
  Context ctx;
  for (int call = 1; call < tuner::auto_tuning_call; ++call) {
    const Outcome early = run_checked(ctx, problem);
    EXPECT_EQ(early.measurements, 0) << "call " << call;
    EXPECT_EQ(early.variant, heuristic) << "the heuristic's pick, as with tuning off";
    EXPECT_TRUE(abi_entries().empty());
  }
  EXPECT_FALSE(std::filesystem::exists(sandbox.path())) << "nothing written";
  EXPECT_EQ(run_checked(ctx, problem).measurements, 1);
  EXPECT_EQ(abi_entries().size(), 1u);
  EXPECT_EQ(run_checked(ctx, problem).measurements, 0);
}

TEST(TuneMatmul, AutoReusesTheChoiceInEveryContext) {
  CacheSandbox sandbox;
  CpuProblem problem(31, CpuProblemSpec{});
  Context first;
  first.set_tuning_mode(BSRMM_TUNING_AUTO);
  const Outcome measured = run_until_tuned(first, problem);
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
  // 8 x 4 blocks at N = 24: the row-wise kernel where AVX-512 is, else the blocked one.
  EXPECT_TRUE(heuristic.variant == "cpu_rowwise_simd" || heuristic.variant == "cpu_blocked_simd")
      << heuristic.variant;

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
  // The heuristic's row-wise pick (or, without AVX-512, the blocked variant) alone: the
  // reference is never timed (docs/perf-log.md entry 46).
  EXPECT_EQ(entries[0].candidates, 1) << "one variant at the context's one thread";
}

// OMP_NUM_THREADS, or BSRMM_NUM_THREADS before it, bounds a context's default worker count
// (read when the context is made): the tuner's thread ladder starts there, not at every CPU.
TEST(TuneMatmul, TheEnvironmentsThreadLimitBoundsTheCandidates) {
  const std::optional<std::string> unset;
  for (const auto& [own, omp] : {std::pair{unset, std::optional<std::string>("1")},
                                 std::pair{std::optional<std::string>("1"), std::optional<std::string>("4")}}) {
    SCOPED_TRACE("BSRMM_NUM_THREADS=" + own.value_or("(unset)") + " OMP_NUM_THREADS=" + omp.value_or("(unset)"));
    CacheSandbox sandbox;
    ScopedEnv own_limit("BSRMM_NUM_THREADS", own);
    ScopedEnv omp_limit("OMP_NUM_THREADS", omp);
    CpuProblem problem(121, CpuProblemSpec{});
    Context ctx;
    run_checked(ctx, problem, true);
    const std::vector<tuner::Entry> entries = abi_entries();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].threads, 1);
    EXPECT_EQ(entries[0].candidates, 1) << "one variant at the one thread the environment allows";
  }
}

// The reference (5-60x slower) is timed at no size: a small and a large problem time the same
// number of candidates (the sparse kernel's thread counts), and tuning runs each of them at
// most a warm-up and 5 times.
TEST(TuneMatmul, LargeProblemsTimeOnlyTheBlockedVariant) {
  CpuProblemSpec large;  // 256 x 256, half the 8 x 8 blocks, N = 64: ~2M multiply-adds
  large.block_rows = large.block_cols = 32;
  large.bh = large.bw = 8;
  large.density = 0.5;
  large.n = 64;
  int32_t small_candidates = 0;
  for (const CpuProblemSpec& spec : {CpuProblemSpec{}, large}) {
    CacheSandbox sandbox;
    CpuProblem problem(111, spec);
    Context ctx;
    const int64_t runs_before = tuner::timed_run_count();
    const Outcome run = run_checked(ctx, problem, true);
    const int64_t runs = tuner::timed_run_count() - runs_before;
    EXPECT_EQ(run.measurements, 1);
    const std::vector<tuner::Entry> entries = abi_entries();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_GE(runs, 2) << "the first candidate warms up";
    EXPECT_LE(runs, 6 * entries[0].candidates);
    EXPECT_NE(run.variant, "cpu_reference_f64acc");
    if (spec.n == large.n) {
      EXPECT_EQ(entries[0].candidates, small_candidates) << "no reference candidates";
    } else {
      small_candidates = entries[0].candidates;
    }
  }

  CacheSandbox sandbox;
  CpuProblem problem(112, large);
  Context one_thread;
  one_thread.set_num_threads(1);
  run_checked(one_thread, problem, true);
  ASSERT_EQ(abi_entries().size(), 1u);
  EXPECT_EQ(abi_entries()[0].candidates, 1) << "the blocked variant at the context's one thread";
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
    const Outcome run = run_until_tuned(ctx, problem);
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
    const Outcome first = run_until_tuned(ctx, problem);
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

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

// Measuring writes a scratch copy of C; where memory for it is missing, an AUTO multiply runs
// the heuristic's pick untuned (and stores nothing), while bsrmm_tune reports OUT_OF_MEMORY.
// In a child process under an address-space limit that leaves room for the multiply, not for a
// second C of 64 MiB. (Sanitizers reserve shadow memory that no such limit can accommodate.)
TEST(TuneMatmul, NoMemoryToMeasureRunsTheHeuristicUntuned) {
  CacheSandbox sandbox;
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto check = [](bool ok, const char* what, int code) {
      if (!ok) {
        std::fprintf(stderr, "child: %s failed (%s)\n", what, bsrmm_last_error());
        std::_Exit(code);
      }
    };
    // C is 262144 x 64 f32 (64 MiB); A holds one 16 x 16 block per block row; B is 16 x 64.
    HostBsr host;
    host.block_height = host.block_width = 16;
    host.rows = 262144;
    host.cols = 16;
    Random rng(5);
    for (int64_t r = 0; r < host.rows / 16; ++r) {
      host.col_idx.push_back(0);
      host.row_ptr.push_back(r + 1);
    }
    host.values.resize(static_cast<size_t>(host.nnzb()) * 256 * 4);
    for (int64_t p = 0; p < host.nnzb(); ++p)
      for (int32_t i = 0; i < 16; ++i)
        for (int32_t j = 0; j < 16; ++j) host.set_value(p, i, j, round_to(BSRMM_DTYPE_F32, rng.uniform(-1, 1)));
    HostDense b(16, 64, BSRMM_DTYPE_F32), c(host.rows, 64, BSRMM_DTYPE_F32);
    for (int64_t k = 0; k < 16; ++k)
      for (int64_t j = 0; j < 64; ++j) b.set(k, j, round_to(BSRMM_DTYPE_F32, rng.uniform(-1, 1)));
    Context ctx;
    ctx.set_tuning_mode(BSRMM_TUNING_OFF);
    Matrix a(ctx, host.desc());
    bsrmm_dense bd = b.desc(), cd = c.desc();
    check(bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr) == BSRMM_STATUS_SUCCESS,
          "a first, untuned multiply (starts the worker pool)", 10);
    const std::string heuristic_pick = ctx.last_variant();  // rowwise (in bands) or blocked
    ctx.set_tuning_mode(BSRMM_TUNING_AUTO);

    std::ifstream statm("/proc/self/statm");
    long long pages = 0;
    statm >> pages;
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    const rlim_t unlimited = limit.rlim_cur;
    limit.rlim_cur = static_cast<rlim_t>(pages * sysconf(_SC_PAGESIZE) + (32ll << 20));
    check(setrlimit(RLIMIT_AS, &limit) == 0, "setrlimit", 11);
    const int64_t before = tuner::measurement_count();
    for (int call = 1; call <= tuner::auto_tuning_call; ++call) {  // the last one tunes
      c.fill(std::nan(""));
      check(bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr) == BSRMM_STATUS_SUCCESS,
            "an AUTO multiply without memory to measure", 12);
    }
    check(tuner::measurement_count() == before + 1, "an attempt to measure", 13);
    check(ctx.last_variant() == heuristic_pick, "the heuristic's pick ran", 14);
    check(bsrmm_tune(ctx.get(), a.get(), &bd, &cd, nullptr) == BSRMM_STATUS_OUT_OF_MEMORY,
          "bsrmm_tune reports OUT_OF_MEMORY", 15);
    limit.rlim_cur = unlimited;
    check(setrlimit(RLIMIT_AS, &limit) == 0, "setrlimit", 16);
    check(tuner_cache_entries() == "[]\n", "nothing stored", 17);
    for (int64_t i = 0; i < host.rows; ++i)
      for (int64_t j = 0; j < 64; ++j) {
        double want = 0, magnitude = 0;
        for (int32_t k = 0; k < 16; ++k) {
          want += host.value(i / 16, static_cast<int32_t>(i % 16), k) * b.get(k, j);
          magnitude += std::fabs(host.value(i / 16, static_cast<int32_t>(i % 16), k) * b.get(k, j));
        }
        check(std::fabs(c.get(i, j) - want) <= 2e-6 * magnitude + 1e-30, "C against float64", 18);
      }
    std::_Exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died from a signal";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's message above";
}

#endif

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
  run_until_tuned(ctx, problem);
  ASSERT_EQ(abi_entries().size(), 1u);
  tuner_cache_clear();
  EXPECT_TRUE(abi_entries().empty());
  EXPECT_TRUE(tuner::parse_json(sandbox.read()).find("entries")->items().empty());
  EXPECT_EQ(run_checked(ctx, problem).measurements, 1) << "cleared: a key met thrice is measured again";
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
