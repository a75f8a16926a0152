// The tuner's decision with a scripted backend: AUTO runs the heuristic until a key's third
// call, then measures once and reuses; FORCE always measures; the fastest wins (the heuristic
// on ties); hopeless candidates stop early; and measure() keeps to its budget: long runs timed
// once, thread ladders that end where fewer threads are clearly slower, no new candidate past
// the cap.
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

// `n` sets a key apart: AUTO counts its calls per key over the whole process.
ProblemShape shape(int64_t n = 64) {
  ProblemShape s;
  s.arch = "cpu";
  s.m = s.k = 64;
  s.n = n;
  s.block_rows = s.block_cols = 8;
  s.nnzb = 16;
  s.max_row_blocks = 2;
  return s;
}

const std::vector<Choice> choices{{"cpu_blocked_simd", 2}, {"cpu_blocked_simd", 1},
                                  {"cpu_reference_f64acc", 2}};

// An AUTO decision past the deferral: the key's tuning call, or a cached choice.
Decision decide_auto(Trials& trials, const ProblemShape& s = shape()) {
  Decision decision;
  for (int call = 1; call <= auto_tuning_call; ++call) {
    decision = decide(BSRMM_TUNING_AUTO, s, trials);
    if (!decision.deferred) break;
  }
  EXPECT_FALSE(decision.deferred) << "AUTO deferred past call " << auto_tuning_call;
  return decision;
}

TEST(Tuner, AutoRunsTheHeuristicUntilAKeysThirdCall) {
  test::CacheSandbox sandbox;
  ScriptedTrials trials(choices, {3.0, 1.0, 5.0});
  const ProblemShape fresh = shape(1 << 20);  // a key no other test meets
  const int64_t before = measurement_count();
  for (int call = 1; call < auto_tuning_call; ++call) {
    const Decision early = decide(BSRMM_TUNING_AUTO, fresh, trials);
    EXPECT_TRUE(early.deferred) << "call " << call;
    EXPECT_FALSE(early.measured);
    EXPECT_EQ(early.choice, Choice{}) << "the heuristic's pick";
  }
  EXPECT_EQ(trials.runs, std::vector<int>(choices.size(), 0)) << "nothing timed";
  EXPECT_EQ(measurement_count(), before);
  EXPECT_TRUE(TuningCache::instance().entries().empty()) << "nothing stored";

  const Decision third = decide(BSRMM_TUNING_AUTO, fresh, trials);
  EXPECT_FALSE(third.deferred);
  EXPECT_TRUE(third.measured);
  EXPECT_EQ(third.choice, (Choice{"cpu_blocked_simd", 1}));
  EXPECT_EQ(measurement_count(), before + 1);

  // A key another process (here: FORCE) tuned serves AUTO from its first call.
  const ProblemShape tuned_elsewhere = shape(1 << 21);
  decide(BSRMM_TUNING_FORCE, tuned_elsewhere, trials);
  const Decision first_call = decide(BSRMM_TUNING_AUTO, tuned_elsewhere, trials);
  EXPECT_FALSE(first_call.deferred);
  EXPECT_FALSE(first_call.measured);
  EXPECT_EQ(first_call.choice, (Choice{"cpu_blocked_simd", 1}));
}

TEST(Tuner, AutoMeasuresOnceThenReusesTheCachedChoice) {
  test::CacheSandbox sandbox;
  ScriptedTrials trials(choices, {3.0, 1.0, 5.0});
  const int64_t before = measurement_count();
  const Decision first = decide_auto(trials);
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
  decide_auto(slow_first);
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
  const Decision first = decide_auto(trials);
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
  const Decision a = decide_auto(three);
  const Decision b = decide_auto(two);
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

// Candidates without thread counts (GPU variants), one per time.
std::vector<Choice> variants(std::size_t count) {
  std::vector<Choice> list;
  for (std::size_t i = 0; i < count; ++i) list.push_back(Choice{"variant_" + std::to_string(i), 0});
  return list;
}

// measure() over scripted times; runs[i] counts candidate i's runs, warm-ups included, and
// `spent` sums the times of all of them (what tuning cost).
struct Scripted {
  std::vector<double> times;
  std::vector<int> runs = std::vector<int>(times.size(), 0);
  double spent = 0;

  std::vector<Timing> measure_with(const std::vector<Choice>& candidates, const MeasurePolicy& policy) {
    return measure(candidates, [this](std::size_t i) {
      ++runs.at(i);
      spent += times.at(i);
      return times.at(i);
    }, policy);
  }
};

TEST(Measure, PrunesHopelessCandidatesAndKeepsToTheBudget) {
  const MeasurePolicy policy{2, 7, 2.0, 1000.0};
  Scripted three{{1.0, 10.0, 400.0}};
  const std::vector<Timing> timings = three.measure_with(variants(3), policy);
  EXPECT_EQ(timings[0].runs, 7);
  EXPECT_FALSE(timings[0].pruned);
  EXPECT_EQ(three.runs[0], 2 + 7);
  EXPECT_TRUE(timings[1].pruned) << "10x slower than the best: one timed run is enough";
  EXPECT_EQ(three.runs[1], 2 + 1);
  EXPECT_EQ(fastest(timings), 0u);

  // Alone, a 400 ms candidate gets budget / time = 2 timed runs, not 7.
  Scripted slow{{400.0}};
  const std::vector<Timing> alone = slow.measure_with(variants(1), policy);
  EXPECT_EQ(alone[0].runs, 2);
  EXPECT_EQ(slow.runs[0], 2 + 2);
}

TEST(Measure, MedianIgnoresOutliers) {
  EXPECT_EQ(median({5.0, 1.0, 100.0}), 5.0);
  EXPECT_EQ(median({4.0, 1.0, 2.0, 3.0}), 2.5);
  std::vector<int> calls(1, 0);
  const std::vector<double> noisy{1.0, 1.0, 50.0, 1.1, 0.9, 1.0};  // one preempted run
  const std::vector<Timing> timings = measure(
      variants(1), [&](std::size_t) { return noisy[static_cast<size_t>(calls[0]++) % noisy.size()]; },
      MeasurePolicy{1, 5, 2.0, 1000.0});
  EXPECT_NEAR(timings[0].median_ms, 1.0, 0.11);
}

// A CPU variant at 16, 8, 4, 2 and 1 threads.
std::vector<Choice> ladder(const std::string& variant) {
  std::vector<Choice> list;
  for (int32_t threads : {16, 8, 4, 2, 1}) list.push_back(Choice{variant, threads});
  return list;
}

std::vector<Choice> operator+(std::vector<Choice> a, const std::vector<Choice>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(Measure, LongRunsAreTimedOnceAfterTheFirstCandidate) {
  MeasurePolicy policy{1, 5, 2.0, 10.0};
  policy.single_run_ms = 10.0;
  Scripted long_runs{{100.0, 150.0, 3.0}};
  const std::vector<Timing> timings = long_runs.measure_with(variants(3), policy);
  EXPECT_EQ(long_runs.runs[0], 2) << "the first candidate warms up: it pays the one-time costs";
  EXPECT_EQ(timings[0].runs, 1);
  EXPECT_EQ(long_runs.runs[1], 1) << "a 150 ms run is its own sample, no warm-up";
  EXPECT_EQ(timings[1].runs, 1);
  EXPECT_EQ(timings[1].median_ms, 150.0);
  EXPECT_EQ(long_runs.runs[2], 1 + 3) << "a short run still warms up and repeats within the budget";
  EXPECT_EQ(timings[2].runs, 3);
  EXPECT_EQ(fastest(timings), 2u);
}

TEST(Measure, AThreadLadderEndsWhereFewerThreadsAreClearlySlower) {
  MeasurePolicy policy{1, 5, 2.0, 1000.0};
  policy.fewer_threads_factor = 1.25;
  // A large problem: half the threads take 1.4x as long; the reference is hopeless throughout.
  Scripted large{{10.0, 14.0, 20.0, 35.0, 60.0, 100.0, 150.0, 250.0, 400.0, 700.0}};
  const std::vector<Timing> timings = large.measure_with(ladder("fast") + ladder("slow"), policy);
  EXPECT_EQ(large.runs, (std::vector<int>{1 + 5, 1 + 5, 0, 0, 0, 1 + 1, 1 + 1, 0, 0, 0}));
  for (std::size_t i : {2u, 3u, 4u, 7u, 8u, 9u}) EXPECT_EQ(timings[i].runs, 0) << i;
  EXPECT_EQ(fastest(timings), 0u);

  // A small problem: waking workers costs more than they bring, fewer threads keep winning.
  Scripted small{{0.08, 0.05, 0.03, 0.02, 0.021, 0.5, 0.4, 0.3, 0.2, 0.19}};
  const std::vector<Timing> all = small.measure_with(ladder("fast") + ladder("slow"), policy);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_GT(all[i].runs, 0) << i;
  EXPECT_EQ(fastest(all), 3u) << "2 threads";

  // Slower, but within the factor of the ladder's best: one more rung, then the end.
  Scripted flat{{10.0, 12.0, 13.0, 14.0, 15.0}};
  flat.measure_with(ladder("fast"), policy);
  EXPECT_EQ(flat.runs, (std::vector<int>{6, 6, 6, 0, 0}));
}

TEST(Measure, NoCandidateStartsPastTheCap) {
  MeasurePolicy policy{1, 5, 2.0, 10.0};
  policy.single_run_ms = 10.0;
  policy.cap_factor = 2.5;
  policy.cap_ms = 25.0;
  // 100 ms (warm-up + run) = 200 spent, under 2.5 x 100 + 25; then 90: 290 > 2.5 x 90 + 25.
  Scripted capped{{100.0, 90.0, 80.0, 70.0}};
  const std::vector<Timing> timings = capped.measure_with(variants(4), policy);
  EXPECT_EQ(capped.runs, (std::vector<int>{2, 1, 0, 0}));
  EXPECT_EQ(fastest(timings), 1u);
  // Short runs stay under the fixed part of the cap: every candidate is timed.
  Scripted short_runs{{0.5, 0.4, 0.3, 0.2}};
  short_runs.measure_with(variants(4), policy);
  EXPECT_EQ(short_runs.runs, (std::vector<int>{6, 6, 6, 6}));
}

// The CPU policy on a scripted 16-thread machine: a large problem (the blocked variant scales,
// the reference is 50x slower) costs at most 4 runs of the fastest setting; a small one tunes
// every candidate and picks the count that wins.
TEST(Measure, CpuTuningCostsAFewRunsOfTheBest) {
  const std::vector<Choice> candidates = ladder("cpu_blocked_simd") + ladder("cpu_reference_f64acc");
  Scripted large{{100.0, 180.0, 340.0, 660.0, 1300.0, 5000.0, 9000.0, 17000.0, 33000.0, 65000.0}};
  const std::vector<Timing> timings = large.measure_with(candidates, cpu_policy);
  EXPECT_EQ(large.runs, (std::vector<int>{2, 1, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(fastest(timings), 0u);
  EXPECT_LE(large.spent, 4 * 100.0);

  // Under load, half the threads win: the ladder goes on while it gets faster.
  Scripted loaded{{300.0, 200.0, 260.0, 500.0, 900.0, 5000.0, 9000.0, 17000.0, 33000.0, 65000.0}};
  EXPECT_EQ(fastest(loaded.measure_with(candidates, cpu_policy)), 1u);
  EXPECT_LE(loaded.spent, 4 * 200.0);

  Scripted small{{0.08, 0.05, 0.03, 0.02, 0.021, 0.5, 0.4, 0.3, 0.2, 0.19}};
  const std::vector<Timing> tiny = small.measure_with(candidates, cpu_policy);
  for (std::size_t i = 0; i < candidates.size(); ++i) EXPECT_GT(small.runs[i], 0) << i;
  EXPECT_EQ(fastest(tiny), 3u);
  EXPECT_EQ(pick(candidates, tiny, cpu_policy), 3u) << "a quarter of the time: clearly faster";
  EXPECT_LE(small.spent, 25.0);
}

// What the tuner keeps: fewer threads than the most timed only when clearly faster, since a
// choice outlives the moment it was measured in (a loaded machine made 1 thread look faster).
TEST(Measure, FewerThreadsAreKeptOnlyWhenClearlyFaster) {
  const std::vector<Choice> candidates = ladder("cpu_blocked_simd") + ladder("cpu_rowwise_simd");
  std::vector<Timing> timings(candidates.size());
  const auto timed = [&](std::size_t i, double ms) { timings[i] = Timing{ms, 5, false}; };
  timed(0, 1.00);  // blocked, 16 threads
  timed(1, 0.90);  // blocked, 8 threads: 0.9x, within the margin
  timed(5, 1.05);  // rowwise, 16 threads
  EXPECT_EQ(fastest(timings), 1u);
  EXPECT_EQ(pick(candidates, timings, cpu_policy), 0u) << "the best with 16 threads";
  timed(5, 0.95);
  EXPECT_EQ(pick(candidates, timings, cpu_policy), 5u) << "the best with 16 threads, any variant";
  timed(1, 0.70);  // now 0.74x of 0.95: clearly faster
  EXPECT_EQ(pick(candidates, timings, cpu_policy), 1u);
  // The GPU policy (no thread counts) and a margin of 1 keep the fastest.
  timed(1, 0.90);
  EXPECT_EQ(pick(candidates, timings, gpu_policy), 1u);
  const std::vector<Choice> gpu = variants(3);
  std::vector<Timing> gpu_timings{{1.0, 3, false}, {0.99, 3, false}, {2.0, 3, false}};
  EXPECT_EQ(pick(gpu, gpu_timings, cpu_policy), 1u) << "threads 0: no ladder to prefer";
}

}  // namespace
}  // namespace bsrmm::tuner
