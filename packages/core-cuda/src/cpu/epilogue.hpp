// The epilogue shared by both CPU variants, per element of C:
//   out = alpha * acc (+ beta * C when beta != 0) (+ bias[row]), then the activation.
// beta == 0 never reads C, so NaN or garbage in C does not reach the output (BLAS semantics).
#pragma once

#include <bsrmm/bsrmm.h>

#include <cmath>

namespace bsrmm::cpu {

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
      const T k = T(0.7978845608028654);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
    }
    case BSRMM_ACTIVATION_SILU:
      return x / (T(1) + std::exp(-x));
    case BSRMM_ACTIVATION_NONE:
      break;
  }
  return x;
}

}  // namespace bsrmm::cpu
