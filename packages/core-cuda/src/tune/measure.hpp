// Timing a set of candidates: untimed warm-up runs (first-touch costs, clocks, caches), then
// timed repetitions, summarised by the median (robust to a preempted run on a shared machine).
// A candidate whose first timed run is far slower than the best median so far stops there:
// it cannot win, and measuring a 10x slower kernel ten times would dominate the tuning cost.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace bsrmm::tuner {

struct MeasurePolicy {
  int warmups;
  int repetitions;
  double prune_factor;   // stop after one run slower than prune_factor x the best median
  double budget_ms;      // fewer repetitions when one run is long: at most ~budget per candidate
};

// CUDA events resolve ~1 us and GPU runs are short: more repetitions.
constexpr MeasurePolicy gpu_policy{3, 15, 2.0, 200.0};
// CPU runs are long and noisy under load; the median of 5 is stable enough to rank them.
constexpr MeasurePolicy cpu_policy{1, 5, 2.0, 500.0};

struct Timing {
  double median_ms = 0;
  int runs = 0;         // timed runs taken
  bool pruned = false;  // stopped early: slower than the best by prune_factor
};

// time_once(i) runs candidate i once and returns its time in milliseconds.
std::vector<Timing> measure(std::size_t count, const std::function<double(std::size_t)>& time_once,
                            const MeasurePolicy& policy);

// The index of the smallest median (the first one on ties: candidates come in preference order).
std::size_t fastest(const std::vector<Timing>& timings);

double median(std::vector<double> samples);

}  // namespace bsrmm::tuner
