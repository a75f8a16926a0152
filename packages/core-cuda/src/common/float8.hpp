// The two OCP 8-bit float formats as values: bsrmm stores them as raw bytes (as torch's
// float8_e4m3fn / float8_e5m2 and ml_dtypes do) and converts on load. Host code; the CPU
// reference and the tests decode with these.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace bsrmm::detail {

// Storage types, so templates can tell the formats apart (and from a plain byte).
struct f8e4m3_t {
  uint8_t bits;
};
struct f8e5m2_t {
  uint8_t bits;
};

// sign, `exponent_bits` of exponent (bias 2^(e-1) - 1), the rest mantissa; subnormals at
// exponent 0. NaN and infinity are the callers' business (the formats disagree on them).
inline double decode_minifloat(uint8_t bits, int exponent_bits) {
  const int mantissa_bits = 7 - exponent_bits;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, 1 - bias - mantissa_bits)
                    : std::ldexp((1 << mantissa_bits) + mantissa, exponent - bias - mantissa_bits);
  return (bits & 0x80) ? -magnitude : magnitude;
}

// E4M3 ("fn"): no infinities; S.1111.111 is NaN, so the largest value is S.1111.110 = 448.
inline double to_double(f8e4m3_t x) {
  if ((x.bits & 0x7f) == 0x7f) return std::numeric_limits<double>::quiet_NaN();
  return decode_minifloat(x.bits, 4);
}
// E5M2: IEEE-like, exponent 31 holds infinity (mantissa 0) and NaN.
inline double to_double(f8e5m2_t x) {
  if ((x.bits & 0x7c) == 0x7c) {
    if ((x.bits & 0x03) != 0) return std::numeric_limits<double>::quiet_NaN();
    return (x.bits & 0x80) ? -std::numeric_limits<double>::infinity()
                           : std::numeric_limits<double>::infinity();
  }
  return decode_minifloat(x.bits, 5);
}

// Every byte of a format decoded to float, built once per format: the fast CPU paths (the
// plan's dequantised values, a widened B) convert through it, one load per element.
// `e4m3` false: E5M2.
inline const float* fp8_table(bool e4m3) {
  struct Tables {
    float e4m3[256], e5m2[256];
    Tables() {
      for (int bits = 0; bits < 256; ++bits) {
        const uint8_t b = static_cast<uint8_t>(bits);
        e4m3[bits] = static_cast<float>(to_double(f8e4m3_t{b}));
        e5m2[bits] = static_cast<float>(to_double(f8e5m2_t{b}));
      }
    }
  };
  static const Tables tables;
  return e4m3 ? tables.e4m3 : tables.e5m2;
}

}  // namespace bsrmm::detail
