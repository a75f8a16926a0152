// The Hopper SDDMM kernels (sm90_kernel.cuh) as named variants: f16 / bf16, blocks 64 or 128
// high and 64 or 128 wide, X and Y in either layout, e.g. "sm90_sddmm_bf16_wgmma_b128x128_yc"
// or "sm90_sddmm_f16_wgmma_b64x64_xc_yr" (a weight gradient dY^T X: X column-major). They take
// T >= 1 of any length (TMA zero-fills past T), leading dimensions multiples of 8 elements and
// 16-byte aligned X and Y (TMA), values aligned to 4 bytes (pair stores), and need sm_90a code
// loaded on a compute capability 9.0 device. Their own translation unit, so they compile in
// parallel with the sm80 and SIMT kernels.
#include "../runtime/cuda_check.hpp"
#include "../runtime/device_traits.hpp"
#include "../runtime/dynamic_smem.hpp"
#include "../sm90/tensor_map.hpp"
#include "../sm90/variant_support.cuh"
#include "sddmm_variant.hpp"
#include "sm90_kernel.cuh"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace bsrmm::cuda {
namespace {

using sddmm_kernels::Sm90SddmmConfig;
using sddmm_kernels::XColMajor;
using sddmm_kernels::YColMajor;
using sddmm_kernels::Sm90SddmmParams;

template <class Cfg>
bool sm90_sddmm_supports(const SddmmArgs& a, const DeviceTraits& device) {
  using T = typename Cfg::T;
  const bsrmm_layout x_layout = Cfg::kXColMajor ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
  const bsrmm_layout y_layout = Cfg::kYColMajor ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
  constexpr int64_t kCoordinateLimit = INT_MAX - 256;  // TMA box coordinates are int32
  return device.cc_major == 9 && device.cc_minor == 0 &&
         device.max_smem_per_block_optin >= Cfg::kSmemBytes && a.values.dtype == sm90::dtype_of<T>() &&
         a.pattern.block_height == Cfg::kBlockH && a.pattern.block_width == Cfg::kBlockW &&
         a.x.layout == x_layout && a.y.layout == y_layout && a.x.ld % 8 == 0 && a.y.ld % 8 == 0 &&
         a.x.cols >= 1 && a.x.rows <= kCoordinateLimit && a.x.cols <= kCoordinateLimit &&
         a.y.cols <= kCoordinateLimit && sm90::aligned16(a.x.data) && sm90::aligned16(a.y.data) &&
         reinterpret_cast<std::uintptr_t>(a.values.data) % 4 == 0 &&
         sm90::runs_sm90a_code(reinterpret_cast<const void*>(&sddmm_kernels::sm90_sddmm_kernel<Cfg>));
}

// How units cover the stored blocks (sm90_unit.cuh) on a grid of `grid` CTAs: units of
// `blocks` for every full wave, then the last wave's blocks spread evenly over the grid, so no
// CTA waits on more than ceil(those / grid) blocks after the full waves (a last wave of a few
// whole units would cost a whole unit's time, T deep).
struct UnitSplit {
  int64_t head_units;
  int32_t tail_blocks;
  int64_t units;
};

UnitSplit split_units(int64_t nnzb, int blocks, int64_t grid) {
  const int64_t whole = (nnzb + blocks - 1) / blocks;
  const int64_t waves = (whole + grid - 1) / grid;
  if (waves < 2) return {whole, blocks, whole};  // one wave: each CTA at most one unit
  const int64_t head = (waves - 1) * grid;
  const int64_t tail = nnzb - head * blocks;  // 1 .. grid * blocks
  const int64_t per_unit = (tail + grid - 1) / grid;
  return {head, int32_t(per_unit), head + (tail + per_unit - 1) / per_unit};
}

template <class Cfg>
void sm90_sddmm_launch(const SddmmArgs& a) {
  const DeviceTraits device = within_sm_budget(device_traits(a.device), a.sm_budget);
  Sm90SddmmParams p{};
  p.x_map = sm90::make_tensor_map_2d(sm90::dense_tensor(a.x), 64, 64, sm90::TmaSwizzle::b128);
  p.y_map = sm90::make_tensor_map_2d(sm90::dense_tensor(a.y), 64, 64, sm90::TmaSwizzle::b128);
  p.row_ptr = a.pattern.row_ptr;
  p.col_idx = a.pattern.col_idx;
  p.block_row_count = a.pattern.block_row_count;
  p.nnzb = a.pattern.nnzb;
  const UnitSplit split = split_units(a.pattern.nnzb, Cfg::kBlocks, device.sm_count);
  p.units = split.units;
  p.head_units = split.head_units;
  p.tail_blocks = split.tail_blocks;
  p.t_stages = int32_t((a.x.cols + Cfg::kStageT - 1) / Cfg::kStageT);
  p.values = a.values.data;
  p.alpha = float(a.alpha);
  p.beta = float(a.beta);
  auto* kernel = &sddmm_kernels::sm90_sddmm_kernel<Cfg>;
  allow_dynamic_smem(kernel, Cfg::kSmemBytes, a.device);
  const unsigned grid = unsigned(std::min<int64_t>(device.sm_count, p.units));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, static_cast<cudaStream_t>(a.stream)>>>(p);
  check_launch("sm90_sddmm_kernel");
}

template <class Cfg>
SddmmVariant sm90_sddmm_variant() {
  return SddmmVariant{std::string("sm90_sddmm_") + sm90::dtype_name<typename Cfg::T>() + "_wgmma_b" +
                          std::to_string(Cfg::kBlockH) + "x" + std::to_string(Cfg::kBlockW) +
                          (Cfg::kXColMajor ? "_xc" : "") + (Cfg::kYColMajor ? "_yc" : "_yr"),
                      &sm90_sddmm_supports<Cfg>, &sm90_sddmm_launch<Cfg>};
}

template <typename T, int BlockH, int BlockW>
void add_shape(std::vector<SddmmVariant>& list) {
  using Blocks = sm90::Block<BlockH, BlockW>;
  list.push_back(sm90_sddmm_variant<Sm90SddmmConfig<T, Blocks, YColMajor>>());
  list.push_back(sm90_sddmm_variant<Sm90SddmmConfig<T, Blocks>>());
  list.push_back(sm90_sddmm_variant<Sm90SddmmConfig<T, Blocks, XColMajor, YColMajor>>());
  list.push_back(sm90_sddmm_variant<Sm90SddmmConfig<T, Blocks, XColMajor>>());
}

template <typename T>
void add_dtype(std::vector<SddmmVariant>& list) {
  add_shape<T, 128, 128>(list);
  add_shape<T, 64, 64>(list);
  add_shape<T, 128, 64>(list);
  add_shape<T, 64, 128>(list);
}

}  // namespace

void add_sm90_sddmm_variants(std::vector<SddmmVariant>& list) {
  add_dtype<__half>(list);
  add_dtype<__nv_bfloat16>(list);
}

}  // namespace bsrmm::cuda
