// The epilogue shared by both CPU variants, per element of C:
//   out = alpha * acc (+ beta * C when beta != 0) (+ bias[row]), then the activation.
// beta == 0 never reads C, so NaN or garbage in C does not reach the output (BLAS semantics).
#pragma once

#include <bsrmm/bsrmm.h>

#include "isa_clones.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace bsrmm::cpu {

// GELU's (tanh approximation's) t in x / (1 + exp(-t)): 2 sqrt(2 / pi) (x + 0.044715 x^3).
constexpr double gelu_scale = 1.5957691216057308;  // 2 sqrt(2 / pi)
constexpr double gelu_cubic = 0.044715;

template <typename T>
BSRMM_CPU_INLINE T gelu_gate(T x) {
  return T(gelu_scale) * (x + T(gelu_cubic) * x * x * x);
}

template <typename T>
inline T activate(T x, bsrmm_activation activation) {
  // GELU and SiLU tend to x at +inf and to 0 at -inf; their formulas would give inf * 0 = NaN.
  const bool smooth = activation == BSRMM_ACTIVATION_GELU || activation == BSRMM_ACTIVATION_SILU;
  if (smooth && std::isinf(x)) return x > T(0) ? x : T(0);
  switch (activation) {
    case BSRMM_ACTIVATION_RELU:
      // Written so NaN propagates (a plain max(x, 0) would turn NaN into 0).
      return x < T(0) ? T(0) : x;
    case BSRMM_ACTIVATION_GELU: {
      // 0.5 x (1 + tanh(u)) written as x / (1 + exp(-2u)), the same function: one exp where
      // std::tanh cost 3.6x as much (27.4 against 14.5 ms for a 2048 x 1024 layer's output on
      // one core, silu's form; perf-log 61), and no cancellation in 1 + tanh(u) for x << 0.
      return x / (T(1) + std::exp(-gelu_gate(x)));
    }
    case BSRMM_ACTIVATION_SILU:
      return x / (T(1) + std::exp(-x));
    case BSRMM_ACTIVATION_NONE:
      break;
  }
  return x;
}

// ---- GELU / SiLU over runs of f32 outputs, in vector operations ----
// The per-element activate() calls std::exp, which no loop vectorises: on one core the fused
// GELU of a 2048 x 1024 output cost ~4 ms, a third of its layer (perf-log 63). The kernels'
// tile stores stage each row's values, run them through activate_run, then write them.

// Four f32 lanes in GCC's vector extensions: SSE2 instructions every x86-64 has, emitted with no
// auto-vectoriser in between, which gave up on these loops ("control flow": a select next to a
// division or a float-to-int conversion, operations that may trap). Eight lanes ran 0.72 ns an
// element on AVX2 but 4.1 in the baseline clone (split by GCC, partly through memory); four run
// 1.1 / 1.5, against 2.5 for std::exp element by element (perf-log 63).
using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = int32_t __attribute__((vector_size(16)));

// exp(x) lane by lane: x clamped to [-87, 88] (so 2^n stays a normal number; NaN lanes become 0,
// the callers carry NaN through x itself), n = round(x / ln 2) with the 1.5 * 2^23 trick, the
// rest r in [-ln2/2, ln2/2] through Cephes' expf polynomial (~1 ulp), 2^n built in the
// exponent bits.
BSRMM_CPU_INLINE f32x4 exp_f32x4(f32x4 x) {
  const f32x4 zero = {};
  x = x == x ? x : zero;
  x = x < -87.0f ? zero - 87.0f : x;
  x = x > 88.0f ? zero + 88.0f : x;
  const f32x4 n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  f32x4 r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  f32x4 p = zero + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const i32x4 bits = (__builtin_convertvector(n, i32x4) + 127) << 23;
  return p * (f32x4)bits;  // same size: GCC reinterprets the bits
}

// x / (1 + exp(-t)) lane by lane, GELU's and SiLU's form; 0 where x < -88, where both round to
// zero in f32 and -inf would give NaN. NaN stays NaN, +inf stays +inf.
BSRMM_CPU_INLINE f32x4 gate_f32x4(f32x4 x, f32x4 t) {
  const f32x4 zero = {};
  const f32x4 numerator = x < -88.0f ? zero : x;
  return numerator / (1.0f + exp_f32x4(zero - t));
}

BSRMM_CPU_INLINE f32x4 activate_f32x4(f32x4 x, bsrmm_activation activation) {
  if (activation == BSRMM_ACTIVATION_GELU) {
    return gate_f32x4(x, float(gelu_scale) * (x + float(gelu_cubic) * x * x * x));
  }
  return gate_f32x4(x, x);  // SiLU
}

// `values[0 .. count)` through GELU or SiLU (activation is one of them) in place, four at a time.
BSRMM_CPU_INLINE void activate_run(float* values, int64_t count, bsrmm_activation activation) {
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    f32x4 x;
    std::memcpy(&x, values + i, sizeof x);
    x = activate_f32x4(x, activation);
    std::memcpy(values + i, &x, sizeof x);
  }
  if (i < count) {
    f32x4 x = {};
    std::memcpy(&x, values + i, sizeof(float) * static_cast<std::size_t>(count - i));
    x = activate_f32x4(x, activation);
    std::memcpy(values + i, &x, sizeof(float) * static_cast<std::size_t>(count - i));
  }
}

// Whether a tile store of compute type T into C elements S takes store_activated (f32 in and
// out, GELU or SiLU); everything else goes element by element through activate().
template <typename T, typename S>
constexpr bool stores_activated() {
  return std::is_same_v<T, float> && std::is_same_v<S, float>;
}

inline bool smooth_activation(bsrmm_activation activation) {
  return activation == BSRMM_ACTIVATION_GELU || activation == BSRMM_ACTIVATION_SILU;
}

// A tile store whose activation runs in vector loops: row m's values (value(m, j): alpha * acc,
// beta * C, the bias) staged 256 at a time, activated, then written to c[at(m, j)] (any layout).
template <typename Value, typename At>
BSRMM_CPU_INLINE void store_activated(float* c, int rows, int64_t count, const Value& value,
                                           const At& at, bsrmm_activation activation) {
  constexpr int64_t run = 256;
  float staged[run];
  for (int m = 0; m < rows; ++m) {
    for (int64_t j0 = 0; j0 < count; j0 += run) {
      const int64_t n = count - j0 < run ? count - j0 : run;
      for (int64_t j = 0; j < n; ++j) staged[j] = value(m, j0 + j);
      activate_run(staged, n, activation);
      for (int64_t j = 0; j < n; ++j) c[at(m, j0 + j)] = staged[j];
    }
  }
}

}  // namespace bsrmm::cpu
