// The sm90 fp8 row-tile variants (issue 27): A and B in e4m3 / e5m2 with fp32 scales, C in bf16
// or f16, B column-major (fp8 wgmma reads B K-major only), blocks 64 or 128 high and 64 or 128
// wide; one stage per block, whose product the consumers scale by its block's scale
// (row_tile_mainloop.cuh: run_scaled). A consumer holds two sets of 64 x kConsumerN / 2
// accumulators, so its part of a tile is at most 128 columns wide: 128 x 128 tiles for blocks
// 128 high, 64 x 256 (or 64 x 128) for blocks 64 high.
#include "row_tile_variant.cuh"
#include "variant_lists.hpp"

namespace bsrmm::cuda::sm90 {

template <typename TA, typename TB, typename TC>
void append_fp8_row_tile_variants(std::vector<Variant>& list) {
  using Ops = Fp8Operands<TA, TB, TC>;
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<128>, NTile<128>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<64>, NTile<256>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<64>, NTile<128>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<128, 64>, NTile<128>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<64, 128>, NTile<256>, BColMajor>>());
}

void append_fp8_row_tile_variants(std::vector<Variant>& list) {
  append_fp8_row_tile_variants<__nv_fp8_e4m3, __nv_fp8_e4m3, __nv_bfloat16>(list);
  append_fp8_row_tile_variants<__nv_fp8_e4m3, __nv_fp8_e5m2, __nv_bfloat16>(list);
  append_fp8_row_tile_variants<__nv_fp8_e4m3, __nv_fp8_e4m3, __half>(list);
}

}  // namespace bsrmm::cuda::sm90
