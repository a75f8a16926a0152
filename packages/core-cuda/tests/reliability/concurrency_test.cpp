// Bounded stress on the CPU backend, every result checked in full against the float64 reference:
//   - many threads multiplying through one context and one matrix, each round on a fresh matrix
//     released to all threads at once, so the lazily built plan (schedule, A^T, f32 values) is
//     raced for by every op, dtype and variant;
//   - many contexts created, used and destroyed concurrently from shared caller arrays;
//   - settings changed on a context while other threads multiply through it;
//   - threads tuning the same problems at once (AUTO and FORCE) into one cache file.
// Thread counts and rounds are printed; each test stops after its time budget.
#include "stress_support.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

namespace bsrmm::test {
namespace {

constexpr int stress_threads = 8;
constexpr std::chrono::milliseconds budget_per_test(2500);
const bsrmm_dtype all_dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};
const char* const cpu_variants[] = {"", "cpu_blocked_simd", "cpu_reference_f64acc"};

// A rectangular A with rectangular blocks, so A and A^T differ in every dimension.
HostBsr stress_matrix(uint64_t seed, bsrmm_dtype dtype) {
  Random rng(seed);
  return random_bsr(rng, 9, 7, 4, 6, 0.35, dtype);
}

TEST(Concurrency, ThreadsShareOneContextAndOneFreshMatrix) {
  Context ctx;
  ctx.set_num_threads(2);
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  StartLine start(stress_threads + 1);
  std::atomic<bool> stop{false};
  std::atomic<long> multiplies{0};
  // The main thread publishes one matrix per round; workers read these after the start line.
  HostBsr host;
  std::optional<Matrix> matrix;
  int round = 0;

  std::vector<std::thread> workers;
  for (int w = 0; w < stress_threads; ++w) {
    workers.emplace_back([&, w] {
      for (int r = 0;; ++r) {
        start.arrive_and_wait();  // the round's matrix is ready (or stop is set)
        if (stop) return;
        const bsrmm_op op = (w + r) % 2 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE;
        const std::string what = "round " + std::to_string(r) + " worker " + std::to_string(w);
        checked_multiply(ctx, *matrix, host, op, 5 + w, 1000 * r + w, what);
        ++multiplies;
        start.arrive_and_wait();  // done with this round's matrix
      }
    });
  }
  const Budget budget(budget_per_test, 8);
  for (; budget.another(round) && !HasFailure(); ++round) {
    host = stress_matrix(round, all_dtypes[round % 4]);
    bsrmm_bsr_desc desc = host.desc(round % 3 ? BSRMM_INDEX_I32 : BSRMM_INDEX_I64);
    matrix.reset();
    matrix.emplace(ctx, desc);
    start.arrive_and_wait();
    start.arrive_and_wait();
  }
  stop = true;
  start.arrive_and_wait();
  for (std::thread& t : workers) t.join();
  std::printf("[ stress   ] one context, one fresh matrix per round: %d threads, %d rounds, %ld checked"
              " multiplies\n", stress_threads, round, multiplies.load());
}

TEST(Concurrency, ThreadsVaryOpAndVariantOnOneMatrix) {
  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  const HostBsr host = stress_matrix(7, BSRMM_DTYPE_F16);
  const Matrix matrix = matrix_of(ctx, host);
  std::atomic<long> multiplies{0};
  const Budget budget(budget_per_test, 4);
  on_threads(stress_threads, [&](int w) {
    // Each worker has its own context on the same matrix, with its own variant.
    Context own;
    own.set_tuning_mode(BSRMM_TUNING_OFF);
    own.set_num_threads(1 + w % 3);
    own.set_variant(cpu_variants[w % 3]);
    multiplies += budget.rounds([&](int r) {
      Context& use = r % 2 ? own : ctx;
      const bsrmm_op op = (w + r) % 2 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE;
      checked_multiply(use, matrix, host, op, 1 + (w * 7 + r) % 23, 77 * r + w,
                       "worker " + std::to_string(w) + " round " + std::to_string(r));
    });
  });
  std::printf("[ stress   ] shared matrix, per-thread contexts and variants: %d threads, %ld checked"
              " multiplies\n", stress_threads, multiplies.load());
}

TEST(Concurrency, ManyContextsCreatedAndDestroyedConcurrently) {
  const HostBsr host = stress_matrix(11, BSRMM_DTYPE_F32);
  std::atomic<long> contexts{0};
  const Budget budget(budget_per_test, 3);
  on_threads(stress_threads, [&](int w) {
    // Each round creates a context, a matrix and its copy, multiplies once and destroys them.
    contexts += budget.rounds([&](int r) {
      Context ctx;
      ctx.set_tuning_mode(BSRMM_TUNING_OFF);
      ctx.set_num_threads(1 + (w + r) % 3);
      const Matrix matrix = matrix_of(ctx, host, r % 2 ? BSRMM_INDEX_I64 : BSRMM_INDEX_I32);
      const Matrix copy = matrix.copy_to(ctx);
      checked_multiply(ctx, r % 2 ? copy : matrix, host, r % 3 ? BSRMM_OP_NONE : BSRMM_OP_TRANSPOSE,
                       8, 31 * r + w, "context " + std::to_string(r) + " of worker " + std::to_string(w));
    });
  });
  std::printf("[ stress   ] many contexts: %d threads, %ld contexts created, used for one checked multiply"
              " and destroyed\n", stress_threads, contexts.load());
}

TEST(Concurrency, SettingsChangeWhileThreadsMultiply) {
  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  const HostBsr host = stress_matrix(13, BSRMM_DTYPE_BF16);
  const Matrix matrix = matrix_of(ctx, host);
  std::atomic<bool> done{false};
  std::atomic<long> multiplies{0}, changes{0};
  std::thread changer([&] {
    for (int i = 0; !done; ++i) {
      ctx.set_num_threads(i % 5);  // 0: one per hardware thread
      ctx.set_variant(cpu_variants[i % 3]);
      ctx.set_f32_mode(i % 2 ? BSRMM_F32_TF32 : BSRMM_F32_EXACT);
      const std::string last = ctx.last_variant();
      EXPECT_TRUE(last.empty() || last.rfind("cpu_", 0) == 0) << last;
      ++changes;
      std::this_thread::yield();
    }
  });
  const Budget budget(budget_per_test, 3);
  on_threads(stress_threads - 1, [&](int w) {
    multiplies += budget.rounds([&](int r) {
      checked_multiply(ctx, matrix, host, r % 2 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE, 9, 13 * r + w,
                       "worker " + std::to_string(w) + " round " + std::to_string(r));
    });
  });
  done = true;
  changer.join();
  std::printf("[ stress   ] settings race: %d threads, %ld setting changes, %ld checked multiplies\n",
              stress_threads, changes.load(), multiplies.load());
}

TEST(Concurrency, ThreadsTuneTheSameProblemsAtOnce) {
  // A cache file of this test's own; the tuner looks the variable up on every call.
  char dir_template[] = "/tmp/bsrmm-tune-stress-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::filesystem::path dir(dir_template);
  const std::string cache = (dir / "tuning.json").string();
  const char* previous = std::getenv("BSRMM_TUNING_CACHE");
  const std::string saved = previous ? previous : "";
  setenv("BSRMM_TUNING_CACHE", cache.c_str(), 1);

  const HostBsr host = stress_matrix(17, BSRMM_DTYPE_F32);
  Context shared;  // AUTO, the default
  const Matrix matrix = matrix_of(shared, host);
  std::atomic<long> multiplies{0};
  const Budget budget(budget_per_test, 2);
  on_threads(stress_threads, [&](int w) {
    Context own;
    own.set_tuning_mode(w % 2 ? BSRMM_TUNING_FORCE : BSRMM_TUNING_AUTO);
    multiplies += budget.rounds([&](int r) {
      // Few distinct problems (N in two buckets, both ops), so threads meet on the same keys.
      checked_multiply(w % 3 ? own : shared, matrix, host, r % 2 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE,
                       r % 4 < 2 ? 8 : 40, 19 * r + w, "tuning worker " + std::to_string(w) + " round " +
                                                              std::to_string(r));
    });
  });
  const std::string warning = tuner_cache_warning();
  const std::string entries = tuner_cache_entries();
  EXPECT_EQ(warning, "") << "the tuner met a problem with its cache file";
  EXPECT_EQ(tuner_cache_path(), cache);
  EXPECT_NE(entries.find("\"variant\""), std::string::npos) << "no tuned entries: " << entries;
  EXPECT_GT(std::filesystem::file_size(cache), 2u);
  std::printf("[ stress   ] tuning race: %d threads (AUTO and FORCE), %ld checked multiplies, cache of %ju"
              " bytes\n", stress_threads, multiplies.load(),
              static_cast<uintmax_t>(std::filesystem::file_size(cache)));
  if (previous) {
    setenv("BSRMM_TUNING_CACHE", saved.c_str(), 1);
  } else {
    unsetenv("BSRMM_TUNING_CACHE");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bsrmm::test
