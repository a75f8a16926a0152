// The register-tiled loop nest of cpu_blocked_simd, written once for every instruction set:
// Tile<T, VectorBytes, MR, NV> computes MR rows of C x NV vectors of columns per micro-tile.
// Included by one translation unit per instruction set, each compiling it for its target
// (blocked_rows.cpp: target_clones AVX2 / baseline; blocked_rows_avx512.cpp: AVX-512). Its
// contents have internal linkage on purpose: two TUs' copies are different machine code and
// must never be merged by the linker. Headers a TU shares with the rest of the library are
// included before it switches target, so their inline functions keep the baseline ISA.
#pragma once

#include "../common/half.hpp"
#include "../common/limits.hpp"
#include "blocked_rows.hpp"
#include "epilogue.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#define BSRMM_INLINE inline __attribute__((always_inline))

namespace bsrmm::cpu {
namespace {  // NOLINT: per-TU copies, see above

// PanelRows: the tallest block the tile serves (the accumulator panel's height).
template <typename T, int VectorBytes, int MR, int NV, int PanelRows = detail::max_block_side>
struct Tile {
  static constexpr int lanes = VectorBytes / static_cast<int>(sizeof(T));
  static constexpr int cols = NV * lanes;  // the packed strip width
  // `vec` for arithmetic; `unaligned` for loads and stores anywhere (element alignment, may
  // alias the element type).
  typedef T vec __attribute__((vector_size(VectorBytes)));
  typedef T unaligned __attribute__((vector_size(VectorBytes), aligned(sizeof(T)), may_alias));

  // tile[mr x nv vectors] (+)= sum over `count` blocks and k of A[i0 + m][k] * B[col * bw + k][j0..]:
  // `a` points at row i0 of the first block, `b` at column j0 of B's first row, `tile` (rows
  // `cols` apart) holds the running sums when `accumulate`.
  template <int mr, int nv>
  static BSRMM_INLINE void micro(bool accumulate, const T* a, const int32_t* col, int32_t count,
                                 int64_t block_stride, int32_t bw, const T* b, int64_t ldb, T* tile) {
    // Fully unrolled so the accumulators live in registers for the whole block row.
    vec acc[mr][nv];
#pragma GCC unroll 16
    for (int m = 0; m < mr; ++m) {
#pragma GCC unroll 16
      for (int v = 0; v < nv; ++v) {
        acc[m][v] = accumulate ? vec(*reinterpret_cast<const unaligned*>(tile + m * cols + v * lanes)) : vec{};
      }
    }
    for (int32_t p = 0; p < count; ++p) {
      const T* block = a + p * block_stride;
      const T* panel = b + int64_t{col[p]} * bw * ldb;
      for (int32_t k = 0; k < bw; ++k) {
        const T* b_row = panel + k * ldb;
        vec bv[nv];
#pragma GCC unroll 16
        for (int v = 0; v < nv; ++v) bv[v] = *reinterpret_cast<const unaligned*>(b_row + v * lanes);
#pragma GCC unroll 16
        for (int m = 0; m < mr; ++m) {
          const T s = block[m * bw + k];
#pragma GCC unroll 16
          for (int v = 0; v < nv; ++v) acc[m][v] += s * bv[v];
        }
      }
    }
#pragma GCC unroll 16
    for (int m = 0; m < mr; ++m) {
#pragma GCC unroll 16
      for (int v = 0; v < nv; ++v) *reinterpret_cast<unaligned*>(tile + m * cols + v * lanes) = acc[m][v];
    }
  }

  template <int mr, int nv>
  static BSRMM_INLINE void micro_nv(int want_nv, bool accumulate, const T* a, const int32_t* col,
                                    int32_t count, int64_t block_stride, int32_t bw, const T* b,
                                    int64_t ldb, T* tile) {
    if constexpr (nv > 1) {
      if (want_nv < nv) {
        micro_nv<mr, nv - 1>(want_nv, accumulate, a, col, count, block_stride, bw, b, ldb, tile);
        return;
      }
    }
    micro<mr, nv>(accumulate, a, col, count, block_stride, bw, b, ldb, tile);
  }

  template <int mr>
  static BSRMM_INLINE void micro_any(int want_mr, int want_nv, bool accumulate, const T* a,
                                     const int32_t* col, int32_t count, int64_t block_stride,
                                     int32_t bw, const T* b, int64_t ldb, T* tile) {
    if constexpr (mr > 1) {
      if (want_mr < mr) {
        micro_any<mr - 1>(want_mr, want_nv, accumulate, a, col, count, block_stride, bw, b, ldb, tile);
        return;
      }
    }
    micro_nv<mr, NV>(want_nv, accumulate, a, col, count, block_stride, bw, b, ldb, tile);
  }

  // Rows of B taken per pass down a block row: their strip (rows x cols) is ~12 KiB, so it
  // stays in L1 while every micro-tile of the block row reuses it.
  static constexpr int32_t strip_rows = 12 * 1024 / (cols * static_cast<int32_t>(sizeof(T)));

  // Where the N = 1 row paths put a block row's sums: C's single column (strided by its
  // layout), with alpha, beta (C read only when beta != 0), the bias and the activation.
  template <typename S>
  struct RowOutput {
    S* y;
    int64_t step;
    const S* bias;
    T alpha, beta;
    bool read_c;
    bsrmm_activation activation;

    explicit RowOutput(const BlockedProblem& problem)
        : y(static_cast<S*>(problem.c.data)),
          step(problem.c.layout == BSRMM_LAYOUT_ROW_MAJOR ? problem.c.ld : 1),
          bias(static_cast<const S*>(problem.bias)),
          alpha(static_cast<T>(problem.alpha)),
          beta(static_cast<T>(problem.beta)),
          read_c(problem.beta != 0.0),
          activation(problem.activation) {}

    BSRMM_INLINE void store(int64_t row, T sum) const {
      T value = alpha * sum;
      if (read_c) value += beta * load(y[row * step]);
      if (bias) value += load(bias[row]);
      y[row * step] = detail::Store<S>::from(activate(value, activation));
    }
  };

  template <typename S>
  static BSRMM_INLINE T load(S x) {
    if constexpr (std::is_same_v<S, detail::f16_t> || std::is_same_v<S, detail::bf16_t>) {
      return detail::to_float(x);
    } else {
      return static_cast<T>(x);
    }
  }

  // Writes rows x cols of the tile into C at (row0, col0) through the epilogue; C elements are S.
  template <typename S>
  static BSRMM_INLINE void store(const T* tile, int rows, int count, const BlockedProblem& problem,
                                 int64_t row0, int64_t col0) {
    const bsrmm_dense& c = problem.c;
    S* out = static_cast<S*>(c.data);
    const T alpha = static_cast<T>(problem.alpha);
    const T beta = static_cast<T>(problem.beta);
    const bool read_c = problem.beta != 0.0;
    const bool row_major = c.layout == BSRMM_LAYOUT_ROW_MAJOR;
    if constexpr (std::is_same_v<S, T>) {
      // The common epilogue (C row-major in the compute type, no bias, no activation) as plain
      // loops the compiler vectorises: at tiny blocks the store is a large part of the work.
      if (row_major && problem.bias == nullptr && problem.activation == BSRMM_ACTIVATION_NONE) {
        for (int m = 0; m < rows; ++m) {
          T* to = out + (row0 + m) * c.ld + col0;
          const T* from = tile + m * cols;
          if (read_c) {
            for (int j = 0; j < count; ++j) to[j] = alpha * from[j] + beta * to[j];
          } else {
            for (int j = 0; j < count; ++j) to[j] = alpha * from[j];
          }
        }
        return;
      }
    }
    const auto at = [&](int m, int64_t j) {
      return row_major ? (row0 + m) * c.ld + col0 + j : (col0 + j) * c.ld + row0 + m;
    };
    const auto value = [&](int m, int64_t j) {
      T v = alpha * tile[m * cols + j];
      if (read_c) v += beta * load(out[at(m, j)]);
      if (problem.bias) v += load(static_cast<const S*>(problem.bias)[row0 + m]);
      return v;
    };
    if constexpr (stores_activated<T, S>()) {
      if (smooth_activation(problem.activation)) return store_activated(out, rows, count, value, at, problem.activation);
    }
    for (int m = 0; m < rows; ++m)
      for (int j = 0; j < count; ++j) out[at(m, j)] = detail::Store<S>::from(activate(value(m, j), problem.activation));
  }

  template <typename S>
  static BSRMM_INLINE void rows(const BlockedProblem& problem, int64_t row_begin, int64_t row_end,
                                int64_t col_begin, int64_t col_end) {
    const int32_t bh = problem.block_height;
    const int32_t bw = problem.block_width;
    const int64_t block_stride = int64_t{bh} * bw;
    const T* values = static_cast<const T*>(problem.a_values);
    const T* b = static_cast<const T*>(problem.b);
    const int64_t k_rows = problem.b_rows;
    const int64_t n = problem.c.cols;
    // The block row's accumulators for one column strip: written by the micro-tiles pass after
    // pass, then once through the epilogue.
    alignas(64) T panel[PanelRows * cols];
    const int32_t blocks_per_pass = std::max<int32_t>(1, strip_rows / bw);

    for (int64_t r = row_begin; r < row_end; ++r) {
      const int32_t first = problem.row_ptr[r];
      const int32_t count = problem.row_ptr[r + 1] - first;
      const T* row_values = values + first * block_stride;
      const int32_t* col = problem.col_idx + first;
      for (int64_t j0 = col_begin; j0 < col_end; j0 += cols) {
        const int nv = static_cast<int>(std::min<int64_t>(cols, col_end - j0) + lanes - 1) / lanes;
        const int stored = static_cast<int>(std::min<int64_t>(nv * lanes, n - j0));
        if (stored <= 0) break;
        // The strip's rows are contiguous and only as wide as the strip: no cache-set conflicts
        // from a power-of-two leading dimension, and the hardware prefetcher sees one stream.
        // No blocks, no staged B (b may be NULL, and NULL + offset is undefined).
        const T* strip = count == 0 ? nullptr : b + j0 * (problem.b_in_place ? 1 : k_rows);
        const int64_t ldb = problem.b_in_place ? problem.b_ld : std::min<int64_t>(cols, problem.b_width - j0);
        if (count == 0) std::fill(panel, panel + int64_t{bh} * cols, T(0));
        for (int32_t pass = 0; pass < count; pass += blocks_per_pass) {
          const int32_t blocks = std::min(blocks_per_pass, count - pass);
          for (int32_t i0 = 0; i0 < bh; i0 += MR) {
            micro_any<MR>(std::min(MR, bh - i0), nv, pass > 0,
                          row_values + pass * block_stride + int64_t{i0} * bw, col + pass, blocks,
                          block_stride, bw, strip, ldb, panel + int64_t{i0} * cols);
          }
        }
        store<S>(panel, bh, stored, problem, r * bh, j0);
      }
    }
  }

  // N = 1 (a matrix-vector product): problem.b is B's one column in the compute type,
  // contiguous (b_rows elements), problem.col_idx B's own block columns. Each block row's
  // outputs are summed block by block: A is streamed once, which is what bounds it. BH, BW > 0:
  // the block's shape, known here, so tiny blocks (3 x 3) unroll completely; 0: any, each row
  // then a vector dot product when the width is unknown too.
  // Blocks whose width divides the vector (a power of two) and whose height fills whole vectors:
  // a block is BH / (lanes / BW) vector loads, multiplied by its B segment repeated across the
  // vector, so a 4x4 f64 block is 2 FMAs instead of 16 (the scalar form was compute-bound:
  // 27-point stencil, 4x4 f64, N = 1 in cache 3.8 ns a block, from memory 6.1).
  template <int BH, int BW>
  static constexpr bool whole_vectors() {
    return BH > 0 && BW > 0 && (BW & (BW - 1)) == 0 && lanes % BW == 0 && BH % (lanes / BW) == 0;
  }

  template <int W, size_t... L>
  static BSRMM_INLINE vec repeated(const T* segment, std::index_sequence<L...> lanes_sequence) {
#if defined(BSRMM_CPU_AVX512_TU)
    // GCC builds the generic shuffle below through the stack (a 64-byte zeroed slot, the part
    // stored into it, the vector reloaded: a failed store forward per block, which bounded the
    // 4x4 f32 stencil at N = 1 at a third of MKL's speed; entry 46): one broadcast instead.
    // (The zero-masking forms: the plain ones start from an undefined vector GCC warns about.)
    if constexpr (VectorBytes == 64) {
      if constexpr (std::is_same_v<T, float> && W == 4)
        return vec(_mm512_maskz_broadcast_f32x4(__mmask16(0xFFFF), _mm_loadu_ps(segment)));
      if constexpr (std::is_same_v<T, float> && W == 8)
        return vec(_mm512_maskz_broadcast_f32x8(__mmask16(0xFFFF), _mm256_loadu_ps(segment)));
      if constexpr (std::is_same_v<T, double> && W == 2)
        return vec(_mm512_maskz_broadcast_f64x2(__mmask8(0xFF), _mm_loadu_pd(segment)));
      if constexpr (std::is_same_v<T, double> && W == 4)
        return vec(_mm512_maskz_broadcast_f64x4(__mmask8(0xFF), _mm256_loadu_pd(segment)));
    }
#endif
    return repeated_generic<W>(segment, lanes_sequence);
  }

  template <int W, size_t... L>
  static BSRMM_INLINE vec repeated_generic(const T* segment, std::index_sequence<L...>) {
    typedef T part __attribute__((vector_size(W * sizeof(T))));
    typedef T part_unaligned __attribute__((vector_size(W * sizeof(T)), aligned(sizeof(T)), may_alias));
    const part p = *reinterpret_cast<const part_unaligned*>(segment);
    return __builtin_shufflevector(p, p, (L % W)...);
  }

  template <typename S, int BH, int BW>
  static BSRMM_INLINE void vector_rows(const BlockedProblem& problem, int64_t row_begin, int64_t row_end) {
    if constexpr (whole_vectors<BH, BW>()) {
      vector_rows_whole<S, BH, BW>(problem, row_begin, row_end);
      return;
    }
    if constexpr (BH == 2 && BW == 2) {
      vector_rows_2x2<S>(problem, row_begin, row_end);
      return;
    }
    const int32_t bh = BH > 0 ? BH : problem.block_height;
    const int32_t bw = BW > 0 ? BW : problem.block_width;
    const int64_t block = int64_t{bh} * bw;
    const T* values = static_cast<const T*>(problem.a_values);
    const T* x = static_cast<const T*>(problem.b);
    const RowOutput<S> out(problem);
    T sum[detail::max_block_side];
    for (int64_t r = row_begin; r < row_end; ++r) {
      std::fill(sum, sum + bh, T(0));
      for (int32_t p = problem.row_ptr[r]; p < problem.row_ptr[r + 1]; ++p) {
        const T* segment = x + int64_t{problem.col_idx[p]} * bw;
        const T* v = values + p * block;
        if constexpr (BH > 0 && BW > 0) {
          // The whole block unrolled: sums stay in registers across the row's blocks.
#pragma GCC unroll 8
          for (int i = 0; i < BH; ++i) {
            T s = T(0);
#pragma GCC unroll 8
            for (int k = 0; k < BW; ++k) s += v[i * BW + k] * segment[k];
            sum[i] += s;
          }
        } else if constexpr (BW > 0) {
          for (int32_t i = 0; i < bh; ++i) {
            T s = T(0);
#pragma GCC unroll 8
            for (int k = 0; k < BW; ++k) s += v[i * BW + k] * segment[k];
            sum[i] += s;
          }
        } else {
          for (int32_t i = 0; i < bh; ++i) sum[i] += dot(v + int64_t{i} * bw, segment, bw);
        }
      }
      for (int32_t i = 0; i < bh; ++i) {
        const int64_t row = r * bh + i;
        out.store(row, sum[i]);
      }
    }
  }

  template <typename S, int BH, int BW>
  static BSRMM_INLINE void vector_rows_whole(const BlockedProblem& problem, int64_t row_begin,
                                             int64_t row_end) {
    constexpr int per_vector = lanes / BW;  // block rows per vector
    constexpr int vectors = BH / per_vector;
    const T* values = static_cast<const T*>(problem.a_values);
    const T* x = static_cast<const T*>(problem.b);
    const RowOutput<S> out(problem);
    for (int64_t r = row_begin; r < row_end; ++r) {
      vec acc[vectors];
#pragma GCC unroll 16
      for (int q = 0; q < vectors; ++q) acc[q] = vec{};
      for (int32_t p = problem.row_ptr[r]; p < problem.row_ptr[r + 1]; ++p) {
        const vec xx = repeated<BW>(x + int64_t{problem.col_idx[p]} * BW, std::make_index_sequence<lanes>());
        const T* v = values + int64_t{p} * (BH * BW);
#pragma GCC unroll 16
        for (int q = 0; q < vectors; ++q) acc[q] += vec(*reinterpret_cast<const unaligned*>(v + q * lanes)) * xx;
      }
#pragma GCC unroll 16
      for (int q = 0; q < vectors; ++q) {
#pragma GCC unroll 16
        for (int part = 0; part < per_vector; ++part) {
          T sum = T(0);
#pragma GCC unroll 16
          for (int k = 0; k < BW; ++k) sum += acc[q][part * BW + k];
          const int64_t row = r * BH + q * per_vector + part;
          out.store(row, sum);
        }
      }
    }
  }

  // Blocks a whole number of vectors wide (64 x 64 f32, 16 x 16 f64, ...): each row's products
  // go into one vector per row, kept across the block row's blocks and reduced once per row at
  // the end instead of once per block (a 64 x 64 f32 block at N = 1 spent more on its 64
  // horizontal sums than on its 256 FMAs: 0.93 ms against MKL BSR's 0.79 on one core; entry 53).
  // A is still streamed in order; the row vectors live in L1.
  // 2 x 2 blocks: a block is one 4-element vector times its B pair repeated ({x0, x1, x0, x1}),
  // summed across the block row and reduced pairwise at its end. The scalar form spent ~13
  // instructions a block (2x2 f32 banded 4096^2 N = 1: 12.9 us, scipy CSR 13.0; entry 53).
  template <typename S>
  static void vector_rows_2x2(const BlockedProblem& problem, int64_t row_begin, int64_t row_end) {
    typedef T quad __attribute__((vector_size(4 * sizeof(T))));
    typedef T quad_unaligned __attribute__((vector_size(4 * sizeof(T)), aligned(sizeof(T)), may_alias));
    typedef T pair __attribute__((vector_size(2 * sizeof(T))));
    typedef T pair_unaligned __attribute__((vector_size(2 * sizeof(T)), aligned(sizeof(T)), may_alias));
    const T* values = static_cast<const T*>(problem.a_values);
    const T* x = static_cast<const T*>(problem.b);
    const RowOutput<S> out(problem);
    for (int64_t r = row_begin; r < row_end; ++r) {
      quad acc{};
      for (int32_t p = problem.row_ptr[r]; p < problem.row_ptr[r + 1]; ++p) {
        const pair xs = *reinterpret_cast<const pair_unaligned*>(x + int64_t{problem.col_idx[p]} * 2);
        acc += quad(*reinterpret_cast<const quad_unaligned*>(values + int64_t{p} * 4)) *
               __builtin_shufflevector(xs, xs, 0, 1, 0, 1);
      }
      const T sums[2] = {acc[0] + acc[1], acc[2] + acc[3]};
      for (int i = 0; i < 2; ++i) {
        const int64_t row = r * 2 + i;
        out.store(row, sums[i]);
      }
    }
  }

  template <typename S>
  static void vector_rows_wide(const BlockedProblem& problem, int64_t row_begin, int64_t row_end) {
    const int32_t bh = problem.block_height;
    const int32_t bw = problem.block_width;
    const int32_t vectors = bw / lanes;
    const int64_t block = int64_t{bh} * bw;
    const T* values = static_cast<const T*>(problem.a_values);
    const T* x = static_cast<const T*>(problem.b);
    const RowOutput<S> out(problem);
    vec acc[detail::max_block_side];
    for (int64_t r = row_begin; r < row_end; ++r) {
      for (int32_t i = 0; i < bh; ++i) acc[i] = vec{};
      for (int32_t p = problem.row_ptr[r]; p < problem.row_ptr[r + 1]; ++p) {
        const T* segment = x + int64_t{problem.col_idx[p]} * bw;
        const T* v = values + p * block;
        for (int32_t i = 0; i < bh; ++i) {
          const T* row = v + int64_t{i} * bw;
          vec s = acc[i];
#pragma GCC unroll 4
          for (int32_t q = 0; q < vectors; ++q)
            s += vec(*reinterpret_cast<const unaligned*>(row + q * lanes)) *
                 vec(*reinterpret_cast<const unaligned*>(segment + q * lanes));
          acc[i] = s;
        }
      }
      for (int32_t i = 0; i < bh; ++i) {
        T sum = T(0);
#pragma GCC unroll 16
        for (int l = 0; l < lanes; ++l) sum += acc[i][l];
        const int64_t row = r * bh + i;
        out.store(row, sum);
      }
    }
  }

  // sum of a[k] * b[k] over k < count, in vectors (two chains) and a scalar tail.
  static BSRMM_INLINE T dot(const T* a, const T* b, int32_t count) {
    vec s0{}, s1{};
    int32_t k = 0;
    for (; k + 2 * lanes <= count; k += 2 * lanes) {
      s0 += vec(*reinterpret_cast<const unaligned*>(a + k)) * vec(*reinterpret_cast<const unaligned*>(b + k));
      s1 += vec(*reinterpret_cast<const unaligned*>(a + k + lanes)) *
            vec(*reinterpret_cast<const unaligned*>(b + k + lanes));
    }
    if (k + lanes <= count) {
      s0 += vec(*reinterpret_cast<const unaligned*>(a + k)) * vec(*reinterpret_cast<const unaligned*>(b + k));
      k += lanes;
    }
    s0 += s1;
    T total = T(0);
#pragma GCC unroll 16
    for (int l = 0; l < lanes; ++l) total += s0[l];
    for (; k < count; ++k) total += a[k] * b[k];
    return total;
  }

  template <typename S>
  static BSRMM_INLINE void vector_rows_any(const BlockedProblem& problem, int64_t row_begin, int64_t row_end) {
    const int32_t bh = problem.block_height;
    switch (problem.block_width) {
      case 1: return bh == 1 ? vector_rows<S, 1, 1>(problem, row_begin, row_end) : vector_rows<S, 0, 1>(problem, row_begin, row_end);
      case 2: return bh == 2 ? vector_rows<S, 2, 2>(problem, row_begin, row_end) : vector_rows<S, 0, 2>(problem, row_begin, row_end);
      case 3: return bh == 3 ? vector_rows<S, 3, 3>(problem, row_begin, row_end) : vector_rows<S, 0, 3>(problem, row_begin, row_end);
      case 4: return bh == 4 ? vector_rows<S, 4, 4>(problem, row_begin, row_end) : vector_rows<S, 0, 4>(problem, row_begin, row_end);
      case 5: return bh == 5 ? vector_rows<S, 5, 5>(problem, row_begin, row_end) : vector_rows<S, 0, 5>(problem, row_begin, row_end);
      case 6: return bh == 6 ? vector_rows<S, 6, 6>(problem, row_begin, row_end) : vector_rows<S, 0, 6>(problem, row_begin, row_end);
      case 7: return bh == 7 ? vector_rows<S, 7, 7>(problem, row_begin, row_end) : vector_rows<S, 0, 7>(problem, row_begin, row_end);
      case 8: return bh == 8 ? vector_rows<S, 8, 8>(problem, row_begin, row_end) : vector_rows<S, 0, 8>(problem, row_begin, row_end);
      default:
        if (problem.block_width % lanes == 0) return vector_rows_wide<S>(problem, row_begin, row_end);
        return vector_rows<S, 0, 0>(problem, row_begin, row_end);
    }
  }

  // The N = 1 entries (col_begin / col_end unused).
  static BSRMM_INLINE void vector_rows_by_output(const BlockedProblem& problem, int64_t row_begin,
                                                 int64_t row_end, int64_t, int64_t) {
    if constexpr (sizeof(T) == 8) {
      vector_rows_any<double>(problem, row_begin, row_end);
    } else {
      switch (problem.c.dtype) {
        case BSRMM_DTYPE_F16: vector_rows_any<detail::f16_t>(problem, row_begin, row_end); break;
        case BSRMM_DTYPE_BF16: vector_rows_any<detail::bf16_t>(problem, row_begin, row_end); break;
        default: vector_rows_any<float>(problem, row_begin, row_end); break;
      }
    }
  }

  // The f32 entry (C in f32, f16 or bf16) and the f64 one.
  static BSRMM_INLINE void rows_by_output(const BlockedProblem& problem, int64_t row_begin,
                                          int64_t row_end, int64_t col_begin, int64_t col_end) {
    if constexpr (sizeof(T) == 8) {
      rows<double>(problem, row_begin, row_end, col_begin, col_end);
    } else {
      switch (problem.c.dtype) {
        case BSRMM_DTYPE_F16: rows<detail::f16_t>(problem, row_begin, row_end, col_begin, col_end); break;
        case BSRMM_DTYPE_BF16: rows<detail::bf16_t>(problem, row_begin, row_end, col_begin, col_end); break;
        default: rows<float>(problem, row_begin, row_end, col_begin, col_end); break;
      }
    }
  }
};

}  // namespace
}  // namespace bsrmm::cpu
