#include "configs_f32.cuh"
#include "variant_lists.hpp"

namespace bsrmm::cuda::sm80 {

std::vector<Variant> f32x3_variants() { return configs_f32<Math::tf32x3>(); }

}  // namespace bsrmm::cuda::sm80
