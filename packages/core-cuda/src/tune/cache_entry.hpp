// One tuned choice as the cache stores it, and its JSON form. An entry is identified by its
// key, the device it was measured on and the library version that measured it: the same file
// may serve several GPUs (a shared home directory) and several installed versions of bsrmm,
// and a choice is only trusted by the ones that match all three.
#pragma once

#include "json.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bsrmm::tuner {

struct Entry {
  std::string key;              // problem_key()
  std::string device;           // "NVIDIA H100 80GB HBM3 (sm_90)", "<cpu model> (2 threads)"
  std::string library_version;  // bsrmm_version() of the process that measured it
  std::string variant;          // the winner
  int32_t threads = 0;          // CPU worker threads the winner runs with; 0 for GPU variants
  double time_ms = 0;           // the winner's median time
  int32_t candidates = 0;       // how many choices were measured
  std::string measured_at;      // UTC, ISO 8601
};

bool same_slot(const Entry& a, const Entry& b);

// "0.1.0": the version this library writes into its entries and matches on lookup.
std::string library_version();
// Now, as "2025-01-31T12:00:00Z".
std::string utc_timestamp();

Json entry_to_json(const Entry& entry);
// Throws JsonError naming the field when `json` is not a well-formed entry.
Entry entry_from_json(const Json& json);
Json entries_to_json(const std::vector<Entry>& entries);

}  // namespace bsrmm::tuner
