// Runs an epilogue body with the activation and "beta != 0" as compile-time constants.
// Why: with the activation chosen per element at run time, every one of a thread's 64..128
// outputs carried the code of every activation (tanh, exp); the unrolled epilogue outgrew the
// instruction cache and cost ~45 us per 128x256 tile on an H100. One branch per tile instead.
#pragma once

#include <bsrmm/bsrmm.h>

#include <type_traits>

namespace bsrmm::cuda::sm90 {

template <bsrmm_activation A>
using ActivationConstant = std::integral_constant<bsrmm_activation, A>;

// `accumulate` is std::true_type or std::false_type: a named constant, not a positional bool.
template <typename Accumulate, typename Body>
__device__ __forceinline__ void with_activation(bsrmm_activation activation, Accumulate accumulate, Body& body) {
  switch (activation) {
    case BSRMM_ACTIVATION_RELU: body(ActivationConstant<BSRMM_ACTIVATION_RELU>{}, accumulate); break;
    case BSRMM_ACTIVATION_GELU: body(ActivationConstant<BSRMM_ACTIVATION_GELU>{}, accumulate); break;
    case BSRMM_ACTIVATION_SILU: body(ActivationConstant<BSRMM_ACTIVATION_SILU>{}, accumulate); break;
    default: body(ActivationConstant<BSRMM_ACTIVATION_NONE>{}, accumulate); break;
  }
}

// body(activation_constant, accumulate_constant): accumulate is beta != 0 (C is read).
template <typename Body>
__device__ __forceinline__ void with_epilogue_constants(bsrmm_activation activation, float beta,
                                                        Body&& body) {
  if (beta != 0.0f)
    with_activation(activation, std::true_type{}, body);
  else
    with_activation(activation, std::false_type{}, body);
}

}  // namespace bsrmm::cuda::sm90
