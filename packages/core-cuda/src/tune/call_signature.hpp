// Everything about one call that the problem key, the device and the candidate set can depend
// on, as plain numbers: exact sizes, leading dimensions, operand addresses modulo 256 (the
// alignment a kernel's supports() may test), epilogue, settings. Two calls with the same
// signature get the same key and the same candidates, so a choice remembered for one serves
// the other without building the key or looking it up: AUTO multiplies of a known problem cost
// a hash lookup, not a string key and a cache search (that matters for microsecond multiplies).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace bsrmm::tuner {

struct CallSignature {
  std::array<int64_t, 29> words{};

  bool operator==(const CallSignature& other) const { return words == other.words; }
};

struct CallSignatureHash {
  std::size_t operator()(const CallSignature& signature) const {
    uint64_t hash = 1469598103934665603ull;  // FNV-1a over the words
    for (const int64_t word : signature.words) {
      hash ^= static_cast<uint64_t>(word);
      hash *= 1099511628211ull;
    }
    return static_cast<std::size_t>(hash);
  }
};

}  // namespace bsrmm::tuner
