// Tile configs for f64 on the DMMA tensor cores (m8n8k4, f64 accumulators). Every warp tile is
// 32 x 32 (16 x 32 for the 16-row tiles): 32 f64 accumulators, 64 registers, and per k4 slice 16
// DMMAs against 8 fragment loads, so shared memory is not what limits. The limit is the L2 ->
// SM stream: every B element fetched feeds BM rows, 2*BM flops per 8 bytes, so the tallest tile
// that divides the block height goes first (heuristic.cu) and N tiles of 128 come before 64
// (A fetched once per 128 columns). 64 x 32 blocks take the m64 tiles (k chunk 16).
#pragma once

#include "tensorop_variant.cuh"

#include <vector>

namespace bsrmm::cuda::sm80 {

inline std::vector<Variant> configs_f64() {
  constexpr Math f64 = Math::f64;
  //                                  BM   BN   KC  warps  stages  B col-major
  return {
      tensorop_variant<TileConfig<f64, 64, 128, 16, 2, 4, 3, false>>(),
      tensorop_variant<TileConfig<f64, 64, 64, 16, 2, 2, 3, false>>(),
      tensorop_variant<TileConfig<f64, 32, 128, 16, 1, 4, 3, false>>(),
      tensorop_variant<TileConfig<f64, 32, 64, 16, 1, 2, 4, false>>(),
      tensorop_variant<TileConfig<f64, 16, 128, 16, 1, 4, 3, false>>(),
      tensorop_variant<TileConfig<f64, 16, 64, 16, 1, 2, 4, false>>(),
      tensorop_variant<TileConfig<f64, 64, 64, 16, 2, 2, 3, true>>(),
      tensorop_variant<TileConfig<f64, 32, 64, 16, 1, 2, 4, true>>(),
      tensorop_variant<TileConfig<f64, 16, 128, 16, 1, 4, 3, true>>(),
  };
}

}  // namespace bsrmm::cuda::sm80
