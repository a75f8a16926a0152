// Tile configs for f16 and bf16 (same shapes; the math differs only in the mma instruction).
// Row-major B, the common case, gets the full set; column-major B one config per tile height.
// Warp tiles of 64x64 (128 accumulators) where the CTA is tall enough: the most mma per
// fragment load that fits the register file without spilling. Among configs the heuristic
// scores equal, the first listed wins: on an H100 (packages/bench/experiments/grid_timing.cpp,
// fp16 8192^2 x 4096) m128n128k64 (two CTAs per SM, half the barriers of k32) led at block 128
// for densities 0.05-0.25 (197-303 TFLOPS; m128n256k64 won only at 0.5, 329 vs 324), and
// m64n256 beat m64n128 by 10-20% at block 64. Both sit near the L2 -> SM bandwidth (~16-19 KB moved per
// MFLOP at ~5 TB/s): larger tiles are what can go faster. The tuner measures them all.
#pragma once

#include "tensorop_variant.cuh"

#include <vector>

namespace bsrmm::cuda::sm80 {

template <Math math>
std::vector<Variant> configs_16bit() {
  //                                  BM   BN   KC  warps  stages  B col-major
  return {
      tensorop_variant<TileConfig<math, 128, 128, 64, 2, 2, 3, false>>(),
      tensorop_variant<TileConfig<math, 128, 256, 64, 2, 4, 3, false>>(),
      tensorop_variant<TileConfig<math, 128, 128, 32, 2, 2, 4, false>>(),
      tensorop_variant<TileConfig<math, 128, 256, 32, 2, 4, 4, false>>(),
      tensorop_variant<TileConfig<math, 64, 256, 32, 1, 4, 4, false>>(),
      tensorop_variant<TileConfig<math, 64, 128, 32, 2, 2, 4, false>>(),
      tensorop_variant<TileConfig<math, 32, 256, 32, 1, 4, 4, false>>(),
      tensorop_variant<TileConfig<math, 16, 256, 16, 1, 4, 4, false>>(),
      tensorop_variant<TileConfig<math, 16, 64, 16, 1, 4, 4, false>>(),
      tensorop_variant<TileConfig<math, 128, 128, 32, 2, 2, 4, true>>(),
      tensorop_variant<TileConfig<math, 64, 128, 32, 2, 2, 4, true>>(),
      tensorop_variant<TileConfig<math, 32, 128, 32, 1, 4, 4, true>>(),
      tensorop_variant<TileConfig<math, 16, 128, 16, 1, 4, 4, true>>(),
  };
}

}  // namespace bsrmm::cuda::sm80
