// The sm90 row-tile variants (blocks 64 or 128 high, 32 to 128 wide; row_tile_kernel.cuh): which
// arguments each one takes and how it is launched.
#include "row_tile_kernel.cuh"
#include "variant_lists.hpp"
#include "variant_support.cuh"

namespace bsrmm::cuda::sm90 {
namespace {

// ---- row tiles: blocks 64 and 128 high ----

// Cluster = 2: CTA pairs share A through TMA multicast (row_tile_kernel.cuh); a work item is a
// pair of N tiles, so the list and the grid count clusters. ColMajorC / ColMajorB: for a
// column-major C ("_ccol", tiles stored transposed) or B ("_bcol", read K-major). Square blocks
// are named by their size ("_b64"), others by height x width ("_b64x32").
template <typename T, int BlockH, int BlockW, int TileN, int Cluster = 1, bool ColMajorC = false,
          bool ColMajorB = false, bool PingPong = false>
struct RowTileVariant {
  using Config = RowTileConfig<BlockH, BlockW, TileN, PingPong>;
  static constexpr auto kernel = row_tile_kernel<T, BlockH, BlockW, TileN, Cluster, ColMajorC, ColMajorB, PingPong>;

  static std::string name() {
    return std::string("sm90_tma_wgmma_") + dtype_name<T>() + "_b" + std::to_string(BlockH) +
           (BlockW != BlockH ? "x" + std::to_string(BlockW) : "") + "_rowtile_n" + std::to_string(TileN) +
           (Cluster > 1 ? "_c" + std::to_string(Cluster) : "") + (PingPong ? "_pingpong" : "") +
           (ColMajorB ? "_bcol" : "") + (ColMajorC ? "_ccol" : "");
  }

  static bool supports(const MatmulArgs& args, const DeviceTraits& device) {
    const auto layout = [](bool col) { return col ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR; };
    if (args.a.block_height != BlockH || args.a.block_width != BlockW ||
        !supports_common<T>(args, device, Config::kSmemBytes, layout(ColMajorC), layout(ColMajorB)))
      return false;
    if (!tile_count_fits(args, args.a.block_row_count, TileN * Cluster)) return false;
    static const bool has_code = runs_sm90a_code(reinterpret_cast<const void*>(kernel));
    return has_code;
  }

  static void launch(const MatmulArgs& args, const DeviceTraits& device) {
    KernelParams params = base_params(args, int32_t(args.a.block_row_count), TileN * Cluster);
    params.a_map = make_tensor_map_2d(values_tensor(args.a), Config::kSliceK, BlockH / Cluster,
                                      tma_swizzle_for_row(Config::kSliceRowBytes));
    params.b_map = ColMajorB ? make_tensor_map_2d(dense_tensor(args.b), 64, 64, TmaSwizzle::b128)
                             : make_tensor_map_2d(dense_tensor(args.b), 64, Config::kSliceK, TmaSwizzle::b128);
    params.c_map = make_tensor_map_2d(dense_tensor(args.c), 64, 64, TmaSwizzle::b128);
    if constexpr (Cluster == 1) {
      // A tile costs a 64-deep stage per 64 columns of its blocks, and about one stage more for
      // its epilogue (which an empty row pays too); in units of 32 columns.
      use_work_list(params, args, device, 1, BlockW / 32, 2);
      launch_kernel(kernel, params, Config::kSmemBytes, args, device, "sm90 row_tile_kernel");
    } else {
      const int clusters = std::min(max_active_clusters(kernel, Config::kSmemBytes, Cluster, args),
                                    params.tile_count);
      use_work_list(params, args, clusters, 1, BlockW / 32, 2);
      launch_cluster_kernel(kernel, params, Config::kSmemBytes, clusters, Cluster, args,
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
    if (args.b.cols < TileN * Cluster) return 90 - Cluster - TileN / 64;
    // 512-wide tiles (blocks 64 high) read A once per 512 columns: 5-12% faster from 1024
    // columns of blocks per block row on (d = 0.125 at K = 8192), up to 5% slower below, where
    // a tile's 512-column epilogue weighs more (docs/perf-log.md entry 33). And only where their
    // waves of tiles over the SMs hold no more work than the 256-wide tiles' (each is twice the
    // work, and N not a multiple of 512 computes past its end): else what they save in bytes
    // goes to SMs idle in the last wave.
    if constexpr (TileN > 256) {
      const int64_t rows = args.a.block_row_count, sms = std::max(1, device.sm_count);
      const int64_t row_columns = args.a.nnzb * args.a.block_width / std::max<int64_t>(1, rows);
      const auto waves = [&](int64_t tile_n) {
        return (rows * ((args.b.cols + tile_n - 1) / tile_n) + sms - 1) / sms;
      };
      return row_columns >= 1024 && 2 * waves(TileN) <= waves(TileN / 2) ? 110 : 100;
    }
    // Ping-pong consumers: level or up to 7% faster than splitting N (entry 32).
    const bool pair_pays = args.a.nnzb >= 8 * args.a.block_row_count;
    return 100 + TileN / 64 + (Cluster > 1 ? (pair_pays ? 1 : -1) : 0) + (PingPong ? 1 : 0);
  }
};

}  // namespace

template <typename T>
void append_row_tile_variants(std::vector<Variant>& list) {
  list.push_back(make_variant<RowTileVariant<T, 128, 128, 256>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 64, 256>>());
  // 128 wide, preferred for N < 256 (decoding, attention heads): no wgmma work on columns past
  // N, and twice the ring stages (docs/perf-log.md entry 23).
  list.push_back(make_variant<RowTileVariant<T, 128, 128, 128>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 64, 128>>());
  // Column-major C (Fortran-order outputs, transposed views): the sm80 kernels ran it at
  // 0.66-0.86x the best peer (docs/perf-log.md entry 25).
  list.push_back(make_variant<RowTileVariant<T, 128, 128, 256, 1, true>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 64, 256, 1, true>>());
  // Column-major B, with either C (entry 26).
  list.push_back(make_variant<RowTileVariant<T, 128, 128, 256, 1, false, true>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 64, 256, 1, false, true>>());
  list.push_back(make_variant<RowTileVariant<T, 128, 128, 256, 1, true, true>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 64, 256, 1, true, true>>());
  // Block 128 only: a pair sharing A ran 3-7% faster at d >= 0.125 on the H100 grid; at block
  // 64 (A a fifth of the traffic) it measured level, so it is not offered (docs/perf-log.md).
  list.push_back(make_variant<RowTileVariant<T, 128, 128, 256, 2>>());
  // Non-square blocks with row-major B and C (the sm80 kernels ran 64 x 32 at 0.93x and
  // 128 x 64 at 1.10x torch's Triton kernel, docs/perf-log.md entry 30).
  list.push_back(make_variant<RowTileVariant<T, 128, 64, 256>>());
  list.push_back(make_variant<RowTileVariant<T, 128, 64, 128>>());
  list.push_back(make_variant<RowTileVariant<T, 128, 32, 256>>());
  list.push_back(make_variant<RowTileVariant<T, 128, 32, 128>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 128, 256>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 128, 128>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 32, 256>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 32, 128>>());
  // Blocks 64 high with ping-pong consumers (row_tile_kernel.cuh).
  list.push_back(make_variant<RowTileVariant<T, 64, 64, 256, 1, false, false, true>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 128, 256, 1, false, false, true>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 32, 256, 1, false, false, true>>());
  // Blocks 64 high, N tiles 512 wide (32-deep stages; row_tile_kernel.cuh).
  list.push_back(make_variant<RowTileVariant<T, 64, 64, 512>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 128, 512>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 32, 512>>());
}

template void append_row_tile_variants<__half>(std::vector<Variant>&);
template void append_row_tile_variants<__nv_bfloat16>(std::vector<Variant>&);

}  // namespace bsrmm::cuda::sm90
