// Reads typed values off a fuzzer's input, front to back. Past the end every read is 0, so any
// byte string decodes to some case: libFuzzer's mutations steer bytes, never a parser that
// rejects them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace bsrmm::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t byte() { return offset_ < size_ ? data_[offset_++] : 0; }

  // An integer of T's width from the next bytes, little-endian.
  template <typename T>
  T raw() {
    using U = std::make_unsigned_t<T>;
    U bits = 0;
    for (size_t i = 0; i < sizeof(T); ++i) bits = static_cast<U>(bits | (U{byte()} << (8 * i)));
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }

  // An integer in [low, high] (high - low < 2^32).
  int64_t in_range(int64_t low, int64_t high) {
    const uint64_t span = static_cast<uint64_t>(high - low) + 1;
    return low + static_cast<int64_t>(raw<uint32_t>() % span);
  }

  // True with probability about `in_256` / 256.
  bool chance(int in_256) { return byte() < in_256; }

  // An int64 near the places sizes break: 0, +-1, the int32 and int64 limits, powers of two
  // (with a small offset), or raw bits.
  int64_t edge_int64() {
    switch (byte() % 8) {
      case 0: return static_cast<int64_t>(byte() % 5) - 2;
      case 1: return int64_t{std::numeric_limits<int32_t>::max()} + (byte() % 5) - 2;
      case 2: return std::numeric_limits<int64_t>::max() - (byte() % 3);
      case 3: return std::numeric_limits<int64_t>::min() + (byte() % 3);
      case 4: return (int64_t{1} << (byte() % 63)) + (byte() % 5) - 2;
      case 5: return -(int64_t{1} << (byte() % 63));
      case 6: return in_range(0, 4096);
      default: return raw<int64_t>();
    }
  }

  size_t remaining() const { return size_ - offset_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

// Stores any int into a field of C enum type, as a C caller may (a C++ conversion to an enum
// without a fixed type is undefined outside its range; a byte copy is not).
template <typename Enum>
void store_enum(Enum& field, int32_t value) {
  static_assert(sizeof(Enum) == sizeof(int32_t), "bsrmm's C enums are int-sized");
  std::memcpy(&field, &value, sizeof value);
}

template <typename Enum>
int32_t enum_value(const Enum& field) {
  int32_t value;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

}  // namespace bsrmm::fuzz
