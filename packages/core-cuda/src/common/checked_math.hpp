// Size arithmetic that cannot overflow silently: every product of user-supplied sizes goes
// through here, so a huge shape becomes a clear INVALID_ARGUMENT instead of a short allocation.
#pragma once

#include "error.hpp"

#include <cstddef>
#include <cstdint>

namespace bsrmm::detail {

// a * b for non-negative operands; throws naming `what` when the product exceeds INT64_MAX.
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    invalid_argument(what, " overflows 64-bit sizes (", a, " * ", b, ")");
  }
  return product;
}

inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    invalid_argument(what, " overflows 64-bit sizes (", a, " + ", b, ")");
  }
  return sum;
}

// Byte count of `count` elements of `element_size` bytes, checked against size_t.
inline std::size_t checked_bytes(int64_t count, std::size_t element_size, const char* what) {
  std::size_t bytes = 0;
  if (count < 0 ||
      __builtin_mul_overflow(static_cast<std::size_t>(count), element_size, &bytes) ||
      bytes > static_cast<std::size_t>(INT64_MAX)) {
    invalid_argument(what, " needs more bytes than this platform can address (", count,
                     " elements of ", element_size, " bytes)");
  }
  return bytes;
}

}  // namespace bsrmm::detail
