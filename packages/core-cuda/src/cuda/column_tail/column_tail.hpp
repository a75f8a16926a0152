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

// Torch's layout (B = x^T and C = y^T, both column-major) with one column past a multiple of 8:
// that column is one contiguous vector of B and of C, and its multiply one read of A. There the
// split ran 1.2-1.8x faster than sm80 from N = 129 to 1001 on the H100 (perf-log 103: bf16 blocks
// of 64 at d 0.25, N = 513: 73 against 127 us; f16 blocks of 128 at d 0.125: 40 against 58),
// where a tail of 4-7 columns ran 1.3-2x slower than sm80, and at N = 65 it was level with sm80
// and behind the staged call. So the untuned pick from kOneColumnFrom on, for that case only.
constexpr int64_t kOneColumnFrom = 128;

constexpr bool first_for_one_column_of_torchs_layout(int64_t cols, bool b_col_major,
                                                     bool c_col_major) {
  return cols >= kOneColumnFrom && cols % 8 == 1 && b_col_major && c_col_major;
}

}  // namespace bsrmm::cuda::column_tail
