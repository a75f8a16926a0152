// The registry of kernel variants compiled into this build, in a fixed order for
// bsrmm_variant_name: the matmul variants (CPU, then CUDA when built with it), then the SDDMM
// variants (CPU, then CUDA), so adding the SDDMM ones left the matmul indices where they were.
// Each name carries its operation, so a forced name can be checked against the call it reaches.
#pragma once

#include <bsrmm/bsrmm.h>

#include <string>
#include <vector>

namespace bsrmm::api {

struct VariantEntry {
  std::string name;
  bsrmm_variant_kind kind;
  bool cpu;  // a CPU variant (else CUDA)
};

const std::vector<VariantEntry>& variants();
// The entry named `name`, or nullptr when the build has none.
const VariantEntry* find_variant(const std::string& name);
// "matmul" / "SDDMM", for messages.
const char* kind_name(bsrmm_variant_kind kind);
// Fails INVALID_ARGUMENT when the context's forced variant `forced` (non-empty) is of another
// operation than `call` (the entry point, "bsrmm_matmul" or "bsrmm_sddmm") runs.
void check_forced_kind(const std::string& forced, bsrmm_variant_kind wanted, const char* call);

}  // namespace bsrmm::api
