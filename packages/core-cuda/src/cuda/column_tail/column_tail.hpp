// Where the sm90 split for N not a multiple of 8 (column_tail.cu) is offered and where the
// heuristic prefers it. Measured on an H100, 8192^2 blocks of 64 / 128 (docs/perf-log.md entry
// 93): against the sm80 kernels it lost at N = 65 and 263 (the r-column tail reads A again:
// 114 against 74 us at b64 d 0.25, N = 263) and won from N = 1031 on (174 against 202 us; 2.1x
// at 2049, 3.1x at 8191 with blocks of 128).
#pragma once

#include <cstdint>

namespace bsrmm::cuda::column_tail {

constexpr int64_t kMinColumns = 64;   // offered (the tuner times it) from here
constexpr int64_t kFirstFrom = 1024;  // the untuned pick over sm80 from here

}  // namespace bsrmm::cuda::column_tail
