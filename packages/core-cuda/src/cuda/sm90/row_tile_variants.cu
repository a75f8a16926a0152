// The sm90 row-tile variants of f16 / bf16 (blocks 64 or 128 high, 32 to 128 wide;
// row_tile_variant.cuh, row_tile_kernel.cuh).
#include "row_tile_variant.cuh"
#include "variant_lists.hpp"

namespace bsrmm::cuda::sm90 {

template <typename T>
void append_row_tile_variants(std::vector<Variant>& list) {
  list.push_back(make_variant<RowTile<T, Block<128>, NTile<256>>>());
  list.push_back(make_variant<RowTile<T, Block<64>, NTile<256>>>());
  // 128 wide, preferred for N < 256 (decoding, attention heads): no wgmma work on columns past
  // N, and twice the ring stages (docs/perf-log.md entry 23).
  list.push_back(make_variant<RowTile<T, Block<128>, NTile<128>>>());
  list.push_back(make_variant<RowTile<T, Block<64>, NTile<128>>>());
  // Column-major C (Fortran-order outputs, transposed views): the sm80 kernels ran it at
  // 0.66-0.86x the best peer (docs/perf-log.md entry 25).
  list.push_back(make_variant<RowTile<T, Block<128>, NTile<256>, CColMajor>>());
  list.push_back(make_variant<RowTile<T, Block<64>, NTile<256>, CColMajor>>());
  // Column-major B, with either C (entry 26).
  list.push_back(make_variant<RowTile<T, Block<128>, NTile<256>, BColMajor>>());
  list.push_back(make_variant<RowTile<T, Block<64>, NTile<256>, BColMajor>>());
  list.push_back(make_variant<RowTile<T, Block<128>, NTile<256>, CColMajor, BColMajor>>());
  list.push_back(make_variant<RowTile<T, Block<64>, NTile<256>, CColMajor, BColMajor>>());
  // And 128 wide, for torch's layout (B = x^T, C = y^T) at N < 256: decode-size N ran on the
  // 256-wide tile only, 35 us where row-major B's 128-wide tile takes 20-22 (perf-log 93).
  list.push_back(make_variant<RowTile<T, Block<128>, NTile<128>, BColMajor>>());
  list.push_back(make_variant<RowTile<T, Block<64>, NTile<128>, BColMajor>>());
  list.push_back(make_variant<RowTile<T, Block<128>, NTile<128>, CColMajor, BColMajor>>());
  list.push_back(make_variant<RowTile<T, Block<64>, NTile<128>, CColMajor, BColMajor>>());
  // Block 128 only: a pair sharing A ran 3-7% faster at d >= 0.125 on the H100 grid; at block
  // 64 (A a fifth of the traffic) it measured level, so it is not offered (docs/perf-log.md).
  list.push_back(make_variant<RowTile<T, Block<128>, NTile<256>, Cluster<2>>>());
  // Non-square blocks with row-major B and C (the sm80 kernels ran 64 x 32 at 0.93x and
  // 128 x 64 at 1.10x torch's Triton kernel, docs/perf-log.md entry 30).
  list.push_back(make_variant<RowTile<T, Block<128, 64>, NTile<256>>>());
  list.push_back(make_variant<RowTile<T, Block<128, 64>, NTile<128>>>());
  list.push_back(make_variant<RowTile<T, Block<128, 32>, NTile<256>>>());
  list.push_back(make_variant<RowTile<T, Block<128, 32>, NTile<128>>>());
  list.push_back(make_variant<RowTile<T, Block<64, 128>, NTile<256>>>());
  list.push_back(make_variant<RowTile<T, Block<64, 128>, NTile<128>>>());
  list.push_back(make_variant<RowTile<T, Block<64, 32>, NTile<256>>>());
  list.push_back(make_variant<RowTile<T, Block<64, 32>, NTile<128>>>());
  // Blocks 64 high with ping-pong consumers (row_tile_kernel.cuh).
  list.push_back(make_variant<RowTile<T, Block<64>, NTile<256>, PingPong>>());
  list.push_back(make_variant<RowTile<T, Block<64, 128>, NTile<256>, PingPong>>());
  list.push_back(make_variant<RowTile<T, Block<64, 32>, NTile<256>, PingPong>>());
  // Blocks 64 high, N tiles 512 wide (32-deep stages; row_tile_kernel.cuh).
  list.push_back(make_variant<RowTile<T, Block<64>, NTile<512>>>());
  list.push_back(make_variant<RowTile<T, Block<64, 128>, NTile<512>>>());
  list.push_back(make_variant<RowTile<T, Block<64, 32>, NTile<512>>>());
}

template void append_row_tile_variants<__half>(std::vector<Variant>&);
template void append_row_tile_variants<__nv_bfloat16>(std::vector<Variant>&);

}  // namespace bsrmm::cuda::sm90
