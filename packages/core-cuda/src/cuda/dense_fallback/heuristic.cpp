#include "heuristic.hpp"

#include <algorithm>
#include <cmath>

namespace bsrmm::cuda::dense_fallback {
namespace {

struct Point {
  double log2_block;  // log2 of sqrt(block area)
  double density;
};

// Fitted from the H100 grid (M = K = 8192, N = 4096, f16, 2026-11-22): dense cuBLAS took
// 0.71 ms (774 TFLOPS), so the dense product wins where a sparse kernel's effective rate is
// below 774 * density. Crossings, interpolated between the measured densities
// 0.05 / 0.125 / 0.25 / 0.5 (docs/perf-log.md):
//  - sm90 (bench grid, packages/bench/results/h100-sxm-2026-11-22-grid.json): b64
//    341/396/394/421 TFLOPS -> 0.55 (421 vs 387 at 0.5); b128 395/560/626/637, flat near 650
//    -> 0.84. Blocks 16 and 32 since the wider transposed tiles (perf-log entry 27; dense took
//    0.69 ms there, 797 * density): b16 115/136/175/268 -> 0.20; b32 193/230/277/390 -> 0.45.
//  - sm80 (perf-log "v0.1 sm80 path"): b16 63/71/75/78 -> 0.09; b32 107/126/136/142 -> 0.17;
//    b64 159/211/237/248 -> 0.31; b128 195/275/303/323 -> 0.41.
//  - generic: not measured; the sm80 values (the generic kernel is slower still, so this
//    errs towards the sparse kernel).
constexpr Point kSm90[] = {{4, 0.20}, {5, 0.45}, {6, 0.55}, {7, 0.84}};
constexpr Point kSm80[] = {{4, 0.09}, {5, 0.17}, {6, 0.31}, {7, 0.41}};

template <std::size_t Count>
double interpolate(const Point (&table)[Count], double log2_block) {
  if (log2_block <= table[0].log2_block) return table[0].density;
  for (std::size_t i = 1; i < Count; ++i) {
    if (log2_block <= table[i].log2_block) {
      const Point& lo = table[i - 1];
      const Point& hi = table[i];
      const double t = (log2_block - lo.log2_block) / (hi.log2_block - lo.log2_block);
      return lo.density + t * (hi.density - lo.density);
    }
  }
  return table[Count - 1].density;
}

// Tiny blocks (tiny_block_break_even), from the H100's coverage suite (2026-11-26, session 19,
// docs/perf-log.md entry 71): the narrow kernels' effective rate at N >= 256 was 2.9-5.7
// TFLOPS (tf32 8 x 8 power-law d 0.031 N 1024: 0.187 ms, dense tf32 0.112); dense GEMM rates
// and the HBM bandwidth are the H100's.
constexpr double kTinySparseTflops = 5.0;
constexpr double kHbmTBps = 3.35;

double dense_tflops(bsrmm_dtype dtype, bool tf32) {
  switch (dtype) {
    case BSRMM_DTYPE_F16:
    case BSRMM_DTYPE_BF16: return 700.0;
    case BSRMM_DTYPE_F32: return tf32 ? 350.0 : 50.0;
    default: return 55.0;  // f64 on the DMMA tensor cores
  }
}

}  // namespace

double tiny_block_break_even(bsrmm_dtype dtype, bool tf32, int64_t n) {
  const double element = dtype == BSRMM_DTYPE_F64 ? 8.0 : dtype == BSRMM_DTYPE_F32 ? 4.0 : 2.0;
  const double compute_bound = kTinySparseTflops / dense_tflops(dtype, tf32);
  const double memory_bound = kTinySparseTflops * element / (2.0 * double(std::max<int64_t>(n, 1)) * kHbmTBps);
  return std::max(compute_bound, memory_bound);
}

Placement tiny_block_placement(double density, bsrmm_dtype dtype, bool tf32, int64_t n, bool skewed,
                               int64_t block_area) {
  const double even = tiny_block_break_even(dtype, tf32, n);
  const double first_from = skewed || block_area <= 4 ? 2.0 : block_area <= 16 ? 4.0 : 0.0;
  if (first_from > 0.0 && density >= first_from * even) return Placement::first;
  return density >= 0.5 * even ? Placement::last : Placement::skip;
}

double break_even_density(int32_t block_height, int32_t block_width, SparseFamily family) {
  // The sm90 transposed tiles run a block 16 or 32 high and a multiple of that wide as square
  // parts of its height, at the square block's rate. The row tiles run a block 64 or 128 high
  // and 32 to 128 wide near the square block of its height (each B byte feeds the block's
  // height in rows, whatever its width): 64 x 32 and 64 x 128 cross dense at d ~0.55 as block
  // 64 does, 128 x 64 at ~0.82 (docs/perf-log.md entry 33).
  const bool square_parts = family == SparseFamily::sm90 && block_height <= 32 && block_height > 0 &&
                            block_width % block_height == 0;
  const bool row_tiles = family == SparseFamily::sm90 && (block_height == 64 || block_height == 128) &&
                         (block_width == 32 || block_width == 64 || block_width == 128);
  const double area = square_parts || row_tiles ? double(block_height) * double(block_height)
                                                : std::max(1.0, double(block_height) * double(block_width));
  const double log2_block = 0.5 * std::log2(area);
  return family == SparseFamily::sm90 ? interpolate(kSm90, log2_block)
                                      : interpolate(kSm80, log2_block);
}

Placement placement(double density, bsrmm_dtype dtype, int32_t block_height, int32_t block_width,
                    SparseFamily family) {
  const double even = break_even_density(block_height, block_width, family);
  const bool measured = dtype == BSRMM_DTYPE_F16 || dtype == BSRMM_DTYPE_BF16;
  if (measured && density >= even) return Placement::first;
  if (density >= 0.5 * even) return Placement::last;
  return Placement::skip;
}

}  // namespace bsrmm::cuda::dense_fallback
