#include "configs_16bit.cuh"
#include "variant_lists.hpp"

namespace bsrmm::cuda::sm80 {

std::vector<Variant> f16_variants() { return configs_16bit<Math::f16>(); }

}  // namespace bsrmm::cuda::sm80
