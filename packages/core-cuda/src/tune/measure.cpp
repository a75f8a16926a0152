#include "measure.hpp"

#include <algorithm>
#include <limits>

namespace bsrmm::tuner {

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t middle = samples.size() / 2;
  return samples.size() % 2 ? samples[middle] : 0.5 * (samples[middle - 1] + samples[middle]);
}

std::vector<Timing> measure(std::size_t count, const std::function<double(std::size_t)>& time_once,
                            const MeasurePolicy& policy) {
  std::vector<Timing> timings(count);
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < count; ++i) {
    for (int w = 0; w < policy.warmups; ++w) time_once(i);
    std::vector<double> samples{time_once(i)};
    if (samples[0] > policy.prune_factor * best) {
      timings[i] = Timing{samples[0], 1, true};
      continue;
    }
    const int affordable = samples[0] > 0 ? static_cast<int>(policy.budget_ms / samples[0]) : policy.repetitions;
    const int runs = std::max(1, std::min(policy.repetitions, affordable));
    while (static_cast<int>(samples.size()) < runs) samples.push_back(time_once(i));
    timings[i] = Timing{median(samples), runs, false};
    best = std::min(best, timings[i].median_ms);
  }
  return timings;
}

std::size_t fastest(const std::vector<Timing>& timings) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < timings.size(); ++i)
    if (timings[i].median_ms < timings[best].median_ms) best = i;
  return best;
}

}  // namespace bsrmm::tuner
