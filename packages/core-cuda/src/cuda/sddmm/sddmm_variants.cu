// The CUDA SDDMM's kernels as named variants and the choice between them: on an sm_90a device
// the Hopper TMA + wgmma kernel (sm90_variants.cu: f16 / bf16, blocks 64 or 128 high and wide),
// else the mma.sync kernel
// (f16 / bf16, block sides multiples of its tile, X and Y in either layout with leading
// dimensions multiples of 8 elements and 16-byte aligned data, T a multiple of 8) at the largest
// tile that divides the block, else the SIMT kernel, which takes everything. Names say dtype,
// instruction, tile, X's layout when column-major (`_xc`; row-major X has no tag) and Y's, e.g.
// "sm80_sddmm_bf16_mma16816_t128x128_yc", "sm80_sddmm_f16_mma16816_t64x64_xc_yr" (a weight
// gradient dY^T X) or "cuda_sddmm_simt_f64".
#include "../../common/dtype.hpp"
#include "../runtime/cuda_check.hpp"
#include "../runtime/device_guard.hpp"
#include "../runtime/device_traits.hpp"
#include "../runtime/dynamic_smem.hpp"
#include "../sm80/tile_config.cuh"
#include "mma_kernel.cuh"
#include "sddmm_backend.hpp"
#include "sddmm_variant.hpp"
#include "simt_kernel.cuh"

#include <algorithm>
#include <sstream>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace bsrmm::cuda {
namespace {

using sddmm_kernels::Params;

inline bool aligned_to(const void* pointer, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

template <typename T>
Params<T> params_for(const SddmmArgs& a, int tile_m, int tile_n) {
  const backend::BsrView& pattern = a.pattern;
  Params<T> p{};
  p.row_ptr = pattern.row_ptr;
  p.col_idx = pattern.col_idx;
  p.block_row_count = pattern.block_row_count;
  p.block_height = pattern.block_height;
  p.block_width = pattern.block_width;
  p.nnzb = pattern.nnzb;
  const bool x_row_major = a.x.layout == BSRMM_LAYOUT_ROW_MAJOR;
  p.x = static_cast<const T*>(a.x.data);
  p.x_row_step = x_row_major ? a.x.ld : 1;
  p.x_t_step = x_row_major ? 1 : a.x.ld;
  const bool y_row_major = a.y.layout == BSRMM_LAYOUT_ROW_MAJOR;
  p.y = static_cast<const T*>(a.y.data);
  p.y_t_step = y_row_major ? a.y.ld : 1;
  p.y_col_step = y_row_major ? 1 : a.y.ld;
  p.t_count = a.x.cols;
  p.values = static_cast<T*>(a.values.data);
  p.alpha = a.alpha;
  p.beta = a.beta;
  p.tiles_m = (pattern.block_height + tile_m - 1) / tile_m;
  p.tiles_n = (pattern.block_width + tile_n - 1) / tile_n;
  return p;
}

// The kernels loop over tiles, so the grid only has to fill the device many times over.
unsigned grid_for(int64_t tiles) { return unsigned(std::min<int64_t>(tiles, int64_t(1) << 30)); }

// ---- SIMT: every dtype, block shape and layout ----

template <typename T>
bool simt_supports(const SddmmArgs& a, const DeviceTraits& device) {
  return device.cc_major >= 8 && a.values.dtype == Element<T>::dtype &&
         aligned_to(a.x.data, sizeof(T)) && aligned_to(a.y.data, sizeof(T)) &&
         aligned_to(a.values.data, sizeof(T));
}

template <typename T>
void simt_launch(const SddmmArgs& a) {
  const Params<T> p = params_for<T>(a, sddmm_kernels::kSimtTile, sddmm_kernels::kSimtTile);
  const int64_t tiles = a.pattern.nnzb * p.tiles_m * p.tiles_n;
  sddmm_kernels::simt_sddmm_kernel<T>
      <<<grid_for(tiles), sddmm_kernels::kSimtThreads, 0, static_cast<cudaStream_t>(a.stream)>>>(p);
  check_launch("simt_sddmm_kernel");
}

template <typename T>
SddmmVariant simt_variant(const char* dtype) {
  return SddmmVariant{std::string(sddmm_simt_prefix) + dtype, &simt_supports<T>, &simt_launch<T>};
}

// ---- mma.sync (sm80 pieces): f16 / bf16 ----

// The loads move 16-byte chunks: along T for row-major X and column-major Y, along M / K for
// the other layouts. So every line of X and Y starts 16 bytes aligned (data aligned, ld a
// multiple of V = 8 elements; block sides multiples of the tile, itself a multiple of 16, keep
// a tile's first row or column on a chunk), and T is a multiple of V, so a chunk along T is
// wholly inside T or past it. values: 32-bit pair stores.
template <class Cfg>
bool mma_supports(const SddmmArgs& a, const DeviceTraits& device) {
  using T = typename Cfg::T;
  constexpr int V = Cfg::kVector;
  const bsrmm_layout x_layout =
      sddmm_kernels::XColMajor<Cfg>::value ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
  const bsrmm_layout y_layout = Cfg::kBColMajor ? BSRMM_LAYOUT_COL_MAJOR : BSRMM_LAYOUT_ROW_MAJOR;
  return device.cc_major >= 8 && a.values.dtype == Element<T>::dtype &&
         a.pattern.block_height % Cfg::kBM == 0 && a.pattern.block_width % Cfg::kBN == 0 &&
         a.x.layout == x_layout && a.x.ld % V == 0 && a.y.layout == y_layout &&
         a.y.ld % V == 0 && a.x.cols % V == 0 && aligned_to(a.x.data, 16) &&
         aligned_to(a.y.data, 16) && aligned_to(a.values.data, 4) &&
         Cfg::kPipelineBytes <= device.max_smem_per_block_optin;
}

template <class Cfg>
void mma_launch(const SddmmArgs& a) {
  using T = typename Cfg::T;
  const Params<T> p = params_for<T>(a, Cfg::kBM, Cfg::kBN);
  const int64_t tiles = a.pattern.nnzb * p.tiles_m * p.tiles_n;
  auto* kernel = &sddmm_kernels::mma_sddmm_kernel<Cfg>;
  allow_dynamic_smem(kernel, Cfg::kPipelineBytes, a.device);
  kernel<<<grid_for(tiles), Cfg::kThreads, Cfg::kPipelineBytes,
           static_cast<cudaStream_t>(a.stream)>>>(p);
  check_launch("mma_sddmm_kernel");
}

template <class Cfg>
SddmmVariant mma_variant() {
  return SddmmVariant{std::string(sddmm_mma_prefix) + Cfg::Traits::kDtype + "_" +
                          Cfg::Traits::kOp + "_t" + std::to_string(Cfg::kBM) + "x" +
                          std::to_string(Cfg::kBN) +
                          (sddmm_kernels::XColMajor<Cfg>::value ? "_xc" : "") +
                          (Cfg::kBColMajor ? "_yc" : "_yr"),
                      &mma_supports<Cfg>, &mma_launch<Cfg>};
}

// KC = 32 (two k16 steps per stage), three stages. Warp tiles: 64 x 32 at 128 x 128 (8 warps),
// 32 x 32 at 64 x 64, 16 x 16 below. Row-major X is sm80's TileConfig itself; column-major X
// wraps it (x_col_major.cuh: its stage layout only).
template <sm80::Math math, int BM, int BN, int WarpsM, int WarpsN, bool YColMajor>
using MmaConfig = sm80::TileConfig<math, BM, BN, 32, WarpsM, WarpsN, 3, YColMajor>;

template <bool XColMajor, class Cfg>
using WithXLayout = std::conditional_t<XColMajor, sddmm_kernels::XColMajorConfig<Cfg>, Cfg>;

template <sm80::Math math, bool XColMajor, bool YColMajor>
void add_mma(std::vector<SddmmVariant>& list) {
  list.push_back(mma_variant<WithXLayout<XColMajor, MmaConfig<math, 128, 128, 2, 4, YColMajor>>>());
  list.push_back(mma_variant<WithXLayout<XColMajor, MmaConfig<math, 64, 64, 2, 2, YColMajor>>>());
  list.push_back(mma_variant<WithXLayout<XColMajor, MmaConfig<math, 32, 32, 2, 2, YColMajor>>>());
  list.push_back(mma_variant<WithXLayout<XColMajor, MmaConfig<math, 16, 16, 1, 1, YColMajor>>>());
}

// In order of preference: the Hopper kernels (they decline anything but an sm_90a device);
// then for each dtype and pair of X / Y layouts, larger mma tiles (more reuse per loaded chunk)
// first; SIMT last.
const std::vector<SddmmVariant>& variants() {
  static const std::vector<SddmmVariant> list = [] {
    std::vector<SddmmVariant> v;
    add_sm90_sddmm_variants(v);
    add_mma<sm80::Math::f16, false, true>(v);
    add_mma<sm80::Math::f16, false, false>(v);
    add_mma<sm80::Math::bf16, false, true>(v);
    add_mma<sm80::Math::bf16, false, false>(v);
    add_mma<sm80::Math::f16, true, true>(v);
    add_mma<sm80::Math::f16, true, false>(v);
    add_mma<sm80::Math::bf16, true, true>(v);
    add_mma<sm80::Math::bf16, true, false>(v);
    v.push_back(simt_variant<float>("f32"));
    v.push_back(simt_variant<__half>("f16"));
    v.push_back(simt_variant<__nv_bfloat16>("bf16"));
    v.push_back(simt_variant<double>("f64"));
    return v;
  }();
  return list;
}

// The facts the variants' supports() look at, for the UNSUPPORTED message of a forced variant
// that declines: with the variant's name (dtype, block or tile shape, layouts) and the rules in
// README.md, what to change.
std::string describe(const SddmmArgs& a, const DeviceTraits& device) {
  std::ostringstream text;
  text << "pattern " << detail::name(a.pattern.dtype) << " blocks " << a.pattern.block_height << "x"
       << a.pattern.block_width << ", X " << detail::name(a.x.layout) << " ld " << a.x.ld
       << (aligned_to(a.x.data, 16) ? "" : " (not 16-byte aligned)") << ", Y "
       << detail::name(a.y.layout) << " ld " << a.y.ld
       << (aligned_to(a.y.data, 16) ? "" : " (not 16-byte aligned)") << ", T " << a.x.cols
       << (aligned_to(a.values.data, 4) ? "" : ", values not 4-byte aligned") << ", device "
       << a.device << " (compute capability " << device.cc_major << "." << device.cc_minor << ")";
  return text.str();
}

}  // namespace

std::vector<std::string> sddmm_variant_names() {
  std::vector<std::string> names;
  for (const SddmmVariant& v : variants()) names.push_back(v.name);
  return names;
}

std::string sddmm(const SddmmArgs& args, const std::string& variant) {
  const DeviceGuard guard(args.device);
  const DeviceTraits& device = device_traits(args.device);
  for (const SddmmVariant& v : variants()) {
    if (!variant.empty() && v.name != variant) continue;
    if (!v.supports(args, device)) {
      if (variant.empty()) continue;
      detail::fail(BSRMM_STATUS_UNSUPPORTED, "the SDDMM variant '", variant,
                   "' does not take these operands (its dtype, block shape, layouts, leading "
                   "dimensions, alignment, T or device): ", describe(args, device));
    }
    if (args.pattern.nnzb > 0) v.launch(args);
    return v.name;
  }
  if (!variant.empty()) detail::fail(BSRMM_STATUS_UNSUPPORTED, "no SDDMM variant is named ", variant);
  detail::fail(BSRMM_STATUS_UNSUPPORTED, "no CUDA SDDMM kernel takes these operands (the device "
               "needs compute capability 8.0 and elements aligned to their size)");
}

}  // namespace bsrmm::cuda
