// The portable kernel: every dtype (f32, f16, bf16 accumulate in f32; f64 in f64), any block
// shape, any layout and leading dimension. A classic SIMT tiled product: a CTA of 16x16 threads
// owns a 64x64 tile of C (a row slice of one block row by an N tile); each thread keeps a 4x4
// register tile; A and B arrive through shared memory 16 k at a time, converted to the
// accumulator type once on the way in.
//
// fp8 (issue 27: correct, not fast): A and B in E4M3 / E5M2, C in f32, f16 or bf16, the same
// kernel with A's elements times their block's scale as they are converted, and B's scale (one,
// or one per column) applied to each finished dot product before the epilogue.
#include "../kernel_parts/element.cuh"
#include "../kernel_parts/simt_operands.cuh"
#include "../kernel_parts/epilogue_math.hpp"
#include "../kernel_parts/tile_schedule.cuh"
#include "../runtime/cuda_check.hpp"
#include "../variant.hpp"

#include <cuda_fp8.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace bsrmm::cuda {
namespace {

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 16;
constexpr int kThreadsPerSide = 16;
constexpr int kThreads = kThreadsPerSide * kThreadsPerSide;
constexpr int kPerThread = kTileM / kThreadsPerSide;  // 4 x 4 outputs per thread
constexpr int kGroupRows = 16;

template <typename T>
constexpr bool is_fp8 = std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>;

// The scales of fp8 operands (device memory); empty, and so no parameter bytes, for the others.
template <bool Scaled>
struct ScaleParams {};
template <>
struct ScaleParams<true> {
  const float* a_scales;       // 1, nnzb or block rows of them, by a_scale_kind
  bsrmm_scale_kind a_scale_kind;
  const float* b_column_scales;  // one per column of B, or null: b_scale for every column
  float b_scale;
};

// TA: A's values, TB: B, TC: C and the bias (all one T but for fp8).
template <typename TA, typename TB, typename TC>
struct GenericParams : ScaleParams<is_fp8<TA>> {
  const int32_t* row_ptr;
  const int32_t* col_idx;
  const TA* values;
  int32_t block_height;
  int32_t block_width;
  const TB* b;
  int64_t ldb;
  bool b_col_major;
  TC* c;
  int64_t ldc;
  bool c_col_major;
  int64_t n;
  double alpha;
  double beta;
  const TC* bias;
  bsrmm_activation activation;
  TileSchedule schedule;
};

template <typename TA, typename TB, typename TC>
__device__ float a_block_scale(const GenericParams<TA, TB, TC>& p, int32_t block_row, int32_t block) {
  if constexpr (is_fp8<TA>) {
    switch (p.a_scale_kind) {
      case BSRMM_SCALE_PER_BLOCK: return p.a_scales[block];
      case BSRMM_SCALE_PER_BLOCK_ROW: return p.a_scales[block_row];
      default: return p.a_scales[0];
    }
  }
  return 1.0f;
}

template <typename TA, typename TB, typename TC>
__global__ void __launch_bounds__(kThreads) generic_matmul_kernel(GenericParams<TA, TB, TC> p) {
  using T = TC;
  using Acc = typename Element<T>::Acc;
  __shared__ Acc a_tile[kTileM][kTileK + 1];
  __shared__ Acc b_tile[kTileK][kTileN + 1];

  const Tile tile = p.schedule.at(blockIdx.x);
  const int tx = threadIdx.x % kThreadsPerSide;
  const int ty = threadIdx.x / kThreadsPerSide;
  const int64_t m0 = int64_t(tile.slice) * kTileM;  // within the block row
  const int64_t n0 = int64_t(tile.n_tile) * kTileN;
  const int32_t bh = p.block_height;
  const int32_t bw = p.block_width;

  Acc acc[kPerThread][kPerThread] = {};
  const int32_t first = p.row_ptr[tile.block_row];
  const int32_t last = p.row_ptr[tile.block_row + 1];
  for (int32_t block = first; block < last; ++block) {
    const TA* a_block = p.values + int64_t(block) * bh * bw;
    [[maybe_unused]] const float a_scale = a_block_scale(p, tile.block_row, block);
    const int64_t k_base = int64_t(p.col_idx[block]) * bw;
    for (int32_t k0 = 0; k0 < bw; k0 += kTileK) {
      for (int e = threadIdx.x; e < kTileM * kTileK; e += kThreads) {
        const int r = e / kTileK;
        const int k = e % kTileK;
        const bool inside = m0 + r < bh && k0 + k < bw;
        Acc value = Acc(0);
        if (inside) {
          value = Element<TA>::to_acc(a_block[(m0 + r) * bw + k0 + k]);
          if constexpr (is_fp8<TA>) value *= a_scale;
        }
        a_tile[r][k] = value;
      }
      for (int e = threadIdx.x; e < kTileK * kTileN; e += kThreads) {
        // Consecutive threads walk the contiguous dimension of B, whichever it is.
        const int k = p.b_col_major ? e % kTileK : e / kTileN;
        const int n = p.b_col_major ? e / kTileK : e % kTileN;
        const bool inside = k0 + k < bw && n0 + n < p.n;
        Acc value = Acc(0);
        if (inside) {
          const int64_t row = k_base + k0 + k;
          const int64_t col = n0 + n;
          value = Element<TB>::to_acc(p.b_col_major ? p.b[col * p.ldb + row] : p.b[row * p.ldb + col]);
        }
        b_tile[k][n] = value;
      }
      __syncthreads();
#pragma unroll
      for (int k = 0; k < kTileK; ++k) {
        Acc a[kPerThread];
        Acc b[kPerThread];
#pragma unroll
        for (int i = 0; i < kPerThread; ++i) a[i] = a_tile[ty + i * kThreadsPerSide][k];
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) b[j] = b_tile[k][tx + j * kThreadsPerSide];
#pragma unroll
        for (int i = 0; i < kPerThread; ++i)
#pragma unroll
          for (int j = 0; j < kPerThread; ++j) acc[i][j] += a[i] * b[j];
      }
      __syncthreads();
    }
  }

  const Acc alpha = Acc(p.alpha);
  const Acc beta = Acc(p.beta);
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int64_t m = m0 + ty + i * kThreadsPerSide;
    if (m >= bh) continue;
    const int64_t row = int64_t(tile.block_row) * bh + m;
    const Acc bias = p.bias ? Element<T>::to_acc(p.bias[row]) : Acc(0);
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int64_t col = n0 + tx + j * kThreadsPerSide;
      if (col >= p.n) continue;
      T* out = p.c + (p.c_col_major ? col * p.ldc + row : row * p.ldc + col);
      const Acc old = beta != Acc(0) ? Element<T>::to_acc(*out) : Acc(0);
      Acc product = acc[i][j];
      if constexpr (is_fp8<TA>) product *= p.b_column_scales ? p.b_column_scales[col] : p.b_scale;
      *out = Element<T>::from_acc(epilogue::finish(product, alpha, beta, old, bias, p.activation));
    }
  }
}

template <typename TA, typename TB, typename TC>
bool generic_supports(const MatmulArgs& args, const DeviceTraits& device) {
  if constexpr (is_fp8<TA>) {
    // B's per-column scales are read by the kernel: they must be in the device's memory (the
    // API passes them through when the caller's are; host ones are a refusal, not a copy).
    const bool b_scales_readable =
        args.b_scale_kind == BSRMM_SCALE_PER_TENSOR || args.device_b_scales != nullptr;
    return device.cc_major >= 8 && args.a.dtype == Element<TA>::dtype &&
           args.b.dtype == Element<TB>::dtype && args.c.dtype == Element<TC>::dtype &&
           (args.a.device_scales != nullptr || args.a.nnzb == 0) && args.has_b_scales() &&
           b_scales_readable &&
           aligned_to(args.c.data, sizeof(TC)) && aligned_to(args.bias, sizeof(TC));
  } else {
    return simt_supports<TC>(args, device);
  }
}

template <typename TA, typename TB, typename TC>
void generic_launch(const MatmulArgs& args, const DeviceTraits&) {
  if (args.c.rows == 0 || args.c.cols == 0) return;
  GenericParams<TA, TB, TC> p{};
  p.row_ptr = args.a.row_ptr;
  p.col_idx = args.a.col_idx;
  p.values = static_cast<const TA*>(args.a.values);
  p.block_height = args.a.block_height;
  p.block_width = args.a.block_width;
  p.b = static_cast<const TB*>(args.b.data);
  p.ldb = args.b.ld;
  p.b_col_major = args.b.layout == BSRMM_LAYOUT_COL_MAJOR;
  p.c = static_cast<TC*>(args.c.data);
  p.ldc = args.c.ld;
  p.c_col_major = args.c.layout == BSRMM_LAYOUT_COL_MAJOR;
  p.n = args.c.cols;
  p.alpha = args.alpha;
  p.beta = args.beta;
  p.bias = static_cast<const TC*>(args.bias);
  p.activation = args.activation;
  if constexpr (is_fp8<TA>) {
    p.a_scales = args.a.device_scales;
    p.a_scale_kind = args.a.scale_kind;
    p.b_column_scales = args.b_scale_kind == BSRMM_SCALE_PER_COLUMN ? args.device_b_scales : nullptr;
    // PER_TENSOR's one scale, in host memory: read here.
    p.b_scale = args.b_scale_kind == BSRMM_SCALE_PER_TENSOR ? args.b_scales[0] : 1.0f;
  }

  const int64_t slices = (int64_t(args.a.block_height) + kTileM - 1) / kTileM;
  const int64_t slots = args.a.block_row_count * slices;
  const int64_t n_tiles = (args.c.cols + kTileN - 1) / kTileN;
  const int64_t ctas = slots * n_tiles;
  if (slots > INT32_MAX || n_tiles > INT32_MAX || ctas > INT32_MAX)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "generic CUDA kernel: ", ctas,
                 " tiles of 64x64 exceed the 2^31-1 grid limit");
  p.schedule.row_order = args.a.row_order;
  p.schedule.slices = int32_t(slices);
  p.schedule.slot_count = int32_t(slots);
  p.schedule.n_tiles = int32_t(n_tiles);
  p.schedule.group_rows = int32_t(std::min<int64_t>(kGroupRows, slots));

  generic_matmul_kernel<TA, TB, TC><<<unsigned(ctas), kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(p);
  check_launch("generic_matmul_kernel");
}

// Always the last resort: any faster family that supports the arguments outranks it.
int generic_preference(const MatmulArgs&, const DeviceTraits&) { return 10; }

template <typename TA, typename TB = TA, typename TC = TA>
Variant generic_variant(std::string name) {
  return Variant{std::move(name), &generic_supports<TA, TB, TC>, &generic_launch<TA, TB, TC>, &generic_preference};
}

// A's fp8 format with each of B's, into each C dtype: "generic_e4m3xe5m2_bf16_simt_m64n64k16".
template <typename TA, typename TB>
void add_fp8_variants(std::vector<Variant>& variants, const char* pair) {
  const std::string prefix = std::string("generic_") + pair;
  variants.push_back(generic_variant<TA, TB, float>(prefix + "_f32_simt_m64n64k16"));
  variants.push_back(generic_variant<TA, TB, __half>(prefix + "_f16_simt_m64n64k16"));
  variants.push_back(generic_variant<TA, TB, __nv_bfloat16>(prefix + "_bf16_simt_m64n64k16"));
}

}  // namespace

std::vector<Variant> generic_variants() {
  std::vector<Variant> variants{
      generic_variant<float>("generic_f32_simt_m64n64k16"),
      generic_variant<__half>("generic_f16_simt_m64n64k16"),
      generic_variant<__nv_bfloat16>("generic_bf16_simt_m64n64k16"),
      generic_variant<double>("generic_f64_simt_m64n64k16"),
  };
  add_fp8_variants<__nv_fp8_e4m3, __nv_fp8_e4m3>(variants, "e4m3xe4m3");
  add_fp8_variants<__nv_fp8_e4m3, __nv_fp8_e5m2>(variants, "e4m3xe5m2");
  add_fp8_variants<__nv_fp8_e5m2, __nv_fp8_e4m3>(variants, "e5m2xe4m3");
  add_fp8_variants<__nv_fp8_e5m2, __nv_fp8_e5m2>(variants, "e5m2xe5m2");
  return variants;
}

}  // namespace bsrmm::cuda
