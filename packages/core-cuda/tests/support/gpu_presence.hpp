// Whether a CUDA device is usable, asked through the C ABI (so CPU-only builds can ask too), and
// the skip every GPU test starts with: GTEST_SKIP with bsrmm's own reason.
#pragma once

#include <bsrmm/bsrmm.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace bsrmm::test {

// True when bsrmm sees at least one CUDA device; otherwise `why` (if given) gets the reason.
inline bool gpu_available(std::string* why = nullptr) {
  int32_t count = 0;
  if (bsrmm_cuda_device_count(&count) == BSRMM_STATUS_SUCCESS && count > 0) return true;
  if (why != nullptr) *why = std::string("no usable CUDA device: ") + bsrmm_last_error();
  return false;
}

inline int gpu_count() {
  int32_t count = 0;
  return bsrmm_cuda_device_count(&count) == BSRMM_STATUS_SUCCESS ? count : 0;
}

#define BSRMM_REQUIRE_GPU()                                                         \
  do {                                                                              \
    std::string bsrmm_why;                                                          \
    if (!::bsrmm::test::gpu_available(&bsrmm_why)) GTEST_SKIP() << bsrmm_why;       \
  } while (0)

}  // namespace bsrmm::test
