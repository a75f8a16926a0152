// loads of the mma.sync SDDMM: one pipeline stage's global -> shared copies, 16 bytes per
// cp.async (sm80/cp_async.cuh), into the layouts sm80's WarpMma reads: the tile's BM rows of X
// as KC-long T slices (X row-major) or KC rows of BM (X column-major, x_col_major.cuh), and its
// BN columns of Y as KC-long T slices (Y column-major) or KC rows of BN (Y row-major). T is a
// multiple of 8 (the kernel's condition), so a 16-byte chunk along T is wholly inside T or wholly
// past it; chunks past T are zero-filled and read nothing.
#pragma once

#include "../sm80/cp_async.cuh"
#include "sddmm_params.cuh"
#include "x_col_major.cuh"

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

template <class Cfg>
struct MmaLoads {
  using T = typename Cfg::T;
  static constexpr int V = Cfg::kVector;  // elements per 16-byte chunk
  static constexpr int kAChunks = Cfg::kBM * Cfg::kKC / V;
  static constexpr int kBChunks = Cfg::kBN * Cfg::kKC / V;

  const Params<T>& p;
  const T* x_tile;  // the tile's first row of X, t = 0
  const T* y_tile;  // the tile's first column of Y, t = 0

  __device__ MmaLoads(const Params<T>& params, const Frame& f)
      : p(params),
        x_tile(params.x + f.row0 * params.x_row_step),
        y_tile(params.y + f.col0 * params.y_col_step) {}

  __device__ void stage(T* a_stage, T* b_stage, int64_t t0) const {
    constexpr int kAPerLine = Cfg::kKC / V;
    if constexpr (XColMajor<Cfg>::value) {  // lines: one t each, BM-contiguous
      constexpr int kXPerLine = Cfg::kBM / V;
#pragma unroll 1
      for (int c = threadIdx.x; c < kAChunks; c += Cfg::kThreads) {
        const int line = c / kXPerLine;
        const int v = (c % kXPerLine) * V;
        const bool inside = t0 + line < p.t_count;
        sm80::cp_async_16(a_stage + line * Cfg::kAStride + v,
                    inside ? x_tile + (t0 + line) * p.x_t_step + v : p.x, inside ? 16 : 0);
      }
    } else {  // lines: rows of X, T-contiguous
#pragma unroll 1
      for (int c = threadIdx.x; c < kAChunks; c += Cfg::kThreads) {
        const int line = c / kAPerLine;
        const int v = (c % kAPerLine) * V;
        const bool inside = t0 + v < p.t_count;
        sm80::cp_async_16(a_stage + line * Cfg::kAStride + v,
                    inside ? x_tile + line * p.x_row_step + t0 + v : p.x, inside ? 16 : 0);
      }
    }
    if constexpr (Cfg::kBColMajor) {  // lines: columns of Y, T-contiguous
#pragma unroll 1
      for (int c = threadIdx.x; c < kBChunks; c += Cfg::kThreads) {
        const int line = c / kAPerLine;
        const int v = (c % kAPerLine) * V;
        const bool inside = t0 + v < p.t_count;
        sm80::cp_async_16(b_stage + line * Cfg::kBStride + v,
                    inside ? y_tile + line * p.y_col_step + t0 + v : p.y, inside ? 16 : 0);
      }
    } else {  // lines: rows of Y (one t each), BN-contiguous
      constexpr int kBPerLine = Cfg::kBN / V;
#pragma unroll 1
      for (int c = threadIdx.x; c < kBChunks; c += Cfg::kThreads) {
        const int line = c / kBPerLine;
        const int v = (c % kBPerLine) * V;
        const bool inside = t0 + line < p.t_count;
        sm80::cp_async_16(b_stage + line * Cfg::kBStride + v,
                    inside ? y_tile + (t0 + line) * p.y_t_step + v : p.y, inside ? 16 : 0);
      }
    }
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
