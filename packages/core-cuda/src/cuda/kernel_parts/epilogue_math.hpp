// The epilogue's arithmetic, in one place for every CUDA kernel family:
//   out = activation(alpha * acc + beta * c_old + bias)
// bias is added after the scaled product and the scaled old C, before the activation
// (bsrmm.h). The formulas are the CPU path's (src/cpu/epilogue.hpp), special cases included;
// this header is plain C++ outside nvcc, so both could share it.
#pragma once

#include <bsrmm/bsrmm.h>

#include <cmath>

#if defined(__CUDACC__)
#define BSRMM_HOST_DEVICE __host__ __device__
#else
#define BSRMM_HOST_DEVICE
#endif

namespace bsrmm::epilogue {

// Acc is float for f32/f16/bf16 and double for f64. Every form lets NaN through (IEEE): relu
// compares with `<` so a NaN input is returned as it is.
template <typename Acc>
BSRMM_HOST_DEVICE inline Acc activate(Acc x, bsrmm_activation activation) {
  // GELU and SiLU tend to x at +inf and to 0 at -inf; their formulas would give inf * 0 = NaN.
  const bool smooth = activation == BSRMM_ACTIVATION_GELU || activation == BSRMM_ACTIVATION_SILU;
  if (smooth && std::isinf(x)) return x > Acc(0) ? x : Acc(0);
  switch (activation) {
    case BSRMM_ACTIVATION_RELU:
      return x < Acc(0) ? Acc(0) : x;
    case BSRMM_ACTIVATION_GELU: {
      // tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      const Acc sqrt_2_over_pi = Acc(0.7978845608028654);
      return Acc(0.5) * x * (Acc(1) + std::tanh(sqrt_2_over_pi * (x + Acc(0.044715) * x * x * x)));
    }
    case BSRMM_ACTIVATION_SILU:
      // exp(-x) overflows to inf for very negative x, giving -0 as the limit does.
      return x / (Acc(1) + std::exp(-x));
    default:
      return x;
  }
}

// beta == 0 callers pass c_old = 0 without reading C (C may hold NaN: it is only written).
template <typename Acc>
BSRMM_HOST_DEVICE inline Acc finish(Acc acc, Acc alpha, Acc beta, Acc c_old, Acc bias,
                                    bsrmm_activation activation) {
  Acc value = alpha * acc;
  if (beta != Acc(0)) value += beta * c_old;
  return activate(value + bias, activation);
}

}  // namespace bsrmm::epilogue
