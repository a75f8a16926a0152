// Column-major X in the mma.sync SDDMM. A weight gradient dW = dY^T X hands the kernel dY^T, a
// transposed view of the row-major dY (tokens x outputs), so X is M-contiguous. Its stage is laid
// out the way sm80 lays out a row-major B: KC rows (one t each) of BM elements, and the warp reads
// its m16 x k16 A fragments with ldmatrix.trans, as sm80 reads row-major B's k16 x n8 ones. Only
// the A side changes: the B fragments, mma.sync products and accumulators are sm80::WarpMma's.
// (sm80's files are reused, never edited, and its step is private, so the B-fragment load below
// restates sm80/warp_mma.cuh's step_16bit for the one warp type that needs a different A load.)
#pragma once

#include "../sm80/ldmatrix.cuh"
#include "../sm80/warp_mma.cuh"

#include <cstdint>

namespace bsrmm::cuda::sddmm_kernels {

// sm80's tile config with X's stage as KC rows of BM, m-contiguous. +8 elements per row (16
// bytes): the 8 rows one ldmatrix.trans tile covers then start 16 bytes apart modulo 128
// (row strides of 48, 80, 144 and 272 bytes at BM 16 to 128), so they fall in distinct banks.
template <class Base>
struct XColMajorConfig : Base {
  using T = typename Base::T;
  static constexpr int kAStride = Base::kBM + 8;
  static constexpr int kAStageElements = Base::kKC * kAStride;
  static constexpr int kPipelineBytes =
      Base::kStages * (kAStageElements + Base::kBStageElements) * int(sizeof(T));
  static constexpr int kSmemBytes =
      kPipelineBytes > Base::kEpilogueBytes ? kPipelineBytes : Base::kEpilogueBytes;

  static_assert(Base::kBM % Base::kVector == 0 && kAStride % Base::kVector == 0,
                "16-byte cp.async chunks along M, each row 16-byte aligned");
  static_assert(Base::Traits::kMmaK == 16, "ldmatrix.trans moves 16-bit elements");
};

// Whether a config stages X column-major: sm80::TileConfig (row-major X) unless wrapped above.
template <class Cfg>
struct XColMajor {
  static constexpr bool value = false;
};
template <class Base>
struct XColMajor<XColMajorConfig<Base>> {
  static constexpr bool value = true;
};

// A fragment of m16n8k16, for lane (g = lane / 4, t = lane % 4): a[0] = (m g, k 2t..2t+1),
// a[1] = m + 8, a[2] = k + 8, a[3] = both. Stored k-major, the four 8 x 8 tiles are (k 0-7,
// m 0-7), (k 0-7, m 8-15), (k 8-15, m 0-7), (k 8-15, m 8-15); lane l gives row l % 8 of tile
// l / 8, and .trans hands each lane the k pair of its m.
template <class Cfg>
struct WarpMmaXColMajor : sm80::WarpMma<Cfg> {
  using Base = sm80::WarpMma<Cfg>;
  using T = typename Cfg::T;
  using Mma = typename Cfg::Traits::Mma;
  using Base::acc;
  using Base::lane;
  using Base::warp_m0;
  using Base::warp_n0;
  static constexpr int kRows = Base::kRows;
  static constexpr int kCols = Base::kCols;

  __device__ WarpMmaXColMajor(int warp, int lane_) : Base(warp, lane_) {}

  __device__ void step(const T* a_stage, const T* b_stage) {
#pragma unroll
    for (int kk = 0; kk < Cfg::kKC; kk += 16) {
      uint32_t a[kRows][4];
      uint32_t b[kCols][2];
#pragma unroll
      for (int i = 0; i < kRows; ++i)
        sm80::ldmatrix_x4_trans(a[i], a_stage + (kk + lane % 8 + (lane / 16) * 8) * Cfg::kAStride +
                                          warp_m0 + i * 16 + ((lane / 8) % 2) * 8);
#pragma unroll
      for (int pair = 0; pair < kCols / 2; ++pair) load_b_pair(b, b_stage, kk, pair);
#pragma unroll
      for (int i = 0; i < kRows; ++i)
#pragma unroll
        for (int j = 0; j < kCols; ++j) Mma::run(acc[i][j], a[i], b[j]);
    }
  }

 private:
  // Two n8 tiles of B (sm80/warp_mma.cuh's step_16bit, either layout of Y).
  __device__ void load_b_pair(uint32_t (&b)[kCols][2], const T* b_stage, int kk, int pair) const {
    uint32_t r[4];
    const int n = warp_n0 + pair * 16;
    if constexpr (Cfg::kBColMajor)
      sm80::ldmatrix_x4(r, b_stage + (n + lane % 8 + (lane / 16) * 8) * Cfg::kBStride + kk +
                               ((lane / 8) % 2) * 8);
    else
      sm80::ldmatrix_x4_trans(r, b_stage + (kk + lane % 16) * Cfg::kBStride + n + (lane / 16) * 8);
    b[2 * pair][0] = r[0];
    b[2 * pair][1] = r[1];
    b[2 * pair + 1][0] = r[2];
    b[2 * pair + 1][1] = r[3];
  }
};

}  // namespace bsrmm::cuda::sddmm_kernels
