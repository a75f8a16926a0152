// The sm90 variant lists of each kernel family, per element type (f16 / bf16), defined in
// row_tile_variants.cu and transposed_variants.cu; sm90_variants.cu concatenates them.
#pragma once

#include "../variant.hpp"

#include <vector>

namespace bsrmm::cuda::sm90 {

template <typename T>
void append_row_tile_variants(std::vector<Variant>& list);
template <typename T>
void append_transposed_variants(std::vector<Variant>& list);
// fp8 A and B (row tiles only; fp8_row_tile_variants.cu): every pairing it builds, C bf16 / f16.
void append_fp8_row_tile_variants(std::vector<Variant>& list);

}  // namespace bsrmm::cuda::sm90
