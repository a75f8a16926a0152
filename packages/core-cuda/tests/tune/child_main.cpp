// bsrmm_tune_child: what the cross-process tests run in other processes.
//
//   bsrmm_tune_child multiply <seed> <auto|force|off> [calls]
//       multiplies the CpuProblem of <seed> on a fresh context `calls` times (default 1; AUTO
//       tunes a key missing from the cache on its third call), checks C against float64 each
//       time and prints "measurements=<n> variant=<name>" (n: candidate sets this process
//       measured; the last call's variant)
//   bsrmm_tune_child store <prefix> <count>
//       stores <count> entries "<prefix>-<i>" one by one, as <count> tunings would
//
// It is a GoogleTest program so the check is the same expect_matches the other tests use; the
// exit status is non-zero when the check fails. BSRMM_TUNING_CACHE comes from the parent.
#include "cpu_problem.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning_cache.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::vector<std::string> arguments;

bsrmm_tuning_mode parse_mode(const std::string& text) {
  if (text == "force") return BSRMM_TUNING_FORCE;
  if (text == "off") return BSRMM_TUNING_OFF;
  return BSRMM_TUNING_AUTO;
}

TEST(Child, Run) {
  ASSERT_GE(arguments.size(), 3u) << "usage: multiply <seed> <mode> | store <prefix> <count>";
  if (arguments[0] == "multiply") {
    bsrmm::test::CpuProblem problem(std::stoull(arguments[1]), bsrmm::test::CpuProblemSpec{});
    bsrmm::Context ctx;
    ctx.set_tuning_mode(parse_mode(arguments[2]));
    bsrmm::Matrix a(ctx, problem.a.desc());
    const bsrmm_dense b = problem.b.desc();
    bsrmm_dense c = problem.c.desc();
    const int calls = arguments.size() > 3 ? std::stoi(arguments[3]) : 1;
    for (int call = 0; call < calls; ++call) {
      problem.reset_c();
      bsrmm::matmul(ctx, a, b, c, problem.options());
      bsrmm::test::expect_matches(problem.c, problem.expected(), "child's C");
    }
    std::printf("measurements=%lld variant=%s\n",
                static_cast<long long>(bsrmm::tuner::measurement_count()),
                ctx.last_variant().c_str());
  } else if (arguments[0] == "store") {
    const int count = std::stoi(arguments[2]);
    for (int i = 0; i < count; ++i) {
      bsrmm::tuner::Entry entry;
      entry.key = arguments[1] + "-" + std::to_string(i);
      entry.device = "child device";
      entry.library_version = bsrmm::tuner::library_version();
      entry.variant = "cpu_blocked_simd";
      entry.threads = 1;
      entry.time_ms = i;
      entry.candidates = 1;
      entry.measured_at = bsrmm::tuner::utc_timestamp();
      bsrmm::tuner::TuningCache::instance().store(entry);
    }
    EXPECT_EQ(bsrmm::tuner::TuningCache::instance().last_warning(), "");
    std::printf("stored=%d\n", count);
  } else {
    FAIL() << "unknown mode " << arguments[0];
  }
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  arguments.assign(argv + 1, argv + argc);
  return RUN_ALL_TESTS();
}
