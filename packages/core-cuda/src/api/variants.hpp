// The registry of kernel variants compiled into this build: the CPU ones, then the CUDA ones
// (when built with CUDA), in a fixed order for bsrmm_variant_name.
#pragma once

#include <string>
#include <vector>

namespace bsrmm::api {

const std::vector<std::string>& variant_names();
bool is_variant(const std::string& name);
bool is_cpu_variant(const std::string& name);

}  // namespace bsrmm::api
