// fp8 on the bf16 / f32 tensor-core kernels: for the fp8 problems the Hopper fp8 row tiles
// do not take (blocks that are not 64 or 128 high and wide, B row-major, C in f32, a GPU before
// sm_90), which otherwise ran on the generic SIMT kernel at 10-100x bf16's time (H100: blocks
// of 16 at d 0.5, 8192 x 8192 x 4096, 67 ms against 0.70 for bf16; perf-log 68).
//
// Per call, into stream-ordered scratch: A's stored values times their per-block or per-row
// scale, and B times its per-column scales, widened to C's dtype (the producer); then the
// registry's own pick for that bf16 / f32 problem multiplies them (the main loop and epilogue
// are that kernel's; the dense fallback, densifying the widened values, where A's density makes
// one dense GEMM faster). Per-tensor scales are not folded into the values but into alpha, so
// those widen exactly: every e4m3 and e5m2 value is a bf16 and an f32. A folded scale rounds
// the product once to C's dtype (2^-8 relative in bf16), far below fp8's own 2^-4.
// C in f16 is not widened (it stays on the generic kernel): f16's range (65504) would need every
// folded scale checked, and its one product run on the H100 missed its float64 bound by 5% with
// the cause unread (perf-log 68).
#include "../../common/dtype.hpp"
#include "../dense_fallback/stream_scratch.hpp"
#include "../kernel_parts/block_row_of.cuh"
#include "../kernel_parts/element.cuh"
#include "../runtime/cuda_check.hpp"
#include "../variant.hpp"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace bsrmm::cuda {
namespace {

using dense_fallback::StreamScratch;

constexpr int kThreads = 256;
constexpr uintptr_t kScratchAlignment = 256;  // what the stream-ordered pool hands out

// A's values times their block's (PER_BLOCK) or block row's (PER_BLOCK_ROW) scale, in T; a
// PER_TENSOR scale goes to alpha instead (scales == nullptr). One CTA a stored block at a time.
template <typename TA, typename T>
__global__ void widen_blocks(const TA* values, int64_t nnzb, int32_t block_elements, const float* scales,
                             bsrmm_scale_kind kind, const int32_t* row_ptr, int64_t block_rows, T* out) {
  __shared__ float block_scale;
  for (int64_t block = blockIdx.x; block < nnzb; block += gridDim.x) {
    if (threadIdx.x == 0) {
      block_scale = scales == nullptr                     ? 1.0f
                    : kind == BSRMM_SCALE_PER_BLOCK       ? scales[block]
                                                          : scales[block_row_of(row_ptr, block_rows, block)];
    }
    __syncthreads();
    const int64_t base = block * block_elements;
    for (int32_t i = threadIdx.x; i < block_elements; i += blockDim.x)
      out[base + i] = Element<T>::from_acc(Element<TA>::to_acc(values[base + i]) * block_scale);
    __syncthreads();
  }
}

// B (rows x cols, its layout and ld) times its per-column scales (or 1), in T, in B's layout
// with leading dimension out_ld.
template <typename TB, typename T>
__global__ void widen_dense(const TB* b, int64_t rows, int64_t cols, int64_t ld, bool col_major,
                            const float* column_scales, T* out, int64_t out_ld) {
  const int64_t count = rows * cols;
  const int64_t inner_count = col_major ? rows : cols;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t outer = i / inner_count, inner = i % inner_count;
    const int64_t col = col_major ? outer : inner;
    const float scale = column_scales != nullptr ? column_scales[col] : 1.0f;
    out[outer * out_ld + inner] = Element<T>::from_acc(Element<TB>::to_acc(b[outer * ld + inner]) * scale);
  }
}

unsigned grid_for(int64_t items) {
  return unsigned(std::clamp<int64_t>(items, 1, int64_t(1) << 20));
}

uintptr_t aligned_up(uintptr_t bytes) { return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment; }

// The widened B's leading dimension: its rows (column-major) or columns (row-major), rounded up
// to 16 bytes, so every row or column starts where the cp.async and TMA kernels can load it.
template <typename T>
int64_t widened_ld(const DenseView& b) {
  constexpr int64_t per_16_bytes = 16 / sizeof(T);
  const int64_t inner = b.layout == BSRMM_LAYOUT_COL_MAJOR ? b.rows : b.cols;
  return (inner + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
}

// The widened A's dense copy, for the dense variants: made by them per call (densified into
// their own stream-ordered scratch), as for a step's borrowed values, since the widened values
// live for this call only. Stateless.
class PerCallDenseCopy final : public DenseCopy {
 public:
  const void* get(void*) override {
    detail::fail(BSRMM_STATUS_INTERNAL, "fp8 widened: the dense copy is made per call, never kept");
  }
  bool kept() const override { return false; }
};

PerCallDenseCopy per_call_dense_copy;

// The bf16 / f32 problem the widened operands make: A and B in T, their folded scales
// gone, the per-tensor ones in alpha. `a_values` / `b_values` are where the widened copies live
// (any 256-byte aligned address when only asking what supports them).
template <typename T>
MatmulArgs widened(const MatmulArgs& args, const void* a_values, void* b_values) {
  MatmulArgs inner = args;
  const bsrmm_dtype dtype = Element<T>::dtype;
  double alpha = args.alpha;
  if (args.a.scale_kind == BSRMM_SCALE_PER_TENSOR && args.a.scales != nullptr) alpha *= args.a.scales[0];
  if (args.b_scale_kind == BSRMM_SCALE_PER_TENSOR) alpha *= args.b_scales[0];
  inner.alpha = alpha;
  inner.a.values = a_values;
  inner.a.dtype = dtype;
  inner.a.scales = inner.a.device_scales = nullptr;
  inner.a.scale_kind = BSRMM_SCALE_PER_TENSOR;
  inner.a_dense = &per_call_dense_copy;  // the plan's dense copy would be fp8's
  inner.b.data = b_values;
  inner.b.dtype = dtype;
  inner.b.ld = widened_ld<T>(args.b);
  inner.b_scales = inner.device_b_scales = nullptr;
  inner.b_scale_kind = BSRMM_SCALE_PER_TENSOR;
  return inner;
}

template <typename TA, typename TB, typename T>
bool widened_supports(const MatmulArgs& args, const DeviceTraits& device) {
  if (args.a.dtype != Element<TA>::dtype || args.b.dtype != Element<TB>::dtype ||
      args.c.dtype != Element<T>::dtype || !args.has_b_scales())
    return false;
  if (args.a.nnzb > 0 && (args.a.scales == nullptr || args.a.device_scales == nullptr)) return false;
  if (args.b_scale_kind == BSRMM_SCALE_PER_COLUMN && args.device_b_scales == nullptr) return false;
  // Worth it only where a tensor-core (or narrow) kernel takes the widened problem.
  void* some_address = reinterpret_cast<void*>(kScratchAlignment);
  const Variant* pick = heuristic_pick(widened<T>(args, some_address, some_address), device);
  return pick != nullptr && pick->family != Family::generic;
}

template <typename TA, typename TB, typename T>
void widened_launch(const MatmulArgs& args, const DeviceTraits&) {
  if (args.c.rows == 0 || args.c.cols == 0) return;
  auto stream = static_cast<cudaStream_t>(args.stream);
  const BsrView& a = args.a;
  const int64_t block_elements = int64_t(a.block_height) * a.block_width;
  const uintptr_t a_bytes = aligned_up(uintptr_t(a.nnzb * block_elements) * sizeof(T));
  const int64_t b_ld = widened_ld<T>(args.b);
  const int64_t b_outer = args.b.layout == BSRMM_LAYOUT_COL_MAJOR ? args.b.cols : args.b.rows;
  const uintptr_t b_bytes = uintptr_t(b_outer * b_ld) * sizeof(T);
  StreamScratch scratch(a_bytes + b_bytes, args.device, stream, "fp8 widened");
  T* a_values = scratch.as<T>();
  T* b_values = reinterpret_cast<T*>(static_cast<char*>(scratch.data()) + a_bytes);
  if (a.nnzb > 0) {
    const float* scales = a.scale_kind == BSRMM_SCALE_PER_TENSOR ? nullptr : a.device_scales;
    widen_blocks<TA, T><<<grid_for(a.nnzb), kThreads, 0, stream>>>(
        static_cast<const TA*>(a.values), a.nnzb, int32_t(block_elements), scales, a.scale_kind, a.row_ptr,
        a.block_row_count, a_values);
    check_launch("widen_blocks");
  }
  if (args.b.rows * args.b.cols > 0) {
    const float* column_scales = args.b_scale_kind == BSRMM_SCALE_PER_COLUMN ? args.device_b_scales : nullptr;
    widen_dense<TB, T><<<grid_for((args.b.rows * args.b.cols + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        static_cast<const TB*>(args.b.data), args.b.rows, args.b.cols, args.b.ld,
        args.b.layout == BSRMM_LAYOUT_COL_MAJOR, column_scales, b_values, b_ld);
    check_launch("widen_dense");
  }
  // The registry's pick for the widened problem runs it (the scratch is freed after it, in
  // stream order).
  matmul(widened<T>(args, a_values, b_values), "");
}

int widened_preference(const MatmulArgs&, const DeviceTraits&) { return 10; }

template <typename TA, typename TB>
void add_pair(std::vector<Variant>& variants, const char* pair) {
  const std::string prefix = std::string("fp8_widened_") + pair;
  variants.push_back(Variant{prefix + "_bf16_via_bf16", &widened_supports<TA, TB, __nv_bfloat16>,
                             &widened_launch<TA, TB, __nv_bfloat16>, &widened_preference});
  variants.push_back(Variant{prefix + "_f32_via_f32", &widened_supports<TA, TB, float>,
                             &widened_launch<TA, TB, float>, &widened_preference});
}

}  // namespace

std::vector<Variant> fp8_widened_variants() {
  std::vector<Variant> variants;
  add_pair<__nv_fp8_e4m3, __nv_fp8_e4m3>(variants, "e4m3xe4m3");
  add_pair<__nv_fp8_e4m3, __nv_fp8_e5m2>(variants, "e4m3xe5m2");
  add_pair<__nv_fp8_e5m2, __nv_fp8_e4m3>(variants, "e5m2xe4m3");
  add_pair<__nv_fp8_e5m2, __nv_fp8_e5m2>(variants, "e5m2xe5m2");
  return variants;
}

}  // namespace bsrmm::cuda
