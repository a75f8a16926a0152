#include "tuner.hpp"

#include "../common/error.hpp"
#include "tuning_cache.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace bsrmm::tuner {

namespace {

std::atomic<int64_t> measurements{0};
std::atomic<int64_t> timed_runs{0};

// How many AUTO calls of each key missing from the cache this process has made, this one
// included. Keys are buckets, so a process meets few of them.
int64_t count_auto_call(const std::string& key) {
  struct Calls {
    std::mutex mutex;
    std::unordered_map<std::string, int64_t> by_key;
  };
  // Never destroyed: multiplies may still run from other threads while the process exits.
  static Calls* calls = new Calls();
  std::lock_guard<std::mutex> lock(calls->mutex);
  return ++calls->by_key[key];
}

}  // namespace

int64_t measurement_count() { return measurements.load(); }

int64_t timed_run_count() { return timed_runs.load(); }

std::optional<Choice> recall(const CallSignature& signature) {
  return TuningCache::instance().recall(signature);
}

void remember(const CallSignature& signature, const Choice& choice) {
  TuningCache::instance().remember(signature, choice);
}

Decision decide(bsrmm_tuning_mode mode, const ProblemShape& shape, Trials& trials) {
  const std::vector<Choice>& candidates = trials.candidates();
  if (candidates.empty()) detail::fail(BSRMM_STATUS_INTERNAL, "the tuner got no candidates");
  std::vector<std::string> labels;
  labels.reserve(candidates.size());
  for (const Choice& choice : candidates) labels.push_back(choice.label());

  Decision decision;
  decision.key = problem_key(shape, labels);
  const std::string device = trials.device();
  TuningCache& cache = TuningCache::instance();

  if (mode == BSRMM_TUNING_AUTO) {
    if (std::optional<Entry> entry = cache.lookup(decision.key, device)) {
      const Choice cached{entry->variant, entry->threads};
      // The key names the candidate set, so a match is eligible; checked all the same, since
      // a file is never trusted to be what this library wrote.
      for (const Choice& candidate : candidates) {
        if (candidate == cached) {
          decision.choice = cached;
          return decision;
        }
      }
    }
    if (count_auto_call(decision.key) < auto_tuning_call) {
      decision.deferred = true;
      return decision;
    }
  }

  ++measurements;
  const std::vector<Timing> timings = measure(
      candidates,
      [&](std::size_t i) {
        ++timed_runs;
        return trials.time_once(i);
      },
      trials.policy());
  const std::size_t best = pick(candidates, timings, trials.policy());
  decision.choice = candidates[best];
  decision.measured = true;

  Entry entry;
  entry.key = decision.key;
  entry.device = device;
  entry.library_version = library_version();
  entry.variant = decision.choice.variant;
  entry.threads = decision.choice.threads;
  entry.time_ms = timings[best].median_ms;
  entry.candidates = static_cast<int32_t>(candidates.size());
  entry.measured_at = utc_timestamp();
  cache.store(entry);
  return decision;
}

}  // namespace bsrmm::tuner
