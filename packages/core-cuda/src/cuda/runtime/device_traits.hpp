// What the kernel families need to know about a device, read once per ordinal.
#pragma once

#include "../variant.hpp"

#include <cstdint>

namespace bsrmm::cuda {

// Cached after the first call for each ordinal; safe to call from several threads.
const DeviceTraits& device_traits(int ordinal);

// `device` as the kernels of a call under an SM budget (bsrmm_context_set_sm_budget) see it: its
// sm_count lowered to `sm_budget` when that is positive and smaller. Every persistent grid is
// sized from sm_count, so this one place caps them all.
DeviceTraits within_sm_budget(const DeviceTraits& device, int32_t sm_budget);

}  // namespace bsrmm::cuda
