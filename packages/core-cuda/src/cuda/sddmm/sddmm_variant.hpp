// One named SDDMM kernel as the choice in sddmm_variants.cu sees it: whether it takes the
// arguments on this device, and its launch. The kernel families' files (sddmm_variants.cu for
// the SIMT and mma.sync kernels, sm90_variants.cu for the Hopper ones) each add theirs.
#pragma once

#include "../variant.hpp"
#include "sddmm_backend.hpp"

#include <string>
#include <vector>

namespace bsrmm::cuda {

struct SddmmVariant {
  std::string name;
  bool (*supports)(const SddmmArgs& args, const DeviceTraits& device);
  void (*launch)(const SddmmArgs& args);
};

// The Hopper (sm_90a) kernels, in order of preference (sm90_variants.cu).
void add_sm90_sddmm_variants(std::vector<SddmmVariant>& list);

}  // namespace bsrmm::cuda
