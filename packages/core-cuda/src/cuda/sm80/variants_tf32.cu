#include "configs_f32.cuh"
#include "variant_lists.hpp"

namespace bsrmm::cuda::sm80 {

std::vector<Variant> tf32_variants() { return configs_f32<Math::tf32>(); }

}  // namespace bsrmm::cuda::sm80
