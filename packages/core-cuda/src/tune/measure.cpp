#include "measure.hpp"

#include <algorithm>

namespace bsrmm::tuner {

namespace {

// Whether a timed thread count of `candidate`'s variant, above its own count, was clearly
// slower than a larger timed count: the ladder ended there, fewer threads would not win.
bool ladder_ended(const std::vector<Choice>& candidates, const std::vector<Timing>& timings,
                  std::size_t candidate, double factor) {
  const Choice& choice = candidates[candidate];
  if (choice.threads <= 0) return false;
  const auto timed_rung = [&](std::size_t i) {
    return i != candidate && timings[i].runs > 0 && candidates[i].threads > 0 &&
           candidates[i].variant == choice.variant;
  };
  for (std::size_t slower = 0; slower < candidates.size(); ++slower) {
    if (!timed_rung(slower) || candidates[slower].threads <= choice.threads) continue;
    for (std::size_t faster = 0; faster < candidates.size(); ++faster) {
      if (timed_rung(faster) && candidates[faster].threads > candidates[slower].threads &&
          timings[slower].median_ms > factor * timings[faster].median_ms)
        return true;
    }
  }
  return false;
}

}  // namespace

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t middle = samples.size() / 2;
  return samples.size() % 2 ? samples[middle] : 0.5 * (samples[middle - 1] + samples[middle]);
}

std::vector<Timing> measure(const std::vector<Choice>& candidates,
                            const std::function<double(std::size_t)>& time_once,
                            const MeasurePolicy& policy) {
  std::vector<Timing> timings(candidates.size());
  double best = never;
  double spent = 0;
  const auto run = [&](std::size_t i) {
    const double ms = time_once(i);
    spent += ms;
    return ms;
  };
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (i > 0 && policy.cap_factor < never && spent > policy.cap_factor * best + policy.cap_ms) break;
    if (ladder_ended(candidates, timings, i, policy.fewer_threads_factor)) continue;
    // The first run is a warm-up, unless it is long enough to stand as the only sample.
    const double first = run(i);
    const bool single = i > 0 && first >= policy.single_run_ms;
    std::vector<double> samples;
    if (single || policy.warmups == 0) {
      samples.push_back(first);
    } else {
      for (int w = 1; w < policy.warmups; ++w) run(i);
      samples.push_back(run(i));
    }
    if (samples[0] > policy.prune_factor * best) {
      timings[i] = Timing{samples[0], 1, true};
      continue;
    }
    const int affordable = samples[0] > 0 ? static_cast<int>(policy.budget_ms / samples[0]) : policy.repetitions;
    const int runs = single ? 1 : std::max(1, std::min(policy.repetitions, affordable));
    while (static_cast<int>(samples.size()) < runs) samples.push_back(run(i));
    timings[i] = Timing{median(samples), runs, false};
    best = std::min(best, timings[i].median_ms);
  }
  return timings;
}

std::size_t fastest(const std::vector<Timing>& timings) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < timings.size(); ++i)
    if (timings[i].runs > 0 && timings[i].median_ms < timings[best].median_ms) best = i;
  return best;
}

std::size_t pick(const std::vector<Choice>& candidates, const std::vector<Timing>& timings,
                 const MeasurePolicy& policy) {
  const std::size_t best = fastest(timings);
  if (candidates[best].threads <= 0 || policy.fewer_threads_margin >= 1.0) return best;
  int32_t most = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (timings[i].runs > 0) most = std::max(most, candidates[i].threads);
  if (candidates[best].threads >= most) return best;
  std::size_t full = best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (timings[i].runs == 0 || candidates[i].threads != most) continue;
    if (full == best || timings[i].median_ms < timings[full].median_ms) full = i;
  }
  return timings[best].median_ms <= policy.fewer_threads_margin * timings[full].median_ms ? best : full;
}

}  // namespace bsrmm::tuner
