#include "variants.hpp"

#include "../cpu/cpu_backend.hpp"

#include <algorithm>

#if BSRMM_WITH_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace bsrmm::api {

const std::vector<std::string>& variant_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = cpu::variant_names();
#if BSRMM_WITH_CUDA
    for (std::string& name : cuda::variant_names()) all.push_back(std::move(name));
#endif
    return all;
  }();
  return names;
}

bool is_variant(const std::string& name) {
  const std::vector<std::string>& names = variant_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool is_cpu_variant(const std::string& name) {
  const std::vector<std::string> names = cpu::variant_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace bsrmm::api
