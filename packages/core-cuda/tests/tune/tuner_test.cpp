// The tuner's decision with a scripted backend: AUTO measures once then reuses, FORCE always
// measures, the fastest wins (the heuristic on ties), hopeless candidates stop early, and
// measure() keeps to its budget.
#include "tune/tuner.hpp"

#include "cache_sandbox.hpp"
#include "tune/tuning_cache.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bsrmm::tuner {
namespace {

class ScriptedTrials : public Trials {
 public:
  ScriptedTrials(std::vector<Choice> choices, std::vector<double> times_ms)
      : runs(choices.size(), 0), choices_(std::move(choices)), times_(std::move(times_ms)) {}

  const std::vector<Choice>& candidates() override { return choices_; }
  double time_once(std::size_t index) override {
    ++runs.at(index);
    return times_.at(index);
  }
  MeasurePolicy policy() const override { return MeasurePolicy{1, 5, 2.0, 1000.0}; }
  std::string device() const override { return "scripted device"; }

  std::vector<int> runs;

 private:
  std::vector<Choice> choices_;
  std::vector<double> times_;
};

ProblemShape shape() {
  ProblemShape s;
  s.arch = "cpu";
  s.m = s.k = s.n = 64;
  s.block_rows = s.block_cols = 8;
  s.nnzb = 16;
  s.max_row_blocks = 2;
  return s;
}

const std::vector<Choice> choices{{"cpu_blocked_simd", 2}, {"cpu_blocked_simd", 1},
                                  {"cpu_reference_f64acc", 2}};

TEST(Tuner, AutoMeasuresOnceThenReusesTheCachedChoice) {
  test::CacheSandbox sandbox;
  ScriptedTrials trials(choices, {3.0, 1.0, 5.0});
  const int64_t before = measurement_count();
  const Decision first = decide(BSRMM_TUNING_AUTO, shape(), trials);
  EXPECT_TRUE(first.measured);
  EXPECT_EQ(first.choice, (Choice{"cpu_blocked_simd", 1}));
  EXPECT_EQ(measurement_count(), before + 1);

  const std::vector<Entry> entries = TuningCache::instance().entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].key, first.key);
  EXPECT_EQ(entries[0].device, "scripted device");
  EXPECT_EQ(entries[0].variant, "cpu_blocked_simd");
  EXPECT_EQ(entries[0].threads, 1);
  EXPECT_EQ(entries[0].time_ms, 1.0);
  EXPECT_EQ(entries[0].candidates, 3);

  const std::vector<int> runs_after_first = trials.runs;
  const Decision second = decide(BSRMM_TUNING_AUTO, shape(), trials);
  EXPECT_FALSE(second.measured);
  EXPECT_EQ(second.choice, first.choice);
  EXPECT_EQ(trials.runs, runs_after_first) << "a cached choice runs nothing extra";
  EXPECT_EQ(measurement_count(), before + 1);
}

TEST(Tuner, ForceMeasuresEveryTimeAndOverwrites) {
  test::CacheSandbox sandbox;
  ScriptedTrials slow_first(choices, {3.0, 1.0, 5.0});
  const int64_t before = measurement_count();
  decide(BSRMM_TUNING_AUTO, shape(), slow_first);
  // The machine changed its mind (another load, a new driver): FORCE re-times and stores.
  ScriptedTrials fast_first(choices, {0.5, 1.0, 5.0});
  const Decision forced = decide(BSRMM_TUNING_FORCE, shape(), fast_first);
  EXPECT_TRUE(forced.measured);
  EXPECT_EQ(forced.choice, (Choice{"cpu_blocked_simd", 2}));
  EXPECT_GT(fast_first.runs[0], 0);
  const Decision again = decide(BSRMM_TUNING_FORCE, shape(), fast_first);
  EXPECT_TRUE(again.measured);
  EXPECT_EQ(measurement_count(), before + 3);

  ScriptedTrials auto_trials(choices, {9.0, 9.0, 9.0});
  const Decision cached = decide(BSRMM_TUNING_AUTO, shape(), auto_trials);
  EXPECT_FALSE(cached.measured);
  EXPECT_EQ(cached.choice, (Choice{"cpu_blocked_simd", 2})) << "FORCE overwrote the entry";
  EXPECT_EQ(TuningCache::instance().entries().size(), 1u);
}

TEST(Tuner, TiesGoToTheHeuristicsPick) {
  test::CacheSandbox sandbox;
  ScriptedTrials trials(choices, {2.0, 2.0, 2.0});
  EXPECT_EQ(decide(BSRMM_TUNING_FORCE, shape(), trials).choice, choices[0]);
}

TEST(Tuner, ACachedChoiceOutsideTheCandidatesIsNotTrusted) {
  test::CacheSandbox sandbox;
  ScriptedTrials trials(choices, {3.0, 1.0, 5.0});
  const Decision first = decide(BSRMM_TUNING_AUTO, shape(), trials);
  // A hand-edited (or hostile) file names a variant this build cannot run for the key.
  Entry forged = TuningCache::instance().entries().at(0);
  forged.variant = "no_such_variant";
  TuningCache::instance().store(forged);
  const Decision second = decide(BSRMM_TUNING_AUTO, shape(), trials);
  EXPECT_TRUE(second.measured);
  EXPECT_EQ(second.choice, first.choice);
  EXPECT_EQ(TuningCache::instance().lookup(first.key, "scripted device")->variant,
            "cpu_blocked_simd");
}

TEST(Tuner, DifferentCandidateSetsAreDifferentKeys) {
  test::CacheSandbox sandbox;
  ScriptedTrials three(choices, {3.0, 1.0, 5.0});
  ScriptedTrials two({choices[0], choices[2]}, {3.0, 5.0});
  const Decision a = decide(BSRMM_TUNING_AUTO, shape(), three);
  const Decision b = decide(BSRMM_TUNING_AUTO, shape(), two);
  EXPECT_NE(a.key, b.key);
  EXPECT_TRUE(b.measured) << "a choice from another candidate set is not reused";
  EXPECT_EQ(b.choice, choices[0]);
}

TEST(Tuner, RememberedChoicesLastUntilTheCacheChanges) {
  test::CacheSandbox sandbox;
  CallSignature one, two;
  one.words[0] = 1;
  two.words[0] = 2;
  const Choice choice{"cpu_blocked_simd", 2};
  EXPECT_FALSE(recall(one));
  remember(one, choice);
  EXPECT_EQ(recall(one), choice);
  EXPECT_FALSE(recall(two)) << "signatures differ in one word";

  ScriptedTrials trials(choices, {3.0, 1.0, 5.0});
  decide(BSRMM_TUNING_FORCE, shape(), trials);  // a store
  EXPECT_FALSE(recall(one)) << "a store forgets what was remembered";

  remember(one, choice);
  sandbox.use(sandbox.dir() + "/other.json");
  EXPECT_FALSE(recall(one)) << "another cache file";
  sandbox.use(sandbox.path());

  remember(one, choice);
  TuningCache::instance().clear();
  EXPECT_FALSE(recall(one)) << "clear";
}

TEST(Measure, PrunesHopelessCandidatesAndKeepsToTheBudget) {
  std::vector<int> runs(3, 0);
  const std::vector<double> times{1.0, 10.0, 400.0};
  const MeasurePolicy policy{2, 7, 2.0, 1000.0};
  const std::vector<Timing> timings = measure(
      3, [&](std::size_t i) { ++runs[i]; return times[i]; }, policy);
  EXPECT_EQ(timings[0].runs, 7);
  EXPECT_FALSE(timings[0].pruned);
  EXPECT_EQ(runs[0], 2 + 7);
  EXPECT_TRUE(timings[1].pruned) << "10x slower than the best: one timed run is enough";
  EXPECT_EQ(runs[1], 2 + 1);
  EXPECT_EQ(fastest(timings), 0u);

  // Alone, a 400 ms candidate gets budget / time = 2 timed runs, not 7.
  std::vector<int> slow_runs(1, 0);
  const std::vector<Timing> slow = measure(
      1, [&](std::size_t) { ++slow_runs[0]; return 400.0; }, policy);
  EXPECT_EQ(slow[0].runs, 2);
  EXPECT_EQ(slow_runs[0], 2 + 2);
}

TEST(Measure, MedianIgnoresOutliers) {
  EXPECT_EQ(median({5.0, 1.0, 100.0}), 5.0);
  EXPECT_EQ(median({4.0, 1.0, 2.0, 3.0}), 2.5);
  std::vector<int> calls(1, 0);
  const std::vector<double> noisy{1.0, 1.0, 50.0, 1.1, 0.9, 1.0};  // one preempted run
  const std::vector<Timing> timings = measure(
      1, [&](std::size_t) { return noisy[static_cast<size_t>(calls[0]++) % noisy.size()]; },
      MeasurePolicy{1, 5, 2.0, 1000.0});
  EXPECT_NEAR(timings[0].median_ms, 1.0, 0.11);
}

}  // namespace
}  // namespace bsrmm::tuner
