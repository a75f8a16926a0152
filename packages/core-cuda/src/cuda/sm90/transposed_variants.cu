// The sm90 transposed-tile variants (blocks 16 and 32 high, 64 as an alternative; as wide or a
// multiple of it; transposed_kernel.cuh): which arguments each one takes and how it is launched.
#include "transposed_kernel.cuh"
#include "variant_lists.hpp"
#include "variant_support.cuh"

namespace bsrmm::cuda::sm90 {
namespace {

// ---- transposed tiles: blocks 16 and 32 (64 as an alternative to the row tiles) ----

// WideBlocks: blocks kBlock high and a larger multiple of kBlock wide, named "_b32_wide" (32 x 64
// runs as two 32 x 32 parts per column, 16 x 64 as four 16 x 16 ones); otherwise square blocks.
template <typename T, typename Config>
struct TransposedVariant {
  static constexpr auto kernel = transposed_kernel<T, Config>;

  static std::string name() {
    return std::string("sm90_tma_wgmma_") + dtype_name<T>() + "_b" + std::to_string(Config::kBlock) +
           (Config::kWide ? "_wide" : "") + "_transposed_r" + std::to_string(Config::kRows) + "_n" +
           std::to_string(Config::kTileN) + (Config::kByRow ? "_byrow" : "");
  }

  static int64_t groups(const MatmulArgs& args) {
    return (args.a.block_row_count + Config::kGroup - 1) / Config::kGroup;
  }

  // The producer walks the plan's merged columns of each row group: only calls with a plan.
  static bool supports(const MatmulArgs& args, const DeviceTraits& device) {
    constexpr int kBlock = Config::kBlock;
    const bool shape = args.a.block_height == kBlock &&
                       (Config::kWide ? args.a.block_width > kBlock && args.a.block_width % kBlock == 0
                                      : args.a.block_width == kBlock);
    if (!args.work_lists || !shape || !supports_common<T>(args, device, Config::kSmemBytes)) return false;
    if (!tile_count_fits(args, groups(args), Config::kTileN)) return false;
    static const bool has_code = runs_sm90a_code(reinterpret_cast<const void*>(kernel));
    return has_code;
  }

  static void launch(const MatmulArgs& args, const DeviceTraits& device) {
    TransposedParams params{base_params(args, int32_t(groups(args)), Config::kTileN)};
    constexpr int kBlock = Config::kBlock;
    params.a_map = make_tensor_map_2d(values_tensor(args.a), kBlock, kBlock, tma_swizzle_for_row(kBlock * 2));
    params.block_parts = int32_t(args.a.block_width / kBlock);
    // B's slices in one request each where N is whole 64-column chunks, else a request per chunk.
    params.b_column_chunks = args.b.cols % 64 == 0;
    params.b_map = params.b_column_chunks
                       ? make_tensor_map_column_chunks(dense_tensor(args.b), kBlock, 2 * Config::kChunks)
                       : make_tensor_map_2d(dense_tensor(args.b), 64, kBlock, TmaSwizzle::b128);
    // A tile costs a stage per distinct column (part) of its rows, and about two more for the
    // epilogue's transpose through shared memory.
    const WorkList list = use_work_list(params, args, device, Config::kGroup, params.block_parts, 2);
    params.group_column_begin = list.column_begin;
    params.group_columns = reinterpret_cast<const uint2*>(list.columns);
    params.group_rows = list.group_rows;
    launch_kernel(kernel, params, Config::kSmemBytes, args, device, "sm90 transposed_kernel");
  }

  // Wider tiles give each union column (each barrier round trip, the bound of the 256 x 128
  // tile) more work, for fewer rows sharing its B slice. On the H100 grid (perf-log entry 27)
  // block 16 ran fastest 64 x 512 (1.6-2.0x the 256 x 128 tile at d <= 0.25) and block 32
  // 128 x 256 (1.15-1.25x; 64 x 512 matched it only at d = 0.05). Narrower N than the tile
  // does not change that: N = 16..256 has a single N tile, so the tiles are the row groups and
  // fewer rows per tile keep more SMs busy (block 32, N = 16 / 64 / 256: 128 x 256 took 0.042 /
  // 0.038 / 0.039 ms, 256 x 128 0.051 / 0.052 / 0.052). Only at block 16, N = 16 did 64 x 512
  // lose to 128 x 256 (0.109 vs 0.086 ms: its stages are mostly zero-filled columns).
  //
  // By row beat by unit on the H100 (perf-log entry 29) for uniform rows (block 32, 128 x 256:
  // 1.08-1.14x at d 0.05-0.25; block 16, 64 x 512: 1.06-1.10x at d <= 0.125) and lost on skewed
  // ones (0.89-0.93x: the plan groups long rows together, so columns hold several blocks of one
  // unit), so it is preferred where no row holds more than twice the mean.
  static int preference(const MatmulArgs& args, const DeviceTraits&) {
    if (Config::kBlock == 64) return 50;
    const int best_chunks = Config::kBlock == 32 || args.b.cols < 64 ? 2 : 4;
    const int64_t rows = std::max<int64_t>(1, args.a.block_row_count);
    const bool even_rows = args.a.max_row_blocks > 0 && args.a.max_row_blocks * rows <= 2 * args.a.nnzb;
    return 100 + Config::kChunks + (Config::kChunks == best_chunks ? 10 : 0) +
           (Config::kByRow == even_rows ? 5 : 0);
  }
};

}  // namespace

// A variant of the shape named by Options (tile_options.cuh).
template <typename T, typename... Options>
using Transposed = TransposedVariant<T, TransposedConfig<Options...>>;

template <typename T>
void append_transposed_variants(std::vector<Variant>& list) {
  list.push_back(make_variant<Transposed<T, Block<64>>>());
  list.push_back(make_variant<Transposed<T, Block<32>>>());
  list.push_back(make_variant<Transposed<T, Block<16>>>());
  list.push_back(make_variant<Transposed<T, Block<32>, Rows<128>>>());
  list.push_back(make_variant<Transposed<T, Block<16>, Rows<128>>>());
  list.push_back(make_variant<Transposed<T, Block<32>, Rows<64>>>());
  list.push_back(make_variant<Transposed<T, Block<16>, Rows<64>>>());
  // By row where a block row issues at least 4 wgmma per column (Chunks x Block / 16): with
  // fewer (block 16 at 128 and 256 rows, block 32 at 256) it ran 10-40% slower than by unit.
  list.push_back(make_variant<Transposed<T, Block<32>, Rows<128>, ByRow>>());
  list.push_back(make_variant<Transposed<T, Block<32>, Rows<64>, ByRow>>());
  list.push_back(make_variant<Transposed<T, Block<16>, Rows<64>, ByRow>>());
  // Wide blocks (32 x 64, 16 x 64): the tiles that won for their height, by row and by unit
  // (tools/gpu/block_shape_sweep.py, perf-log entry 31), and 128 x 256 for block 16 at small N.
  list.push_back(make_variant<Transposed<T, Block<32>, Rows<128>, ByRow, WideBlocks>>());
  list.push_back(make_variant<Transposed<T, Block<32>, Rows<128>, WideBlocks>>());
  list.push_back(make_variant<Transposed<T, Block<16>, Rows<64>, ByRow, WideBlocks>>());
  list.push_back(make_variant<Transposed<T, Block<16>, Rows<64>, WideBlocks>>());
  list.push_back(make_variant<Transposed<T, Block<16>, Rows<128>, WideBlocks>>());
  // 64 x 128: the tuner's pick over the row tiles at d >= 0.25 (1.04-1.10x, entry 31).
  list.push_back(make_variant<Transposed<T, Block<64>, WideBlocks>>());
}

template void append_transposed_variants<__half>(std::vector<Variant>&);
template void append_transposed_variants<__nv_bfloat16>(std::vector<Variant>&);

}  // namespace bsrmm::cuda::sm90
