// The sm80 variants, one list per math, each compiled in its own translation unit so the
// build spreads over cores. sm80_variants() (sm80_variants.cu) concatenates them.
#pragma once

#include "../variant.hpp"

#include <vector>

namespace bsrmm::cuda::sm80 {

std::vector<Variant> f16_variants();
std::vector<Variant> bf16_variants();
std::vector<Variant> tf32_variants();
std::vector<Variant> f32x3_variants();
std::vector<Variant> f64_variants();

}  // namespace bsrmm::cuda::sm80
