// The untuned order among the sm80 tiles, from the arguments alone (no GPU): taller tiles first,
// except one over 32 rows that leaves SMs without a CTA at small N, which goes under the m32
// tile but stays over the m16 one (docs/perf-log.md entry 100: H100, 8192^2 blocks of 64).
#include "cuda/sm80/heuristic.hpp"

#include <gtest/gtest.h>

namespace bsrmm::test {
namespace {

using cuda::sm80::TileShape;

// The 16-bit tiles' shapes as their configs give them (stages x (A + B slices) x 2 bytes).
const TileShape kM64{64, 128, 128, 4 * (64 * 32 + 32 * 128) * 2, 64};
const TileShape kM32{32, 128, 128, 4 * (32 * 32 + 32 * 128) * 2, 32};
const TileShape kM16{16, 128, 128, 4 * (16 * 16 + 16 * 128) * 2, 16};
const cuda::DeviceTraits kH100{9, 0, 132, 227 * 1024};

cuda::MatmulArgs problem(int64_t block_rows, int64_t n) {
  cuda::MatmulArgs args;
  args.a.block_row_count = block_rows;
  args.a.block_col_count = block_rows;
  args.a.block_height = args.a.block_width = 64;
  args.a.dtype = BSRMM_DTYPE_BF16;
  args.c.rows = block_rows * 64;
  args.c.cols = n;
  args.c.dtype = BSRMM_DTYPE_BF16;
  return args;
}

int score(const TileShape& shape, const cuda::MatmulArgs& args) { return cuda::sm80::preference(shape, args, kH100); }

TEST(Sm80Preference, ShorterTileWhereTheTallOneLeavesSmsIdle) {
  // 128 block rows and one N tile: m64 makes 128 CTAs for 132 SMs, m32 256.
  for (const int64_t n : {9, 33, 100}) {
    const cuda::MatmulArgs args = problem(128, n);
    EXPECT_GT(score(kM32, args), score(kM64, args)) << "N " << n;
    EXPECT_GT(score(kM64, args), score(kM16, args)) << "N " << n;
  }
  // Three N tiles (384 CTAs at m64) or more rows: the taller tile again.
  EXPECT_GT(score(kM64, problem(128, 257)), score(kM32, problem(128, 257)));
  EXPECT_GT(score(kM64, problem(512, 33)), score(kM32, problem(512, 33)));
  // Every tile short of the SMs (16 block rows): the order stays the tallest first.
  EXPECT_GT(score(kM32, problem(16, 9)), score(kM16, problem(16, 9)));
}

}  // namespace
}  // namespace bsrmm::test
