// The sm90 row-tile variant (blocks 64 or 128 high, 32 to 128 wide; row_tile_kernel.cuh): which
// arguments a row-tile kernel takes, how it is launched and how the heuristic ranks it. The
// variant lists are row_tile_variants.cu (f16 / bf16) and fp8_row_tile_variants.cu (fp8), each
// its own translation unit so they compile in parallel.
#pragma once

#include "row_tile_kernel.cuh"
#include "row_tile_operands.cuh"
#include "variant_support.cuh"

#include <string>

namespace bsrmm::cuda::sm90 {

// Cluster<2>: CTA pairs share A through TMA multicast (row_tile_kernel.cuh); a work item is a
// pair of N tiles, so the list and the grid count clusters. CColMajor / BColMajor: for a
// column-major C ("_ccol", tiles stored transposed) or B ("_bcol", read K-major). Square blocks
// are named by their size ("_b64"), others by height x width ("_b64x32").
//
// T is __half / __nv_bfloat16, or Fp8Operands<TA, TB, TC> (row_tile_operands.cuh): fp8 A and B,
// named by both formats and C's dtype ("sm90_tma_wgmma_e4m3xe5m2_bf16_b128_rowtile_n128_bcol").
template <typename T, typename Config>
struct RowTileVariant {
  static constexpr auto kernel = row_tile_kernel<T, Config>;
  using Types = RowTileTypes<T>;

  static std::string operands_name() {
    if constexpr (Types::kFp8)
      return std::string(fp8_format_name<typename Types::A>()) + "x" + fp8_format_name<typename Types::B>() + "_" +
             dtype_name<typename Types::C>();
    else
      return dtype_name<T>();
  }

  static std::string name() {
    using C = Config;
    return std::string("sm90_tma_wgmma_") + operands_name() + "_b" + std::to_string(C::kBlockH) +
           (C::kBlockW != C::kBlockH ? "x" + std::to_string(C::kBlockW) : "") + "_rowtile_n" +
           std::to_string(C::kTileN) + (C::kCluster > 1 ? "_c" + std::to_string(C::kCluster) : "") +
           (C::kPingPong ? "_pingpong" : "") + (C::kColMajorB ? "_bcol" : "") + (C::kColMajorC ? "_ccol" : "");
  }

  static bool supports(const MatmulArgs& args, const DeviceTraits& device) {
    const auto layout = [](bool col) { return col ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR; };
    if (args.a.block_height != Config::kBlockH || args.a.block_width != Config::kBlockW ||
        !supports_operands(args, device, Config::kSmemBytes, dtype_of<typename Types::A>(),
                           dtype_of<typename Types::B>(), dtype_of<typename Types::C>(), Types::kElementBytes,
                           layout(Config::kColMajorC), layout(Config::kColMajorB)))
      return false;
    // fp8: the kernel reads A's scales and B's per-column ones in the device's memory (host
    // per-column scales are a refusal, as in the generic kernel); B's one scale goes into alpha.
    if constexpr (Types::kFp8)
      if (args.a.device_scales == nullptr || !args.has_b_scales() ||
          (args.b_scale_kind == BSRMM_SCALE_PER_COLUMN && args.device_b_scales == nullptr))
        return false;
    if (!tile_count_fits(args, args.a.block_row_count, Config::kTileN * Config::kCluster)) return false;
    static const bool has_code = runs_sm90a_code(reinterpret_cast<const void*>(kernel));
    return has_code;
  }

  static void launch(const MatmulArgs& args, const DeviceTraits& device) {
    RowTileParams params{base_params(args, int32_t(args.a.block_row_count), Config::kTileN * Config::kCluster)};
    params.b_zero_row = int32_t(args.b.rows);
    constexpr uint32_t kBytes = Types::kElementBytes;
    params.a_map = make_tensor_map_2d(values_tensor(args.a, kBytes), Config::kSliceK,
                                      Config::kBlockH / Config::kCluster, tma_swizzle_for_row(Config::kSliceRowBytes));
    params.b_map = Config::kColMajorB ? make_tensor_map_2d(dense_tensor(args.b, kBytes), Config::kStageK, 64,
                                                           tma_swizzle_for_row(Config::kBRowBytes))
                                      : make_tensor_map_2d(dense_tensor(args.b), 64, Config::kSliceK, TmaSwizzle::b128);
    if constexpr (Types::kFp8) {
      params.a_scale_kind = args.a.scale_kind;
      params.a_scales = args.a.device_scales;
      params.b_column_scales = args.b_scale_kind == BSRMM_SCALE_PER_COLUMN ? args.device_b_scales : nullptr;
      if (args.b_scale_kind != BSRMM_SCALE_PER_COLUMN) params.alpha = float(args.alpha * args.b_scales[0]);
    }
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

// A variant of the shape named by Options (tile_options.cuh).
template <typename T, typename... Options>
using RowTile = RowTileVariant<T, RowTileConfig<Options...>>;

}  // namespace bsrmm::cuda::sm90
