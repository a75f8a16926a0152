// The tuner's decision for one multiply. The backend side (src/api) describes the multiply
// through Trials: the choices it may make, the heuristic's first, and a way to time one of them
// on the caller's operands without writing the caller's C. The tuner files the result in the
// cache under the problem key and the device.
//
//   OFF    the heuristic's choice; no lookup, no measurement (callers skip the tuner entirely)
//   AUTO   the cached choice; on a miss, the heuristic's until this process has met the key
//          auto_tuning_call times, then measure the candidates (measure.hpp says which are
//          skipped) and store the fastest: a short script never pays for tuning, a loop does
//          once
//   FORCE  measure and store, whatever the cache holds
#pragma once

#include "call_signature.hpp"
#include "choice.hpp"
#include "measure.hpp"
#include "problem_key.hpp"

#include <bsrmm/bsrmm.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bsrmm::tuner {

class Trials {
 public:
  virtual ~Trials() = default;
  // Every eligible choice, the heuristic's pick first (it wins ties), each CPU variant's thread
  // counts descending (measure() ends a variant's ladder where fewer threads are slower).
  // Never empty.
  virtual const std::vector<Choice>& candidates() = 0;
  // Runs candidates()[index] once into scratch output and returns its time in milliseconds.
  virtual double time_once(std::size_t index) = 0;
  virtual MeasurePolicy policy() const = 0;
  // Identifies the machine the times belong to: "NVIDIA H100 80GB HBM3 (sm_90)".
  virtual std::string device() const = 0;
};

// AUTO measures a key missing from the cache on this call of it in the process (the calls
// before run the heuristic's pick).
constexpr int auto_tuning_call = 3;

struct Decision {
  Choice choice;  // empty (the heuristic's pick) when deferred
  bool measured = false;
  // AUTO has not met the key auto_tuning_call times yet: nothing cached or measured, the
  // heuristic's pick runs, and the decision is not one to remember.
  bool deferred = false;
  std::string key;
};

// AUTO or FORCE (OFF never reaches the tuner).
Decision decide(bsrmm_tuning_mode mode, const ProblemShape& shape, Trials& trials);

// The choice decide() last made (in AUTO) for a call with this signature, while the cache has
// not changed since: the fast path of AUTO multiplies. Any store, clear, re-read of the file or
// change of BSRMM_TUNING_CACHE forgets every remembered choice.
std::optional<Choice> recall(const CallSignature& signature);
void remember(const CallSignature& signature, const Choice& choice);

// How many times this process has measured a candidate set: tests use it to tell a cached
// choice from a fresh measurement.
int64_t measurement_count();
// How many candidate runs (warm-ups included) this process has made while measuring: tests use
// it to check what tuning a problem costs.
int64_t timed_run_count();

}  // namespace bsrmm::tuner
