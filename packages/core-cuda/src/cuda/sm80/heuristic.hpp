// The untuned default among sm80 tensor-op variants: which tile shape should run a problem.
// Host code; the tuner replaces this guess with measurements where it is allowed to.
#pragma once

#include "../variant.hpp"

namespace bsrmm::cuda::sm80 {

struct TileShape {
  int bm;           // rows of C per CTA
  int bn;           // columns of C per CTA
  int threads;
  int smem_bytes;
  int accumulators; // accumulator registers per thread (a proxy for register use)
};

// Larger is better. Only compared among variants that support the arguments.
int preference(const TileShape& shape, const MatmulArgs& args, const DeviceTraits& device);

}  // namespace bsrmm::cuda::sm80
