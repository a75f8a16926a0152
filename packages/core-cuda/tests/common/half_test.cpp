// The software f16 / bf16 conversions against independent oracles: exact formulas for decoding,
// the compiler's own _Float16 (where it has one) and a nearest-value search for encoding.
#include "../../src/common/half.hpp"
#include "../support/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace bsrmm::test {
namespace {

using namespace bsrmm::detail;

// The value of a finite f16 from its fields, by definition.
double f16_value(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -magnitude : magnitude;
}

TEST(Half, DecodesEveryF16Exactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_bits_to_f32(static_cast<uint16_t>(h));
    const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    if (exponent == 0x1f && mantissa != 0) {
      EXPECT_TRUE(std::isnan(f)) << h;
    } else if (exponent == 0x1f) {
      EXPECT_TRUE(std::isinf(f) && std::signbit(f) == static_cast<bool>(h >> 15)) << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), f16_value(static_cast<uint16_t>(h))) << h;
      ASSERT_EQ(std::signbit(f), static_cast<bool>(h >> 15)) << h;
    }
  }
}

TEST(Half, EncodesF16EdgeCases) {
  EXPECT_EQ(f32_to_f16_bits(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bff);              // largest finite
  EXPECT_EQ(f32_to_f16_bits(65519.99f), 0x7bff);             // below the halfway point
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00);              // halfway to 2^16 rounds to even: inf
  EXPECT_EQ(f32_to_f16_bits(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(-INFINITY), 0xfc00);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 2^-24: even
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(3.0f, -25)), 0x0002);  // tie between 1 and 2 units: even
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1023.5f, -24)), 0x0400);  // subnormal rounding up to normal
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie: stays even
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie: rounds up to even
  EXPECT_EQ(f32_to_f16_bits(1e-30f), 0x0000);
}

TEST(Half, NanStaysNanAndKeepsSignAndPayload) {
  uint32_t bits = 0x7fa00000u;  // a signalling NaN with payload in the top mantissa bits
  float snan;
  std::memcpy(&snan, &bits, 4);
  const uint16_t h = f32_to_f16_bits(snan);
  EXPECT_EQ(h & 0x7c00, 0x7c00);
  EXPECT_NE(h & 0x03ff, 0);
  EXPECT_EQ(h & 0x0200, 0x0200) << "quietened";
  EXPECT_EQ(h & 0x0100, 0x0100) << "payload kept";
  EXPECT_EQ(f32_to_f16_bits(-std::nanf("")) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(snan))));
  bits = 0x7f800001u;  // payload only in the lowest bit: truncation alone would give infinity
  std::memcpy(&snan, &bits, 4);
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(snan))));
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(f32_to_f16_bits(snan))));
}

// Nearest f16 by search over all finite f16 values, ties to the even encoding; 0x7c00 when the
// value is at or beyond 65520.
uint16_t nearest_f16(float x) {
  if (std::fabs(x) >= 65520.0f) return x > 0 ? 0x7c00 : 0xfc00;
  uint16_t best = 0;
  double best_error = INFINITY;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  for (uint16_t m = 0; m < 0x7c00; ++m) {
    const double error = std::fabs(f16_value(m) - std::fabs(static_cast<double>(x)));
    if (error < best_error || (error == best_error && (m & 1) == 0)) {
      best = m;
      best_error = error;
    }
  }
  return sign | best;
}

TEST(Half, EncodesRandomF32ToTheNearestF16) {
  Random rng(9);
  for (int i = 0; i < 300; ++i) {
    const float x = static_cast<float>(std::ldexp(rng.uniform(-2, 2), static_cast<int>(rng.below(44)) - 28));
    ASSERT_EQ(f32_to_f16_bits(x), nearest_f16(x)) << x;
  }
}

#if defined(__FLT16_MAX__)
TEST(Half, AgreesWithTheCompilersFloat16) {
  Random rng(10);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng.next());
    float x;
    std::memcpy(&x, &bits, 4);
    if (std::isnan(x)) continue;
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t expected;
    std::memcpy(&expected, &h, 2);
    ASSERT_EQ(f32_to_f16_bits(x), expected) << x;
  }
}
#endif

TEST(Half, EncodesBf16ToNearestEven) {
  Random rng(12);
  for (int i = 0; i < 100000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng.next());
    float x;
    std::memcpy(&x, &bits, 4);
    if (std::isnan(x)) continue;
    // Candidates: truncation and the next value away from zero; pick the nearer, ties to even.
    const uint16_t down = static_cast<uint16_t>(bits >> 16);
    const uint16_t up = static_cast<uint16_t>(down + 1);
    const double exact = x;
    const double d_down = std::fabs(static_cast<double>(bf16_bits_to_f32(down)) - exact);
    // Past the largest finite value the next step is 2^128, which rounds to infinity.
    const double up_value = (up & 0x7fff) == 0x7f80 ? std::copysign(std::ldexp(1.0, 128), exact)
                                                    : static_cast<double>(bf16_bits_to_f32(up));
    const double d_up = std::fabs(up_value - exact);
    const uint16_t expected = (d_down < d_up || (d_down == d_up && (down & 1) == 0)) ? down : up;
    ASSERT_EQ(f32_to_bf16_bits(x), expected) << x;
  }
  EXPECT_EQ(f32_to_bf16_bits(3.3895313892515355e38f), 0x7f7f) << "the largest finite bf16";
  EXPECT_EQ(f32_to_bf16_bits(3.4e38f), 0x7f80) << "past halfway to 2^128 rounds to infinity";
  EXPECT_EQ(bf16_bits_to_f32(0x3f80), 1.0f);
}

}  // namespace
}  // namespace bsrmm::test
