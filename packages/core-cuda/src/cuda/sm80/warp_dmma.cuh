// One warp's f64 pipeline step on the DMMA tensor cores: per k4 slice, scalar 8-byte fragment
// loads from shared memory (one element per lane: ldmatrix moves 16-bit rows and does not fit),
// then two m8n8k4 products per m16n8 accumulator tile. Bank-conflict-free by the f64 strides
// of tile_config.cuh.
#pragma once

#include "mma.cuh"

namespace bsrmm::cuda::sm80 {

// acc[i][j]: the warp's m16n8 tile (i, j), laid out as mma.cuh says; warp_m0 / warp_n0: the
// warp's first row / column inside the CTA tile.
template <class Cfg, int Rows, int Cols>
__device__ inline void dmma_step(double (&acc)[Rows][Cols][4], const double* a_stage,
                                 const double* b_stage, int warp_m0, int warp_n0, int lane) {
  const int g = lane / 4;
  const int t = lane % 4;
#pragma unroll
  for (int kk = 0; kk < Cfg::kKC; kk += 4) {
    double a[Rows][2];
    double b[Cols];
#pragma unroll
    for (int i = 0; i < Rows; ++i) {
      const double* row = a_stage + (warp_m0 + i * 16 + g) * Cfg::kAStride + kk + t;
      a[i][0] = row[0];
      a[i][1] = row[8 * Cfg::kAStride];
    }
#pragma unroll
    for (int j = 0; j < Cols; ++j) {
      const int n = warp_n0 + j * 8 + g;
      b[j] = Cfg::kBColMajor ? b_stage[n * Cfg::kBStride + kk + t] : b_stage[(kk + t) * Cfg::kBStride + n];
    }
#pragma unroll
    for (int i = 0; i < Rows; ++i)
#pragma unroll
      for (int j = 0; j < Cols; ++j) MmaF64::run(acc[i][j], a[i], b[j]);
  }
}

}  // namespace bsrmm::cuda::sm80
