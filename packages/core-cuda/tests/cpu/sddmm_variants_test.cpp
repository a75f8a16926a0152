// The CPU SDDMM's two implementations called directly (src/cpu/sddmm.hpp): the f64-accumulating
// reference and the blocked kernel, each against the test's own float64 reference, so the
// oracle the GPU tests lean on is itself checked. Every dtype, odd and even block shapes.
#include "../../src/cpu/sddmm.hpp"
#include "../support/random.hpp"
#include "../support/sddmm_reference.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace bsrmm::test {
namespace {

cpu::SddmmArgs args_for(const HostBsr& pattern, HostDense& x, HostDense& y, HostDense& values,
                        const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& col_idx,
                        double alpha, double beta) {
  cpu::SddmmArgs args;
  args.pattern.block_row_count = static_cast<int64_t>(row_ptr.size()) - 1;
  args.pattern.block_col_count = pattern.cols / pattern.block_width;
  args.pattern.block_height = pattern.block_height;
  args.pattern.block_width = pattern.block_width;
  args.pattern.nnzb = pattern.nnzb();
  args.pattern.row_ptr = row_ptr.data();
  args.pattern.col_idx = col_idx.data();
  args.pattern.dtype = pattern.dtype;
  args.x = x.desc();
  args.y = y.desc();
  args.values = values.desc();
  args.alpha = alpha;
  args.beta = beta;
  return args;
}

TEST(SddmmVariants, BothMatchTheTestReference) {
  const bsrmm_dtype dtypes[] = {BSRMM_DTYPE_F32, BSRMM_DTYPE_F16, BSRMM_DTYPE_BF16, BSRMM_DTYPE_F64};
  const std::pair<int32_t, int32_t> shapes[] = {{1, 1}, {3, 5}, {8, 8}, {16, 4}};
  detail::ThreadPool pool(3);
  detail::Buffer workspace;
  uint64_t seed = 900;
  for (bsrmm_dtype dtype : dtypes) {
    for (auto [bh, bw] : shapes) {
      Random rng(seed++);
      const HostBsr pattern = random_bsr(rng, 40 / bh + 1, 40 / bw + 1, bh, bw, 0.4, dtype);
      const std::vector<int32_t> row_ptr(pattern.row_ptr.begin(), pattern.row_ptr.end());
      const std::vector<int32_t> col_idx(pattern.col_idx.begin(), pattern.col_idx.end());
      HostDense x(pattern.rows, 70, dtype, BSRMM_LAYOUT_COL_MAJOR, 2);
      HostDense y(70, pattern.cols, dtype, BSRMM_LAYOUT_ROW_MAJOR, 1);
      fill_random(x, rng);
      fill_random(y, rng);
      HostDense start(pattern.nnzb(), pattern.block_elements(), dtype);
      fill_random(start, rng);
      const Expected expected = reference_sddmm(pattern, x, y, start, -0.5, 0.25);

      HostDense by_reference = start;
      cpu::sddmm_reference(args_for(pattern, x, y, by_reference, row_ptr, col_idx, -0.5, 0.25), pool);
      const std::string shape = std::to_string(bh) + "x" + std::to_string(bw) + " dtype " + std::to_string(dtype);
      expect_matches(by_reference, expected, "sddmm_reference " + shape);

      HostDense by_blocked = start;
      cpu::sddmm_blocked(args_for(pattern, x, y, by_blocked, row_ptr, col_idx, -0.5, 0.25), pool, workspace);
      expect_matches(by_blocked, expected, "sddmm_blocked " + shape);
    }
  }
}

}  // namespace
}  // namespace bsrmm::test
