#include "cpu_backend.hpp"

namespace bsrmm::cpu {

std::vector<std::string> variant_names() { return {reference_variant, blocked_variant, dense_variant}; }

}  // namespace bsrmm::cpu
