#include "variant_lists.hpp"

namespace bsrmm::cuda {

std::vector<Variant> sm80_variants() {
  std::vector<Variant> all;
  for (auto list : {&sm80::f16_variants, &sm80::bf16_variants, &sm80::tf32_variants,
                    &sm80::f32x3_variants, &sm80::f64_variants}) {
    std::vector<Variant> part = list();
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

}  // namespace bsrmm::cuda
