// The sm90 (Hopper, sm_90a) kernel variants: which arguments each one takes and how it is
// launched. Compiled for every target in the build; outside sm_90a the kernels are empty, so
// supports() also asks the runtime whether sm_90a machine code was actually loaded.
#include "../runtime/cuda_check.hpp"
#include "../runtime/dynamic_smem.hpp"
#include "../variant.hpp"
#include "row_tile_kernel.cuh"
#include "tensor_map.hpp"
#include "transposed_kernel.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <type_traits>

namespace bsrmm::cuda {
namespace sm90 {
namespace {

template <typename T>
constexpr bsrmm_dtype dtype_of() {
  return std::is_same_v<T, __half> ? BSRMM_DTYPE_F16 : BSRMM_DTYPE_BF16;
}

template <typename T>
const char* dtype_name() {
  return std::is_same_v<T, __half> ? "f16" : "bf16";
}

bool aligned16(const void* pointer) { return (reinterpret_cast<uintptr_t>(pointer) & 15) == 0; }

// The kernel's machine code for the current device is sm_90a (not an sm_80 image that the
// driver chose because the build left sm_90a out).
bool runs_sm90a_code(const void* kernel) {
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.binaryVersion == 90;
}

// What every sm90 kernel needs of the arguments, whatever its block size.
// B and C are row-major unless the variant reads or stores column-major tiles.
template <typename T, int Block>
bool supports_common(const MatmulArgs& args, const DeviceTraits& device, int smem_bytes,
                     bsrmm_layout c_layout = BSRMM_LAYOUT_ROW_MAJOR,
                     bsrmm_layout b_layout = BSRMM_LAYOUT_ROW_MAJOR) {
  const BsrView& a = args.a;
  const int64_t n = args.b.cols;
  return device.cc_major == 9 && device.cc_minor == 0 &&
         device.max_smem_per_block_optin >= smem_bytes && a.dtype == dtype_of<T>() &&
         args.b.dtype == a.dtype && args.c.dtype == a.dtype && a.block_height == Block &&
         a.block_width == Block && args.b.layout == b_layout &&
         args.c.layout == c_layout &&
         // TMA: 16-byte aligned bases and row strides; int32 box coordinates.
         a.nnzb >= 1 && (a.nnzb + 1) * Block <= INT_MAX && a.block_col_count * Block <= INT_MAX &&
         a.block_row_count >= 1 && a.block_row_count * Block <= INT_MAX && n >= 1 && n % 8 == 0 &&
         n <= INT_MAX / 2 && args.b.ld % 8 == 0 && args.c.ld % 8 == 0 && aligned16(a.values) &&
         aligned16(args.b.data) && aligned16(args.c.data);
}

// Persistent: one CTA per SM, fewer when there are fewer tiles.
int grid_size(const KernelParams& params, const DeviceTraits& device) {
  return std::min(device.sm_count, params.tile_count);
}

// Hands the kernel the matrix plan's balanced list for its tiles (work_walk.cuh), when the call
// comes with a plan, split among `workers` (CTAs or clusters). Costs in the kernel's own units:
// see each variant's launch.
void use_work_list(KernelParams& params, const MatmulArgs& args, int workers, int rows_per_slot,
                   int cost_per_block, int cost_per_item) {
  if (!args.work_lists) return;
  WorkRequest request{rows_per_slot, params.tile_count / params.tile_slots, workers,
                      cost_per_block, cost_per_item};
  // Past 4M tiles a list's build (~1 s on the host, once) and its 16 MB outweigh what it saves:
  // a request of no N tiles asks for the merged columns alone (the tiles go round robin).
  if (params.tile_count > (1 << 22)) request.n_tiles = 0;
  const WorkList list = args.work_lists->get(request, args.stream);
  params.work_items = list.items;
  params.work_begin = list.begin;
  params.group_column_begin = list.column_begin;
  params.group_columns = reinterpret_cast<const uint2*>(list.columns);
}

void use_work_list(KernelParams& params, const MatmulArgs& args, const DeviceTraits& device,
                   int rows_per_slot, int cost_per_block, int cost_per_item) {
  use_work_list(params, args, grid_size(params, device), rows_per_slot, cost_per_block, cost_per_item);
}

// A launch configuration of clusters of `cluster` CTAs (384 threads each).
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  ClusterLaunch(int ctas, int cluster, int smem_bytes, void* stream) {
    config.gridDim = dim3(unsigned(ctas));
    config.blockDim = dim3(384);
    config.dynamicSmemBytes = size_t(smem_bytes);
    config.stream = static_cast<cudaStream_t>(stream);
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = unsigned(cluster);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
};

// Clusters of `kernel` that fit on the device at once (a persistent grid must not exceed it: a
// cluster left waiting would run its whole share after the others). Fixed per kernel and device,
// so asked once: the occupancy query would otherwise sit on every launch.
template <typename Kernel>
int max_active_clusters(Kernel kernel, int smem_bytes, int cluster, const MatmulArgs& args) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> known;
  const std::pair<const void*, int> key{reinterpret_cast<const void*>(kernel), args.device};
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto found = known.find(key); found != known.end()) return found->second;
  allow_dynamic_smem(kernel, smem_bytes, args.device);  // the occupancy query needs it too
  ClusterLaunch launch(cluster, cluster, smem_bytes, args.stream);
  int clusters = 0;
  check_cuda(cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config),
             "cudaOccupancyMaxActiveClusters");
  if (clusters < 1)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "no cluster of ", cluster, " CTAs fits on this device");
  known.emplace(key, clusters);
  return clusters;
}

template <typename Kernel>
void launch_cluster_kernel(Kernel kernel, const KernelParams& params, int smem_bytes, int clusters,
                           int cluster, const MatmulArgs& args, const char* name) {
  ClusterLaunch launch(clusters * cluster, cluster, smem_bytes, args.stream);
  check_cuda(cudaLaunchKernelEx(&launch.config, kernel, params), name);
  check_launch(name);
}

template <typename Kernel>
void launch_kernel(Kernel kernel, const KernelParams& params, int smem_bytes,
                   const MatmulArgs& args, const DeviceTraits& device, const char* name) {
  allow_dynamic_smem(kernel, smem_bytes, args.device);
  kernel<<<grid_size(params, device), 384, smem_bytes, static_cast<cudaStream_t>(args.stream)>>>(params);
  check_launch(name);
}

KernelParams base_params(const MatmulArgs& args, int tile_slots, int tile_n) {
  KernelParams params{};
  params.row_ptr = args.a.row_ptr;
  params.col_idx = args.a.col_idx;
  params.row_order = args.a.row_order;
  params.c = args.c.data;
  params.ldc = args.c.ld;
  params.bias = args.bias;
  params.block_rows = int32_t(args.a.block_row_count);
  params.a_zero_row = int32_t(args.a.nnzb * args.a.block_height);
  params.n = int32_t(args.b.cols);
  params.tile_slots = tile_slots;
  const int64_t n_tiles = (args.b.cols + tile_n - 1) / tile_n;
  params.tile_count = int32_t(std::min<int64_t>(INT_MAX, n_tiles * tile_slots));
  params.alpha = float(args.alpha);
  params.beta = float(args.beta);
  params.activation = args.activation;
  return params;
}

// A dense operand as stored: its contiguous dimension innermost (so a column-major B or C is
// the tensor of its transpose).
Tensor2d dense_tensor(const DenseView& d) {
  const bool rows_inner = d.layout == BSRMM_LAYOUT_COL_MAJOR;
  return {d.data, uint64_t(rows_inner ? d.rows : d.cols), uint64_t(rows_inner ? d.cols : d.rows),
          uint64_t(d.ld) * 2, 2};
}

Tensor2d values_tensor(const BsrView& a) {
  return {a.values, uint64_t(a.block_width), uint64_t(a.nnzb) * a.block_height,
          uint64_t(a.block_width) * 2, 2};
}

bool tile_count_fits(const MatmulArgs& args, int64_t slots, int tile_n) {
  return slots * ((args.b.cols + tile_n - 1) / tile_n) <= INT_MAX;
}

// ---- row tiles: blocks 64 and 128 ----

// Cluster = 2: CTA pairs share A through TMA multicast (row_tile_kernel.cuh); a work item is a
// pair of N tiles, so the list and the grid count clusters. ColMajorC / ColMajorB: for a
// column-major C ("_ccol", tiles stored transposed) or B ("_bcol", read K-major).
template <typename T, int Block, int TileN, int Cluster = 1, bool ColMajorC = false,
          bool ColMajorB = false>
struct RowTileVariant {
  using Config = RowTileConfig<Block, TileN>;
  static constexpr auto kernel = row_tile_kernel<T, Block, TileN, Cluster, ColMajorC, ColMajorB>;

  static std::string name() {
    return std::string("sm90_tma_wgmma_") + dtype_name<T>() + "_b" + std::to_string(Block) +
           "_rowtile_n" + std::to_string(TileN) + (Cluster > 1 ? "_c" + std::to_string(Cluster) : "") +
           (ColMajorB ? "_bcol" : "") + (ColMajorC ? "_ccol" : "");
  }

  static bool supports(const MatmulArgs& args, const DeviceTraits& device) {
    const auto layout = [](bool col) { return col ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR; };
    if (!supports_common<T, Block>(args, device, Config::kSmemBytes, layout(ColMajorC), layout(ColMajorB)))
      return false;
    if (!tile_count_fits(args, args.a.block_row_count, TileN * Cluster)) return false;
    static const bool has_code = runs_sm90a_code(reinterpret_cast<const void*>(kernel));
    return has_code;
  }

  static void launch(const MatmulArgs& args, const DeviceTraits& device) {
    KernelParams params = base_params(args, int32_t(args.a.block_row_count), TileN * Cluster);
    params.a_map = make_tensor_map_2d(values_tensor(args.a), 64, Block / Cluster, TmaSwizzle::b128);
    params.b_map = make_tensor_map_2d(dense_tensor(args.b), 64, 64, TmaSwizzle::b128);
    params.c_map = make_tensor_map_2d(dense_tensor(args.c), 64, 64, TmaSwizzle::b128);
    if constexpr (Cluster == 1) {
      // A tile costs a 64-deep stage per 64 columns of each block, and about one stage more for
      // its epilogue (which an empty row pays too).
      use_work_list(params, args, device, 1, Block / 64, 1);
      launch_kernel(kernel, params, Config::kSmemBytes, args, device, "sm90 row_tile_kernel");
    } else {
      const int clusters = std::min(max_active_clusters(kernel, Config::kSmemBytes, Cluster, args),
                                    params.tile_count);
      use_work_list(params, args, clusters, 1, Block / 64, 1);
      launch_cluster_kernel(kernel, params, Config::kSmemBytes, clusters, Cluster, args,
                            "sm90 row_tile_kernel (cluster)");
    }
  }

  // Wider N tiles halve the A traffic per flop but need N to fill them; a CTA pair shares A
  // (halving it again) but needs twice the N tiles, and loses to a single CTA below about 8
  // blocks per row (d = 0.05 at block 128: 351 vs 363 TFLOPS), where the pair's lock step costs
  // more than the traffic it saves.
  static int preference(const MatmulArgs& args, const DeviceTraits&) {
    // N narrower than the tile: the narrowest tile that still covers it wastes least (half
    // the stage bytes at 128 wide, so twice the stages in flight for the same smem).
    if (args.b.cols < TileN * Cluster) return 90 - Cluster - TileN / 64;
    const bool pair_pays = args.a.nnzb >= 8 * args.a.block_row_count;
    return 100 + TileN / 64 + (Cluster > 1 ? (pair_pays ? 1 : -1) : 0);
  }
};

// ---- transposed tiles: blocks 16 and 32 (64 as an alternative to the row tiles) ----

template <typename T, int Block>
struct TransposedVariant {
  using Config = TransposedConfig<Block>;
  static constexpr auto kernel = transposed_kernel<T, Block>;

  static std::string name() {
    return std::string("sm90_tma_wgmma_") + dtype_name<T>() + "_b" + std::to_string(Block) +
           "_transposed_r256_n128";
  }

  static int64_t groups(const MatmulArgs& args) {
    return (args.a.block_row_count + Config::kGroup - 1) / Config::kGroup;
  }

  // The producer walks the plan's merged columns of each row group: only calls with a plan.
  static bool supports(const MatmulArgs& args, const DeviceTraits& device) {
    if (!args.work_lists || !supports_common<T, Block>(args, device, Config::kSmemBytes)) return false;
    if (!tile_count_fits(args, groups(args), Config::kTileN)) return false;
    static const bool has_code = runs_sm90a_code(reinterpret_cast<const void*>(kernel));
    return has_code;
  }

  static void launch(const MatmulArgs& args, const DeviceTraits& device) {
    KernelParams params = base_params(args, int32_t(groups(args)), Config::kTileN);
    const TmaSwizzle a_swizzle =
        Block == 16 ? TmaSwizzle::b32 : Block == 32 ? TmaSwizzle::b64 : TmaSwizzle::b128;
    params.a_map = make_tensor_map_2d(values_tensor(args.a), Block, Block, a_swizzle);
    params.b_map = make_tensor_map_2d(dense_tensor(args.b), 64, Block, TmaSwizzle::b128);
    // A tile costs a stage per distinct column of its rows, and about two more for the
    // epilogue's transpose through shared memory.
    use_work_list(params, args, device, Config::kGroup, 1, 2);
    launch_kernel(kernel, params, Config::kSmemBytes, args, device, "sm90 transposed_kernel");
  }

  static int preference(const MatmulArgs&, const DeviceTraits&) { return Block == 64 ? 50 : 100; }
};

template <typename V>
Variant make_variant() {
  return Variant{V::name(), &V::supports, &V::launch, &V::preference};
}

template <typename T>
void append_variants(std::vector<Variant>& list) {
  // No 64 x 512 row tile: with the epilogue's staging only 2 of its 72 KB stages fit.
  list.push_back(make_variant<RowTileVariant<T, 128, 256>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 256>>());
  // 128 wide, preferred for N < 256 (decoding, attention heads): no wgmma work on columns past
  // N, and twice the ring stages (docs/perf-log.md entry 23).
  list.push_back(make_variant<RowTileVariant<T, 128, 128>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 128>>());
  // Column-major C (Fortran-order outputs, transposed views): the sm80 kernels ran it at
  // 0.66-0.86x the best peer (docs/perf-log.md entry 25).
  list.push_back(make_variant<RowTileVariant<T, 128, 256, 1, true>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 256, 1, true>>());
  // Column-major B, with either C (entry 26).
  list.push_back(make_variant<RowTileVariant<T, 128, 256, 1, false, true>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 256, 1, false, true>>());
  list.push_back(make_variant<RowTileVariant<T, 128, 256, 1, true, true>>());
  list.push_back(make_variant<RowTileVariant<T, 64, 256, 1, true, true>>());
  // Block 128 only: a pair sharing A ran 3-7% faster at d >= 0.125 on the H100 grid; at block
  // 64 (A a fifth of the traffic) it measured level, so it is not offered (docs/perf-log.md).
  list.push_back(make_variant<RowTileVariant<T, 128, 256, 2>>());
  list.push_back(make_variant<TransposedVariant<T, 64>>());
  list.push_back(make_variant<TransposedVariant<T, 32>>());
  list.push_back(make_variant<TransposedVariant<T, 16>>());
}

}  // namespace
}  // namespace sm90

std::vector<Variant> sm90_variants() {
  std::vector<Variant> list;
  sm90::append_variants<__half>(list);
  sm90::append_variants<__nv_bfloat16>(list);
  return list;
}

}  // namespace bsrmm::cuda
