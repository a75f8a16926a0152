// What the sm90 variant lists share: the argument checks every kernel needs, the persistent
// launch (plain and clustered), the plan's work list, and the tensors the TMA maps describe.
// Included by row_tile_variants.cu and transposed_variants.cu (one translation unit each, so
// the two kernel families compile in parallel).
#pragma once

#include "../runtime/cuda_check.hpp"
#include "../runtime/dynamic_smem.hpp"
#include "../variant.hpp"
#include "kernel_params.cuh"
#include "tensor_map.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>

namespace bsrmm::cuda::sm90 {

template <typename T>
constexpr bsrmm_dtype dtype_of() {
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) return BSRMM_DTYPE_FLOAT8_E4M3;
  else if constexpr (std::is_same_v<T, __nv_fp8_e5m2>) return BSRMM_DTYPE_FLOAT8_E5M2;
  else return std::is_same_v<T, __half> ? BSRMM_DTYPE_F16 : BSRMM_DTYPE_BF16;
}

template <typename T>
inline const char* dtype_name() {
  return std::is_same_v<T, __half> ? "f16" : "bf16";
}

// "e4m3" / "e5m2", as the variant names spell fp8 formats (the generic kernel's too).
template <typename T>
inline const char* fp8_format_name() {
  return std::is_same_v<T, __nv_fp8_e4m3> ? "e4m3" : "e5m2";
}

inline bool aligned16(const void* pointer) { return (reinterpret_cast<uintptr_t>(pointer) & 15) == 0; }

// The kernel's machine code for the current device is sm_90a (not an sm_80 image that the
// driver chose because the build left sm_90a out).
inline bool runs_sm90a_code(const void* kernel) {
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.binaryVersion == 90;
}

// What every sm90 kernel needs of the arguments besides its block shape (which each family
// checks): A, B and C of the given dtypes (B's elements `b_bytes` long), B and C row-major
// unless the variant reads or stores column-major tiles.
inline bool supports_operands(const MatmulArgs& args, const DeviceTraits& device, int smem_bytes, bsrmm_dtype a_dtype,
                              bsrmm_dtype b_dtype, bsrmm_dtype c_dtype, int b_bytes, bsrmm_layout c_layout,
                              bsrmm_layout b_layout) {
  const BsrView& a = args.a;
  const int64_t n = args.b.cols;
  return device.cc_major == 9 && device.cc_minor == 0 &&
         device.max_smem_per_block_optin >= smem_bytes && a.dtype == a_dtype && args.b.dtype == b_dtype &&
         args.c.dtype == c_dtype && args.b.layout == b_layout && args.c.layout == c_layout &&
         // TMA: 16-byte aligned bases and row strides; int32 box coordinates.
         a.nnzb >= 1 && (a.nnzb + 1) * a.block_height <= INT_MAX &&
         a.block_col_count * a.block_width <= INT_MAX && a.block_row_count >= 1 &&
         a.block_row_count * a.block_height <= INT_MAX && n >= 1 && n % 8 == 0 &&
         n <= INT_MAX / 2 && (args.b.ld * b_bytes) % 16 == 0 && args.c.ld % 8 == 0 && aligned16(a.values) &&
         aligned16(args.b.data) && aligned16(args.c.data);
}

// The same for f16 / bf16 kernels: A, B and C all of T.
template <typename T>
bool supports_common(const MatmulArgs& args, const DeviceTraits& device, int smem_bytes,
                     bsrmm_layout c_layout = BSRMM_LAYOUT_ROW_MAJOR,
                     bsrmm_layout b_layout = BSRMM_LAYOUT_ROW_MAJOR) {
  return supports_operands(args, device, smem_bytes, dtype_of<T>(), dtype_of<T>(), dtype_of<T>(), 2, c_layout,
                           b_layout);
}

// Persistent: one CTA per SM, fewer when there are fewer tiles.
inline int grid_size(const KernelParams& params, const DeviceTraits& device) {
  return std::min(device.sm_count, params.tile_count);
}

// Hands the kernel the matrix plan's balanced list for its tiles (work_walk.cuh), when the call
// comes with a plan, split among `workers` (CTAs or clusters). Costs in the kernel's own units:
// see each variant's launch. Returns the list (all null without a plan): the transposed tiles
// also take its row groups' merged columns.
inline WorkList use_work_list(KernelParams& params, const MatmulArgs& args, int workers, int rows_per_slot,
                              int cost_per_block, int cost_per_item) {
  if (!args.work_lists) return WorkList{};
  WorkRequest request{rows_per_slot, params.tile_count / params.tile_slots, workers,
                      cost_per_block, cost_per_item};
  // Past 4M tiles a list's build (~1 s on the host, once) and its 16 MB outweigh what it saves:
  // a request of no N tiles asks for the merged columns alone (the tiles go round robin).
  if (params.tile_count > (1 << 22)) request.n_tiles = 0;
  const WorkList list = args.work_lists->get(request, args.stream);
  params.work_items = list.items;
  params.work_begin = list.begin;
  return list;
}

inline WorkList use_work_list(KernelParams& params, const MatmulArgs& args, const DeviceTraits& device,
                              int rows_per_slot, int cost_per_block, int cost_per_item) {
  return use_work_list(params, args, grid_size(params, device), rows_per_slot, cost_per_block, cost_per_item);
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

template <typename Kernel, typename Params>
void launch_cluster_kernel(Kernel kernel, const Params& params, int smem_bytes, int clusters,
                           int cluster, const MatmulArgs& args, const char* name) {
  ClusterLaunch launch(clusters * cluster, cluster, smem_bytes, args.stream);
  check_cuda(cudaLaunchKernelEx(&launch.config, kernel, params), name);
  check_launch(name);
}

template <typename Kernel, typename Params>
void launch_kernel(Kernel kernel, const Params& params, int smem_bytes,
                   const MatmulArgs& args, const DeviceTraits& device, const char* name) {
  allow_dynamic_smem(kernel, smem_bytes, args.device);
  kernel<<<grid_size(params, device), 384, smem_bytes, static_cast<cudaStream_t>(args.stream)>>>(params);
  check_launch(name);
}

inline KernelParams base_params(const MatmulArgs& args, int tile_slots, int tile_n) {
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
inline Tensor2d dense_tensor(const DenseView& d, uint32_t element_bytes = 2) {
  const bool rows_inner = d.layout == BSRMM_LAYOUT_COL_MAJOR;
  return {d.data, uint64_t(rows_inner ? d.rows : d.cols), uint64_t(rows_inner ? d.cols : d.rows),
          uint64_t(d.ld) * element_bytes, element_bytes};
}

inline Tensor2d values_tensor(const BsrView& a, uint32_t element_bytes = 2) {
  return {a.values, uint64_t(a.block_width), uint64_t(a.nnzb) * a.block_height,
          uint64_t(a.block_width) * element_bytes, element_bytes};
}

inline bool tile_count_fits(const MatmulArgs& args, int64_t slots, int tile_n) {
  return slots * ((args.b.cols + tile_n - 1) / tile_n) <= INT_MAX;
}

template <typename V>
Variant make_variant() {
  return Variant{V::name(), &V::supports, &V::launch, &V::preference};
}

}  // namespace bsrmm::cuda::sm90
