// What the kernel families need to know about a device, read once per ordinal.
#pragma once

#include "../variant.hpp"

namespace bsrmm::cuda {

// Cached after the first call for each ordinal; safe to call from several threads.
const DeviceTraits& device_traits(int ordinal);

}  // namespace bsrmm::cuda
