// A kernel's opt-in to more than 48 KB of dynamic shared memory is per kernel and per device,
// and setting it again costs a driver call per launch (~1 us of host time, which a caller that
// synchronises every multiply pays with the GPU idle). So it is set once per (kernel, device).
#pragma once

namespace bsrmm::cuda {

// Sets `kernel`'s dynamic shared memory limit to `bytes` on `device` (which must be current),
// the first time it is asked for that pair; later calls only look it up.
void allow_dynamic_smem(const void* kernel, int bytes, int device);

template <typename Kernel>
void allow_dynamic_smem(Kernel* kernel, int bytes, int device) {
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), bytes, device);
}

}  // namespace bsrmm::cuda
