#include "configs_f64.cuh"
#include "variant_lists.hpp"

namespace bsrmm::cuda::sm80 {

std::vector<Variant> f64_variants() { return configs_f64(); }

}  // namespace bsrmm::cuda::sm80
