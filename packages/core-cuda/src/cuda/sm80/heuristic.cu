#include "heuristic.hpp"

#include <algorithm>
#include <cmath>

namespace bsrmm::cuda::sm80 {

int preference(const TileShape& shape, const MatmulArgs& args, const DeviceTraits& device) {
  const double n = double(std::max<int64_t>(args.c.cols, 1));
  const double n_tiles = std::ceil(n / shape.bn);
  const double used = n / (n_tiles * shape.bn);
  const int64_t slices = args.a.block_height / shape.bm;
  const double ctas = double(args.a.block_row_count * slices) * n_tiles;

  // Taller tiles first: a CTA's B panel is reused by bm rows of A and every A slice by bn
  // columns, so the largest bm that divides the block height moves the fewest bytes per FLOP.
  // Except a tile over 32 rows that leaves SMs with no CTA at all: at small N each CTA's run is
  // the call, and on the H100 (8192^2, blocks of 64, N = 9..100) the m32 tiles' 256 CTAs ran
  // 1.07-1.2x faster than the m64 tiles' 128 (f32 and bf16, either B layout; perf-log 100).
  // Such a tile ranks between the m32 and the m16 tiles: m16 ran level with m64 in f32 and
  // 1.5x slower in bf16 there, so covering the SMs alone does not earn it the place.
  int tall = 10 * int(std::lround(std::log2(double(shape.bm) / 16.0)));
  if (shape.bm > 32 && ctas < double(device.sm_count)) tall = 5;

  // Then the N tile: little padding past N, and enough CTAs to fill the machine.
  const int by_smem = 228 * 1024 / (shape.smem_bytes + 1024);
  const int by_threads = 2048 / shape.threads;
  const int by_registers = 65536 / (shape.threads * (shape.accumulators + 64));
  const int per_sm = std::max(1, std::min({by_smem, by_threads, by_registers}));
  const double fill = std::min(1.0, ctas / (double(device.sm_count) * per_sm));
  // f64 pays for the padding in DMMA time (an n8 product at 1/16 of a 16-bit mma's rate), so
  // there the N fill weighs twice: from N = 16 the 64-wide tile wins where 128 pads past N.
  // Scored in tenths: rounded to whole points, N = 8 f64 on 64-row blocks tied the n64 and n128
  // tiles (registry order then took n128, 0.176 against 0.093 ms; docs/perf-log.md entry 79).
  const double padding_weight = args.c.dtype == BSRMM_DTYPE_F64 ? 12.0 : 6.0;
  const double wide = padding_weight * used + 3.0 * fill;

  return 1000 + 10 * tall + int(std::lround(10.0 * wide));
}

}  // namespace bsrmm::cuda::sm80
