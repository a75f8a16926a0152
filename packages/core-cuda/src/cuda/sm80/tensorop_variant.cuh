// Host side of one sm80 tile config: its name, what it accepts, how it launches. Included only
// by the per-dtype variant lists (variants_*.cu), which instantiate it.
#pragma once

#include "../../common/error.hpp"
#include "../runtime/cuda_check.hpp"
#include "../runtime/dynamic_smem.hpp"
#include "../variant.hpp"
#include "heuristic.hpp"
#include "tensorop_kernel.cuh"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <sstream>

namespace bsrmm::cuda::sm80 {

// e.g. sm80_f16_m128n128k32_s4_w2x2_brow_mma16816, sm80_f64_m64n64k16_s3_w2x2_brow_dmma884: dtype, CTA tile (m x n) and k chunk,
// pipeline stages, warp grid, B layout, tensor-core instruction.
template <class Cfg>
std::string tensorop_name() {
  std::ostringstream name;
  name << "sm80_" << Cfg::Traits::kDtype << "_m" << Cfg::kBM << "n" << Cfg::kBN << "k" << Cfg::kKC
       << "_s" << Cfg::kStages << "_w" << Cfg::kWarpsM << "x" << Cfg::kWarpsN
       << (Cfg::kBColMajor ? "_bcol_" : "_brow_") << Cfg::Traits::kOp;
  return name.str();
}

inline bool aligned_to(const void* ptr, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(ptr) % bytes == 0;
}

template <class Cfg>
bool tensorop_supports(const MatmulArgs& args, const DeviceTraits& device) {
  using T = typename Cfg::T;
  constexpr bsrmm_dtype dtype = Element<T>::dtype;
  if (device.cc_major < 8) return false;
  if (args.a.dtype != dtype || args.b.dtype != dtype || args.c.dtype != dtype) return false;
  if constexpr (Cfg::kMath == Math::tf32) {
    if (args.f32_mode != BSRMM_F32_TF32) return false;
  }
  if constexpr (Cfg::kMath == Math::tf32x3) {
    if (args.f32_mode != BSRMM_F32_EXACT) return false;
  }
  if (args.a.block_height % Cfg::kBM != 0 || args.a.block_width % Cfg::kKC != 0) return false;
  if ((args.b.layout == BSRMM_LAYOUT_COL_MAJOR) != Cfg::kBColMajor) return false;
  // cp.async moves 16-byte chunks: A's blocks and every row (column) of B must start aligned.
  if (!aligned_to(args.a.values, 16) || !aligned_to(args.b.data, 16) || args.b.ld % Cfg::kVector != 0)
    return false;
  if (!aligned_to(args.c.data, sizeof(T)) || !aligned_to(args.bias, sizeof(T))) return false;
  if (Cfg::kSmemBytes > device.max_smem_per_block_optin) return false;
  const int64_t ctas = args.a.block_row_count * (args.a.block_height / Cfg::kBM) *
                       ((args.c.cols + Cfg::kBN - 1) / Cfg::kBN);
  const int64_t steps = args.a.block_col_count * (args.a.block_width / Cfg::kKC);
  return ctas <= INT32_MAX && steps <= INT32_MAX;
}

template <class Cfg>
void tensorop_launch(const MatmulArgs& args, const DeviceTraits&) {
  if (args.c.rows == 0 || args.c.cols == 0) return;
  typename Cfg::Params p{};
  p.row_ptr = args.a.row_ptr;
  p.col_idx = args.a.col_idx;
  p.values = args.a.values;
  p.block_height = args.a.block_height;
  p.block_width = args.a.block_width;
  p.b = args.b.data;
  p.ldb = args.b.ld;
  p.c = args.c.data;
  p.ldc = args.c.ld;
  p.c_col_major = args.c.layout == BSRMM_LAYOUT_COL_MAJOR;
  p.c_vector_ok = aligned_to(args.c.data, 16) && args.c.ld % Cfg::kVector == 0;
  p.n = args.c.cols;
  p.alpha = typename Cfg::Acc(args.alpha);
  p.beta = typename Cfg::Acc(args.beta);
  p.bias = args.bias;
  p.activation = args.activation;

  const int64_t slices = args.a.block_height / Cfg::kBM;
  const int64_t slots = args.a.block_row_count * slices;
  const int64_t n_tiles = (args.c.cols + Cfg::kBN - 1) / Cfg::kBN;
  p.schedule.row_order = args.a.row_order;
  p.schedule.slices = int32_t(slices);
  p.schedule.slot_count = int32_t(slots);
  p.schedule.n_tiles = int32_t(n_tiles);
  p.schedule.group_rows = int32_t(std::min<int64_t>(16, slots));

  const auto kernel = &tensorop_matmul_kernel<Cfg>;
  if constexpr (Cfg::kSmemBytes > 48 * 1024) {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    allow_dynamic_smem(kernel, Cfg::kSmemBytes, device);
  }
  kernel<<<unsigned(slots * n_tiles), Cfg::kThreads, Cfg::kSmemBytes,
           static_cast<cudaStream_t>(args.stream)>>>(p);
  check_launch("sm80 tensorop_matmul_kernel");
}

template <class Cfg>
int tensorop_preference(const MatmulArgs& args, const DeviceTraits& device) {
  // Accumulator registers: 4 per m16n8 tile, two per f64 one.
  const TileShape shape{Cfg::kBM, Cfg::kBN, Cfg::kThreads, Cfg::kSmemBytes,
                        Cfg::kMmaRows * Cfg::kMmaCols * 4 * int(sizeof(typename Cfg::Acc) / 4)};
  return preference(shape, args, device);
}

template <class Cfg>
Variant tensorop_variant() {
  return Variant{tensorop_name<Cfg>(), &tensorop_supports<Cfg>, &tensorop_launch<Cfg>,
                 &tensorop_preference<Cfg>};
}

}  // namespace bsrmm::cuda::sm80
