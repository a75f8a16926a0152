// The sm90 row-tile variants (blocks 64 or 128 high, 32 to 128 wide; row_tile_kernel.cuh): which
// arguments each one takes and how it is launched.
#include "row_tile_kernel.cuh"
#include "variant_lists.hpp"
#include "variant_support.cuh"

namespace bsrmm::cuda::sm90 {
namespace {

// ---- row tiles: blocks 64 and 128 high ----

// Cluster<2>: CTA pairs share A through TMA multicast (row_tile_kernel.cuh); a work item is a
// pair of N tiles, so the list and the grid count clusters. CColMajor / BColMajor: for a
// column-major C ("_ccol", tiles stored transposed) or B ("_bcol", read K-major). Square blocks
// are named by their size ("_b64"), others by height x width ("_b64x32").
template <typename T, typename Config>
struct RowTileVariant {
  static constexpr auto kernel = row_tile_kernel<T, Config>;

  static std::string name() {
    using C = Config;
    return std::string("sm90_tma_wgmma_") + dtype_name<T>() + "_b" + std::to_string(C::kBlockH) +
           (C::kBlockW != C::kBlockH ? "x" + std::to_string(C::kBlockW) : "") + "_rowtile_n" +
           std::to_string(C::kTileN) + (C::kCluster > 1 ? "_c" + std::to_string(C::kCluster) : "") +
           (C::kPingPong ? "_pingpong" : "") + (C::kColMajorB ? "_bcol" : "") + (C::kColMajorC ? "_ccol" : "");
  }

  static bool supports(const MatmulArgs& args, const DeviceTraits& device) {
    const auto layout = [](bool col) { return col ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR; };
    if (args.a.block_height != Config::kBlockH || args.a.block_width != Config::kBlockW ||
        !supports_common<T>(args, device, Config::kSmemBytes, layout(Config::kColMajorC),
                            layout(Config::kColMajorB)))
      return false;
    if (!tile_count_fits(args, args.a.block_row_count, Config::kTileN * Config::kCluster)) return false;
    static const bool has_code = runs_sm90a_code(reinterpret_cast<const void*>(kernel));
    return has_code;
  }

  static void launch(const MatmulArgs& args, const DeviceTraits& device) {
    RowTileParams params{base_params(args, int32_t(args.a.block_row_count), Config::kTileN * Config::kCluster)};
    params.b_zero_row = int32_t(args.b.rows);
    params.a_map = make_tensor_map_2d(values_tensor(args.a), Config::kSliceK, Config::kBlockH / Config::kCluster,
                                      tma_swizzle_for_row(Config::kSliceRowBytes));
    params.b_map = Config::kColMajorB
                       ? make_tensor_map_2d(dense_tensor(args.b), 64, 64, TmaSwizzle::b128)
                       : make_tensor_map_2d(dense_tensor(args.b), 64, Config::kSliceK, TmaSwizzle::b128);
    params.c_map = make_tensor_map_2d(dense_tensor(args.c), 64, 64, TmaSwizzle::b128);
    if constexpr (Config::kCluster == 1) {
      // A tile costs a 64-deep stage per 64 columns of its blocks, and about one stage more for
      // its epilogue (which an empty row pays too); in units of 32 columns.
      use_work_list(params, args, device, 1, Config::kBlockW / 32, 2);
      launch_kernel(kernel, params, Config::kSmemBytes, args, device, "sm90 row_tile_kernel");
    } else {
      const int clusters = std::min({max_active_clusters(kernel, Config::kSmemBytes, Config::kCluster, args),
                                     std::max(1, device.sm_count / Config::kCluster), params.tile_count});
      use_work_list(params, args, clusters, 1, Config::kBlockW / 32, 2);
      launch_cluster_kernel(kernel, params, Config::kSmemBytes, clusters, Config::kCluster, args,
                            "sm90 row_tile_kernel (cluster)");
    }
  }

  // Wider N tiles halve the A traffic per flop but need N to fill them; a CTA pair shares A
  // (halving it again) but needs twice the N tiles, and loses to a single CTA below about 8
  // blocks per row (d = 0.05 at block 128: 351 vs 363 TFLOPS), where the pair's lock step costs
  // more than the traffic it saves.
  static int preference(const MatmulArgs& args, const DeviceTraits& device) {
    // N narrower than the tile: the narrowest tile that still covers it wastes least (half
    // the stage bytes at 128 wide, so twice the stages in flight for the same smem).
    if (args.b.cols < Config::kTileN * Config::kCluster) return 90 - Config::kCluster - Config::kTileN / 64;
    // 512-wide tiles (blocks 64 high) read A once per 512 columns: 5-12% faster from 1024
    // columns of blocks per block row on (d = 0.125 at K = 8192), up to 5% slower below, where
    // a tile's 512-column epilogue weighs more (docs/perf-log.md entry 33). And only where their
    // waves of tiles over the SMs hold no more work than the 256-wide tiles' (each is twice the
    // work, and N not a multiple of 512 computes past its end): else what they save in bytes
    // goes to SMs idle in the last wave.
    if constexpr (Config::kTileN > 256) {
      const int64_t rows = args.a.block_row_count, sms = std::max(1, device.sm_count);
      const int64_t row_columns = args.a.nnzb * args.a.block_width / std::max<int64_t>(1, rows);
      const auto waves = [&](int64_t tile_n) {
        return (rows * ((args.b.cols + tile_n - 1) / tile_n) + sms - 1) / sms;
      };
      return row_columns >= 1024 && 2 * waves(Config::kTileN) <= waves(Config::kTileN / 2) ? 110 : 100;
    }
    // Ping-pong consumers: level or up to 7% faster than splitting N (entry 32).
    const bool pair_pays = args.a.nnzb >= 8 * args.a.block_row_count;
    return 100 + Config::kTileN / 64 + (Config::kCluster > 1 ? (pair_pays ? 1 : -1) : 0) +
           (Config::kPingPong ? 1 : 0);
  }
};

}  // namespace

// A variant of the shape named by Options (tile_options.cuh).
template <typename T, typename... Options>
using RowTile = RowTileVariant<T, RowTileConfig<Options...>>;

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
