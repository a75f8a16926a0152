#include "partition.hpp"

#include <algorithm>

namespace bsrmm::cpu {

std::vector<RowRange> split_rows(const int64_t* work_prefix, int64_t row_count, int64_t parts) {
  std::vector<RowRange> ranges;
  if (row_count <= 0) return ranges;
  parts = std::max<int64_t>(1, std::min(parts, row_count));
  const int64_t total = work_prefix ? work_prefix[row_count] : row_count;
  int64_t begin = 0;
  for (int64_t p = 1; p <= parts && begin < row_count; ++p) {
    int64_t end = row_count;
    if (p < parts) {
      // The first row whose prefix reaches this part's share of the total work. total * p
      // stays far below 2^63: work is at most ~2^40 (int32 blocks x 256 columns) and parts a
      // few thousand.
      const int64_t target = total * p / parts;
      if (work_prefix) {
        end = std::lower_bound(work_prefix + begin + 1, work_prefix + row_count + 1, target) -
              work_prefix;
      } else {
        end = target;
      }
      end = std::min(std::max(end, begin + 1), row_count);
    }
    ranges.push_back(RowRange{begin, end});
    begin = end;
  }
  return ranges;
}

}  // namespace bsrmm::cpu
