// Timing a set of candidates: untimed warm-up runs (first-touch costs, clocks, caches), then
// timed repetitions, summarised by the median (robust to a preempted run on a shared machine).
// What keeps the cost of tuning a small multiple of one multiply at the fastest setting:
//   - a candidate whose first timed run is far slower than the best median so far stops there:
//     it cannot win, and measuring a 10x slower kernel ten times would dominate the tuning cost;
//   - a run that is long by itself is the candidate's only run (no warm-up: the first-touch
//     costs are small next to it), except for the first candidate, which pays the process's
//     one-time costs (scratch C, packing buffers, converted values) in its warm-up;
//   - thread counts of a CPU variant come in descending order and stop once fewer threads are
//     clearly slower than the variant's best with more (fewer still would only be slower);
//   - no new candidate starts once the time spent exceeds a multiple of the best so far.
// The CPU policy turns these on; the GPU policy leaves them off (short runs, no thread counts).
#pragma once

#include "choice.hpp"

#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

namespace bsrmm::tuner {

constexpr double never = std::numeric_limits<double>::infinity();

struct MeasurePolicy {
  int warmups;
  int repetitions;
  double prune_factor;   // stop after one run slower than prune_factor x the best median
  double budget_ms;      // fewer repetitions when one run is long: at most ~budget per candidate
  double single_run_ms = never;  // a first run this long is the sample (candidates after the first)
  double fewer_threads_factor = never;  // a thread count this much slower ends its variant's ladder
  // No candidate starts once the runs so far took longer than cap_factor x best + cap_ms.
  double cap_factor = never;
  double cap_ms = never;
  // pick(): a choice of fewer threads than the most timed must take at most this fraction of the
  // best time with the most threads (1: the fastest wins).
  double fewer_threads_margin = 1.0;
};

// CUDA events resolve ~1 us and GPU runs are short: more repetitions.
constexpr MeasurePolicy gpu_policy{3, 15, 2.0, 200.0};
// CPU runs are noisy under load: the median of up to 5 ranks short ones; a run of 10 ms or more
// is timed once (it spans many scheduler ticks). Tuning a large problem then costs ~3-4 runs of
// the fastest setting (warm-up and run of all threads, one run of half as many), a small one a
// few milliseconds; the cap bounds the rest (docs/perf-log.md, "CPU tuning cost").
// A tuned choice is kept for good (the tuning cache), but what it measured is one moment: on a
// shared machine a busy minute made 1 thread look faster than 2, and cells ran 0.63 against 0.38
// ms for days (perf-log 59). Fewer threads than the context allows must be clearly faster (0.8x).
constexpr MeasurePolicy cpu_policy{1, 5, 2.0, 10.0, 10.0, 1.25, 2.5, 25.0, 0.8};

struct Timing {
  double median_ms = 0;
  int runs = 0;         // timed runs taken; 0: not run (its ladder ended or the cap was reached)
  bool pruned = false;  // stopped early: slower than the best by prune_factor
};

// time_once(i) runs candidates[i] once and returns its time in milliseconds. Candidates come in
// preference order (the heuristic's pick first), each variant's thread counts descending.
std::vector<Timing> measure(const std::vector<Choice>& candidates,
                            const std::function<double(std::size_t)>& time_once,
                            const MeasurePolicy& policy);

// The index of the smallest median among the timed candidates (the first one on ties:
// candidates come in preference order). The first candidate is always timed.
std::size_t fastest(const std::vector<Timing>& timings);

// The choice to keep: the fastest, unless it runs fewer threads than the most any timed
// candidate ran and is not clearly faster than the best of those (policy.fewer_threads_margin),
// which is kept then.
std::size_t pick(const std::vector<Choice>& candidates, const std::vector<Timing>& timings,
                 const MeasurePolicy& policy);

double median(std::vector<double> samples);

}  // namespace bsrmm::tuner
