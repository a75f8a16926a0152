// The register tile of the CPU SDDMM: MR rows of X times NR columns of Y, each output a dot
// product over a span of T. Both operands are T-contiguous panels (X's rows, Y's columns), so
// the loop runs along T in whole 32-byte vectors (8 f32 / 4 f64 lanes: one AVX2 register, two
// SSE ones in the baseline clone) and reduces the lanes once per span.
// NOTES: 2 x 4 keeps 8 accumulators, 4 Y vectors and 2 X vectors in AVX2's 16 registers
// (6 loads per 8 FMAs); block sides that are multiples of 2 and 4 (most) never meet an edge.
#pragma once

#include "isa_clones.hpp"

#include <cstdint>

namespace bsrmm::cpu::sddmm_tile {

template <typename C>
struct Lanes;
// Unaligned is the vector type with its element's alignment: loading one is a single unaligned
// vector load (a memcpy into a Vector may be split into halves whose store-to-load forwarding
// fails).
template <>
struct Lanes<float> {
  typedef float Vector __attribute__((vector_size(32)));
  typedef float Unaligned __attribute__((vector_size(32), aligned(4)));
  static constexpr int count = 8;
};
template <>
struct Lanes<double> {
  typedef double Vector __attribute__((vector_size(32)));
  typedef double Unaligned __attribute__((vector_size(32), aligned(8)));
  static constexpr int count = 4;
};

constexpr int tile_rows = 2;
constexpr int tile_cols = 4;

// Unaligned: panels read in place keep the caller's ld. (An out-parameter, not a return value:
// returning a 32-byte vector from a function compiled for the baseline changes its ABI.)
template <typename C>
BSRMM_CPU_INLINE void load(typename Lanes<C>::Vector& v, const C* from) {
  v = *reinterpret_cast<const typename Lanes<C>::Unaligned*>(from);
}

// out[i * ldo + j] += sum over t < count of x[i * ldx + t] * y[j * ldy + t], i < MR, j < NR.
template <typename C, int MR, int NR>
BSRMM_CPU_INLINE void dot_tile(const C* x, int64_t ldx, const C* y, int64_t ldy, int64_t count,
                               C* out, int64_t ldo) {
  using V = typename Lanes<C>::Vector;
  constexpr int W = Lanes<C>::count;
  V acc[MR][NR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) acc[i][j] = V{};
  int64_t t = 0;
  for (; t + W <= count; t += W) {
    V yv[NR];
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) load<C>(yv[j], y + j * ldy + t);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      V xv;
      load<C>(xv, x + i * ldx + t);
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) acc[i][j] += xv * yv[j];
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      C sum = 0;
      for (int l = 0; l < W; ++l) sum += acc[i][j][l];
      for (int64_t r = t; r < count; ++r) sum += x[i * ldx + r] * y[j * ldy + r];
      out[i * ldo + j] += sum;
    }
  }
}

// dot_tile for an edge tile of `rows` <= MR, `cols` <= NR (compile-time shapes only).
template <typename C, int MR>
BSRMM_CPU_INLINE void dot_tile_cols(int cols, const C* x, int64_t ldx, const C* y, int64_t ldy,
                                    int64_t count, C* out, int64_t ldo) {
  switch (cols) {
    case 4: dot_tile<C, MR, 4>(x, ldx, y, ldy, count, out, ldo); break;
    case 3: dot_tile<C, MR, 3>(x, ldx, y, ldy, count, out, ldo); break;
    case 2: dot_tile<C, MR, 2>(x, ldx, y, ldy, count, out, ldo); break;
    default: dot_tile<C, MR, 1>(x, ldx, y, ldy, count, out, ldo); break;
  }
}

static_assert(tile_rows == 2 && tile_cols == 4, "dot_tile_any covers 1..2 x 1..4");

template <typename C>
BSRMM_CPU_INLINE void dot_tile_any(int rows, int cols, const C* x, int64_t ldx, const C* y,
                                   int64_t ldy, int64_t count, C* out, int64_t ldo) {
  if (rows == 2) {
    dot_tile_cols<C, 2>(cols, x, ldx, y, ldy, count, out, ldo);
  } else {
    dot_tile_cols<C, 1>(cols, x, ldx, y, ldy, count, out, ldo);
  }
}

// out (bh x bw, ld bw) += X rows [0, bh) . Y columns [0, bw) over t < count.
template <typename C>
BSRMM_CPU_INLINE void dot_block(int32_t bh, int32_t bw, const C* x, int64_t ldx, const C* y,
                                int64_t ldy, int64_t count, C* out) {
  for (int32_t i = 0; i < bh; i += tile_rows) {
    const int rows = bh - i < tile_rows ? bh - i : tile_rows;
    for (int32_t j = 0; j < bw; j += tile_cols) {
      const int cols = bw - j < tile_cols ? bw - j : tile_cols;
      const C* xi = x + int64_t{i} * ldx;
      const C* yj = y + int64_t{j} * ldy;
      C* o = out + int64_t{i} * bw + j;
      if (rows == tile_rows && cols == tile_cols) {
        dot_tile<C, tile_rows, tile_cols>(xi, ldx, yj, ldy, count, o, bw);
      } else {
        dot_tile_any<C>(rows, cols, xi, ldx, yj, ldy, count, o, bw);
      }
    }
  }
}

}  // namespace bsrmm::cpu::sddmm_tile
