// Tile configs for f32 operands on tf32 tensor cores (tf32: one product; tf32x3: the exact
// split). Smaller warp tiles than 16-bit: fragments are twice as wide, and the split keeps a
// big and a small copy of each.
#pragma once

#include "tensorop_variant.cuh"

#include <vector>

namespace bsrmm::cuda::sm80 {

template <Math math>
std::vector<Variant> configs_f32() {
  //                                  BM   BN   KC  warps  stages  B col-major
  return {
      tensorop_variant<TileConfig<math, 128, 128, 16, 2, 4, 4, false>>(),
      tensorop_variant<TileConfig<math, 64, 128, 16, 2, 2, 4, false>>(),
      tensorop_variant<TileConfig<math, 32, 128, 16, 1, 4, 4, false>>(),
      tensorop_variant<TileConfig<math, 16, 128, 16, 1, 4, 4, false>>(),
      tensorop_variant<TileConfig<math, 128, 128, 16, 2, 4, 4, true>>(),
      tensorop_variant<TileConfig<math, 64, 128, 16, 2, 2, 4, true>>(),
      tensorop_variant<TileConfig<math, 32, 128, 16, 1, 4, 4, true>>(),
      tensorop_variant<TileConfig<math, 16, 128, 16, 1, 4, 4, true>>(),
  };
}

}  // namespace bsrmm::cuda::sm80
