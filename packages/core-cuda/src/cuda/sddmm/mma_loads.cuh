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
    if constexpr (XColMajor<Cfg>::value) {  // lines: one t each, BM-contiguous
      copy_t_lines<kAChunks, Cfg::kBM, Cfg::kAStride>(a_stage, x_tile, p.x_t_step, t0, p.x);
    } else {  // lines: rows of X, T-contiguous
      copy_along_t<kAChunks, Cfg::kAStride>(a_stage, x_tile, p.x_row_step, t0, p.x);
    }
    if constexpr (Cfg::kBColMajor) {  // lines: columns of Y, T-contiguous
      copy_along_t<kBChunks, Cfg::kBStride>(b_stage, y_tile, p.y_col_step, t0, p.y);
    } else {  // lines: rows of Y (one t each), BN-contiguous
      copy_t_lines<kBChunks, Cfg::kBN, Cfg::kBStride>(b_stage, y_tile, p.y_t_step, t0, p.y);
    }
  }

  // kChunks chunks of an operand whose tile lines (rows of X, columns of Y) are T-contiguous and
  // `line_step` apart: a stage line (kStride apart in shared memory) holds one line's KC-long T
  // slice from t0. `any` is a valid address for the zero-filling copies past T.
  template <int kChunks, int kStride>
  __device__ void copy_along_t(T* stage, const T* tile, int64_t line_step, int64_t t0, const T* any) const {
    constexpr int kPerLine = Cfg::kKC / V;
#pragma unroll 1
    for (int c = threadIdx.x; c < kChunks; c += Cfg::kThreads) {
      const int line = c / kPerLine;
      const int v = (c % kPerLine) * V;
      const bool inside = t0 + v < p.t_count;
      sm80::cp_async_16(stage + line * kStride + v, inside ? tile + line * line_step + t0 + v : any,
                        inside ? 16 : 0);
    }
  }

  // kChunks chunks of an operand stored one t per line (X column-major, Y row-major), lines
  // `t_step` apart and kLength (BM or BN) contiguous: a stage line holds t0 + line.
  template <int kChunks, int kLength, int kStride>
  __device__ void copy_t_lines(T* stage, const T* tile, int64_t t_step, int64_t t0, const T* any) const {
    constexpr int kPerLine = kLength / V;
#pragma unroll 1
    for (int c = threadIdx.x; c < kChunks; c += Cfg::kThreads) {
      const int line = c / kPerLine;
      const int v = (c % kPerLine) * V;
      const bool inside = t0 + line < p.t_count;
      sm80::cp_async_16(stage + line * kStride + v, inside ? tile + (t0 + line) * t_step + v : any,
                        inside ? 16 : 0);
    }
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
