// The position in the shared-memory stage ring: producer and consumers walk the same sequence
// of stages, so each keeps its own copy and advances it once per stage.
#pragma once

#include "mbarrier.cuh"

#include <cstdint>

namespace bsrmm::cuda::sm90 {

template <int Stages>
struct RingPosition {
  int stage = 0;
  uint32_t phase = 0;  // parity of the barrier phase this lap waits for

  __device__ void advance() {
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1;
    }
  }
  // The producer's wait before refilling this stage: until the consumers have released it, that
  // is, the empty barrier's phase of the previous lap (on the first lap it passes at once).
  __device__ __forceinline__ void wait_released(uint64_t* empty) const {
    mbarrier_wait(&empty[stage], phase ^ 1);
  }
  // Past `count` stages that another consumer takes.
  __device__ void skip(int count) {
    const int at = stage + count;
    phase ^= uint32_t(at / Stages) & 1;
    stage = at % Stages;
  }
};

}  // namespace bsrmm::cuda::sm90
