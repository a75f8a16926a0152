// What the tuner chooses: a variant, and for CPU variants the worker thread count.
#pragma once

#include <cstdint>
#include <string>

namespace bsrmm::tuner {

struct Choice {
  std::string variant;
  int32_t threads = 0;  // CPU worker threads; 0 for GPU variants

  // "cpu_blocked_simd@2" for CPU choices, the variant name for GPU ones.
  std::string label() const {
    return threads > 0 ? variant + "@" + std::to_string(threads) : variant;
  }
  bool operator==(const Choice& other) const {
    return variant == other.variant && threads == other.threads;
  }
};

}  // namespace bsrmm::tuner
