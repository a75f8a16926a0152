// Software f16 (IEEE binary16) and bf16 conversions. Written with integer arithmetic so the
// result does not depend on the host's FPU flags or compiler support for _Float16:
// round-to-nearest-even, overflow to infinity, subnormals kept, NaN stays NaN (quietened, sign
// and top payload bits kept).
#pragma once

#include <cstdint>
#include <cstring>

namespace bsrmm::detail {

inline uint32_t float_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
inline float bits_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Rounds `value >> shift` to nearest, ties to even (shift in 1..31).
inline uint32_t shift_right_rne(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
}

inline uint16_t f32_to_f16_bits(float value) {
  const uint32_t bits = float_bits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t exponent = (bits >> 23) & 0xffu;
  const uint32_t mantissa = bits & 0x7fffffu;

  if (exponent == 0xffu) {
    if (mantissa == 0) return sign | 0x7c00u;
    return static_cast<uint16_t>(sign | 0x7e00u | (mantissa >> 13));
  }
  // Unbiased exponent e: half normals cover e in [-14, 15], half subnormals reach down to 2^-24.
  const int e = static_cast<int>(exponent) - 127;
  if (e > 15) return sign | 0x7c00u;
  if (e >= -14) {
    // Rounding may carry into the exponent field; a carry out of e = 15 lands exactly on the
    // infinity encoding, which is the correct result for values >= 65520.
    const uint32_t half_bits = (static_cast<uint32_t>(e + 15) << 10) + shift_right_rne(mantissa, 13);
    return static_cast<uint16_t>(sign | half_bits);
  }
  if (e < -25) return sign;  // below half the smallest subnormal: rounds to zero
  // Subnormal: value = 1.mantissa * 2^e = significand * 2^(e - 23); in units of 2^-24 that is
  // significand >> (-e - 1). A carry into bit 10 yields the smallest normal, also correct.
  const uint32_t significand = mantissa | 0x800000u;
  return static_cast<uint16_t>(sign | shift_right_rne(significand, -e - 1));
}

inline float f16_bits_to_f32(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1fu) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24 is exact in f32.
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

inline uint16_t f32_to_bf16_bits(float value) {
  const uint32_t bits = float_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest even; overflow reaches infinity.
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

inline float bf16_bits_to_f32(uint16_t bf16) { return bits_float(static_cast<uint32_t>(bf16) << 16); }

// Storage types for the two half formats, so templates can tell them apart.
struct f16_t {
  uint16_t bits;
};
struct bf16_t {
  uint16_t bits;
};

inline float to_float(f16_t x) { return f16_bits_to_f32(x.bits); }
inline float to_float(bf16_t x) { return bf16_bits_to_f32(x.bits); }
inline float to_float(float x) { return x; }
inline double to_double(f16_t x) { return f16_bits_to_f32(x.bits); }
inline double to_double(bf16_t x) { return bf16_bits_to_f32(x.bits); }
inline double to_double(float x) { return x; }
inline double to_double(double x) { return x; }

// Conversions from a computed value into a storage type. Half outputs round once from f32
// (the CPU accumulates f16/bf16 products in f32, as the GPU kernels do).
template <typename Storage>
struct Store;
template <>
struct Store<float> {
  static float from(float x) { return x; }
  static float from(double x) { return static_cast<float>(x); }
};
template <>
struct Store<double> {
  static double from(double x) { return x; }
};
template <>
struct Store<f16_t> {
  static f16_t from(float x) { return f16_t{f32_to_f16_bits(x)}; }
  static f16_t from(double x) { return f16_t{f32_to_f16_bits(static_cast<float>(x))}; }
};
template <>
struct Store<bf16_t> {
  static bf16_t from(float x) { return bf16_t{f32_to_bf16_bits(x)}; }
  static bf16_t from(double x) { return bf16_t{f32_to_bf16_bits(static_cast<float>(x))}; }
};

}  // namespace bsrmm::detail
