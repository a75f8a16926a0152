// The sm90 fp8 row-tile variants (issue 27): A and B in e4m3 / e5m2 with fp32 scales, C in bf16
// or f16, B column-major (fp8 wgmma reads B K-major only), blocks 64 or 128 high and 64 or 128
// wide; one stage per block, whose product the consumers scale by its block's scale
// (row_tile_mainloop.cuh: run_scaled). Tiles as wide as the f16 ones and wider: a consumer's
// 64 x 256 (its sum, and a block's product 128 columns at a time) is 128 x 256 for blocks 128
// high and 64 x 512 for blocks 64 high, which halves the bytes per flop of the f16 tiles (the
// row tiles are bound by L2 -> SM traffic, docs/perf-log.md); narrower tiles for small N.
#include "row_tile_variant.cuh"
#include "variant_lists.hpp"

namespace bsrmm::cuda::sm90 {

template <typename TA, typename TB, typename TC>
void append_fp8_row_tile_variants(std::vector<Variant>& list) {
  using Ops = Fp8Operands<TA, TB, TC>;
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<128>, NTile<256>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<128>, NTile<128>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<64>, NTile<512>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<64>, NTile<256>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<64>, NTile<128>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<128, 64>, NTile<256>, BColMajor>>());
  list.push_back(make_variant<RowTile<Ops, Fp8Elements, Block<64, 128>, NTile<512>, BColMajor>>());
}

void append_fp8_row_tile_variants(std::vector<Variant>& list) {
  append_fp8_row_tile_variants<__nv_fp8_e4m3, __nv_fp8_e4m3, __nv_bfloat16>(list);
  append_fp8_row_tile_variants<__nv_fp8_e4m3, __nv_fp8_e5m2, __nv_bfloat16>(list);
  append_fp8_row_tile_variants<__nv_fp8_e4m3, __nv_fp8_e4m3, __half>(list);
}

}  // namespace bsrmm::cuda::sm90
