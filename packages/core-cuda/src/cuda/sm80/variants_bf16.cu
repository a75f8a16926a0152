#include "configs_16bit.cuh"
#include "variant_lists.hpp"

namespace bsrmm::cuda::sm80 {

std::vector<Variant> bf16_variants() { return configs_16bit<Math::bf16>(); }

}  // namespace bsrmm::cuda::sm80
