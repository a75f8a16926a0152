// The loop nest of cpu_rowwise_simd, for one instruction set: included by rowwise_avx512.cpp and
// rowwise_avx2.cpp under their target pragmas, after the header that defines that set's
// `RowVectors<T>` (rowwise_zmm.hpp, rowwise_ymm.hpp: vector type, lanes, masked loads and
// stores, the accumulator budget): for each block row, each of its blocks' columns k scales B's row
// (col * bw + k) into the block row's bh output rows, N in vectors held in registers, the last
// vector masked so any N (1, 2, 3, ...) reads and writes only its own columns. B is read in
// place (row-major, compute type, any leading dimension): no packing, no padding to a vector,
// no accumulator panel; the epilogue writes C straight from the registers. This is a CSR SpMM
// (each nonzero scales a B row into C's row) generalised to tiny blocks: at 1x1 - 8x8 blocks
// and small N the blocked kernel's fixed costs per block row (strips, panel, epilogue pass)
// were most of its time (issue 22; docs/perf-log.md entry 46).
// Internal linkage on purpose (as blocked_kernel.hpp): this is one TU's code for one ISA.
#pragma once

#include "../common/half.hpp"
#include "epilogue.hpp"
#include "rowwise.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#ifndef BSRMM_ROWWISE_INLINE
#define BSRMM_ROWWISE_INLINE inline __attribute__((always_inline))
#endif
#define BSRMM_ROWWISE_INLINE_LAMBDA __attribute__((always_inline))

namespace bsrmm::cpu {
namespace {  // NOLINT: per-TU code, see above

template <typename S>
BSRMM_ROWWISE_INLINE auto widen_c(S x) {
  if constexpr (std::is_same_v<S, detail::f16_t> || std::is_same_v<S, detail::bf16_t>) {
    return detail::to_float(x);
  } else {
    return x;
  }
}

// The general epilogue for one block row's chunk (any C dtype, layout, bias, activation): from
// `tile` (rows `stride` apart), rows row0.., columns col0..col0 + count.
template <typename T, typename S>
void store_general(const T* tile, int rows, int64_t stride, int64_t count, const RowwiseProblem& p,
                   int64_t row0, int64_t col0) {
  const bsrmm_dense& c = p.c;
  S* out = static_cast<S*>(c.data);
  const bool row_major = c.layout == BSRMM_LAYOUT_ROW_MAJOR;
  const T alpha = static_cast<T>(p.alpha);
  const T beta = static_cast<T>(p.beta);
  const auto at = [&](int m, int64_t j) {
    return row_major ? (row0 + m) * c.ld + col0 + j : (col0 + j) * c.ld + row0 + m;
  };
  const auto value = [&](int m, int64_t j) {
    T v = alpha * tile[m * stride + j];
    if (p.beta != 0.0) v += beta * static_cast<T>(widen_c(out[at(m, j)]));
    if (p.bias) v += static_cast<T>(widen_c(static_cast<const S*>(p.bias)[row0 + m]));
    return v;
  };
  if constexpr (stores_activated<T, S>()) {
    if (smooth_activation(p.activation)) return store_activated(out, rows, count, value, at, p.activation);
  }
  for (int m = 0; m < rows; ++m)
    for (int64_t j = 0; j < count; ++j) out[at(m, j)] = detail::Store<S>::from(activate(value(m, j), p.activation));
}

template <typename T>
void store_any(const T* tile, int rows, int64_t stride, int64_t count, const RowwiseProblem& p,
               int64_t row0, int64_t col0) {
  if constexpr (sizeof(T) == 8) {
    store_general<T, double>(tile, rows, stride, count, p, row0, col0);
  } else {
    switch (p.c.dtype) {
      case BSRMM_DTYPE_F16: store_general<T, detail::f16_t>(tile, rows, stride, count, p, row0, col0); break;
      case BSRMM_DTYPE_BF16: store_general<T, detail::bf16_t>(tile, rows, stride, count, p, row0, col0); break;
      default: store_general<T, float>(tile, rows, stride, count, p, row0, col0); break;
    }
  }
}

// Vectors per chunk: at most the set's accumulator budget (registers left for B and A), at
// most its widest chunk: a chunk re-walks its block row's B rows, so wide N over long rows wants
// few, wide chunks (2x2 power-law f64 N = 256 in 32-column chunks: 1.9x MKL BSR's time; entry 46).
template <typename Z>
constexpr int max_vectors(int bh) { return std::min(Z::max_chunk_vectors, Z::accumulators / bh); }

// C row-major in the compute type, no bias, no activation: BH rows x NV vectors of sums stored
// from registers at `c` (row stride ldc), alpha (and beta) applied there, the last vector masked
// to `last`. The chunk walk and the panel walk (rowwise_panels.hpp) both end this way.
template <typename Z, typename T, int BH, int NV>
BSRMM_ROWWISE_INLINE void store_scaled_rows(T* c, int64_t ldc, const typename Z::vec (&acc)[BH][NV],
                                            typename Z::mask last, double alpha_value, double beta_value) {
  using vec = typename Z::vec;
  const vec alpha = Z::set1(static_cast<T>(alpha_value));
  const vec beta = Z::set1(static_cast<T>(beta_value));
  const bool read_c = beta_value != 0.0;
  // Whole vectors without a mask (a masked AVX2 store is microcoded; ymm header).
  const bool last_whole = Z::full(last);
#pragma GCC unroll 8
  for (int i = 0; i < BH; ++i) {
    T* to = c + i * ldc;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      T* at = to + v * Z::lanes;
      vec value = Z::mul(alpha, acc[i][v]);
      if (v < NV - 1 || last_whole) {
        if (read_c) value = Z::fma(beta, Z::load(at), value);
        Z::store(at, value);
      } else {
        if (read_c) value = Z::fma(beta, Z::load(last, at), value);
        Z::store(at, last, value);
      }
    }
  }
}

// BW for a width known only at run time but a multiple of 8: the k loop runs in unrolled steps
// of 8 (a 64-wide block's band with a plain run-time loop ran ~1.5x slower than as 8x8 blocks).
constexpr int width_multiple_of_8 = -8;

// One block row's columns [j0, j0 + NV vectors) (the last vector masked to `last`): BH rows x
// NV vectors of accumulators. BW = 0: the width is only known at run time. One chain of FMAs per
// accumulator is enough: rows are independent and the core overlaps them (2-4 copies of the
// accumulators taking alternate blocks ran 5-25% slower at 1x1, N = 16; entry 46).
// Banded: the blocks are p.block_height high (taller than BH, a multiple of it) and this chunk
// computes their BH rows from `band_row` on (16x16 f64 N = 64 as two 8-row bands: 1.5x the
// blocked kernel; entry 53). Otherwise band_row is 0 and the blocks are BH high.
template <typename T, int BH, int BW, int NV, bool Banded = false>
BSRMM_ROWWISE_INLINE void chunk(const RowwiseProblem& p, int64_t r, int32_t band_row, int64_t j0,
                                typename RowVectors<T>::mask last, bool fast_store) {
  using Z = RowVectors<T>;
  using vec = typename Z::vec;
  const int32_t bw = BW > 0 ? BW : p.block_width;
  constexpr int k_step = BW > 0 ? BW : BW == width_multiple_of_8 ? 8 : 1;
  const int32_t height = Banded ? p.block_height : BH;
  const int64_t block = int64_t{height} * bw;
  const T* values = static_cast<const T*>(p.a_values);
  const T* b = static_cast<const T*>(p.b) + j0;
  const int64_t ldb = p.b_ld;
  vec acc[BH][NV];
#pragma GCC unroll 8
  for (int i = 0; i < BH; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = Z::zero();

  // Block q of the row: each of its columns k scales B's row col * bw + k into the accumulators.
  // A whole last vector is read without a mask (a masked load cost 1.2-1.5x a plain one).
  const bool last_whole = Z::full(last);
  const auto one_block = [&](int32_t q) BSRMM_ROWWISE_INLINE_LAMBDA {
    const T* a = values + int64_t{q} * block + int64_t{band_row} * bw;
    const T* rows_of_b = b + int64_t{p.col_idx[q]} * bw * ldb;
    // Column k of the block from A's column `a_k` (rows bw apart) and B's row `b_row`.
    const auto column = [&](const T* a_k, const T* b_row) BSRMM_ROWWISE_INLINE_LAMBDA {
      vec bv[NV];
#pragma GCC unroll 8
      for (int v = 0; v < NV - 1; ++v) bv[v] = Z::load(b_row + v * Z::lanes);
      bv[NV - 1] = last_whole ? Z::load(b_row + (NV - 1) * Z::lanes) : Z::load(last, b_row + (NV - 1) * Z::lanes);
#pragma GCC unroll 8
      for (int i = 0; i < BH; ++i) {
        const vec s = Z::set1(a_k[i * bw]);
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[i][v] = Z::fma(s, bv[v], acc[i][v]);
      }
    };
    if constexpr (k_step == 1) {
#pragma GCC unroll 8
      for (int32_t k = 0; k < bw; ++k) column(a + k, rows_of_b + k * ldb);
    } else {
      // Steps of k_step columns, each unrolled whole (a loop over the width with the unroll
      // inside it was fused by GCC into one run-time loop entered through a jump table).
      // Banded, the next block's band (BH rows, contiguous) is prefetched a step's share at a
      // time: bands read A in pieces far apart (a 64x64 f64 block's band: 4 KiB every 32 KiB),
      // which the hardware prefetcher does not follow (entry 53).
      constexpr int step_bytes = BH * k_step * int{sizeof(T)};
      const char* next = Banded && q + 1 < p.row_ptr[r + 1]
                             ? reinterpret_cast<const char*>(a + block)
                             : nullptr;
      const T* a_k = a;
      const T* b_k = rows_of_b;
      for (int32_t k0 = 0; k0 < bw; k0 += k_step, a_k += k_step, b_k += k_step * ldb) {
        if (next != nullptr) {
#pragma GCC unroll 16
          for (int at = 0; at < step_bytes; at += 64)
            _mm_prefetch(next + int64_t{k0} * BH * int{sizeof(T)} + at, _MM_HINT_T0);
        }
#pragma GCC unroll 16
        for (int kk = 0; kk < k_step; ++kk) column(a_k + kk, b_k + kk * ldb);
      }
    }
  };
  if constexpr (Banded) {
    // A band's block is already 8 columns or more of unrolled steps: unrolling blocks too
    // would only grow the loop past the micro-op cache.
    for (int32_t q = p.row_ptr[r]; q < p.row_ptr[r + 1]; ++q) one_block(q);
  } else {
#pragma GCC unroll 4
    for (int32_t q = p.row_ptr[r]; q < p.row_ptr[r + 1]; ++q) one_block(q);
  }

  const int64_t row0 = r * height + band_row;
  if (fast_store) {
    store_scaled_rows<Z, T, BH, NV>(static_cast<T*>(p.c.data) + row0 * p.c.ld + j0, p.c.ld, acc, last,
                                    p.alpha, p.beta);
    return;
  }
  alignas(64) T tile[BH * NV * Z::lanes];
#pragma GCC unroll 8
  for (int i = 0; i < BH; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      Z::store(tile + (i * NV + v) * Z::lanes, acc[i][v]);
  const int64_t count = std::min<int64_t>(int64_t{NV} * Z::lanes, p.c.cols - j0);
  store_any<T>(tile, BH, int64_t{NV} * Z::lanes, count, p, row0, j0);
}


// Rows [row_begin, row_end) when N fits one chunk (NV vectors, the last masked to `last`): the
// chunk's shape is decided once, not per row (at N = 2 with 3 blocks a row, that choice was a
// visible part of a row's time).
template <typename T, int BH, int BW, int NV, bool Banded>
void rows_one_chunk(const RowwiseProblem& p, int64_t row_begin, int64_t row_end,
                    typename RowVectors<T>::mask last, bool fast_store) {
  const int32_t height = Banded ? p.block_height : BH;
  for (int64_t r = row_begin; r < row_end; ++r)
    for (int32_t band = 0; band < height; band += BH)
      chunk<T, BH, BW, NV, Banded>(p, r, band, 0, last, fast_store);
}

// Calls run(std::integral_constant<int, nv>) for a run-time nv in [NV, NVmax].
template <int NV, int NVmax, typename Run>
BSRMM_ROWWISE_INLINE void with_vectors(int nv, Run&& run) {
  if constexpr (NV < NVmax) {
    if (nv > NV) return with_vectors<NV + 1, NVmax>(nv, run);
  }
  run(std::integral_constant<int, NV>{});
}

// Block rows that bring many B rows under a B too large to stay cached walk in panels instead
// (they need chunk() and with_vectors above).
#include "rowwise_panels.hpp"

template <typename T, int BH, int BW, bool Banded = false>
void rows_shaped(const RowwiseProblem& p, int64_t row_begin, int64_t row_end) {
  using Z = RowVectors<T>;
  using mask = typename Z::mask;
  constexpr int NVmax = max_vectors<Z>(BH);
  constexpr int64_t width = int64_t{NVmax} * Z::lanes;
  const int64_t n = p.c.cols;
  const bool fast_store = p.c.dtype == (sizeof(T) == 8 ? BSRMM_DTYPE_F64 : BSRMM_DTYPE_F32) &&
                          p.c.layout == BSRMM_LAYOUT_ROW_MAJOR && p.bias == nullptr &&
                          p.activation == BSRMM_ACTIVATION_NONE;
  // The last chunk's vectors and mask (every other chunk is NVmax whole vectors).
  const int64_t tail = n - (n - 1) / width * width;
  const int tail_vectors = static_cast<int>((tail + Z::lanes - 1) / Z::lanes);
  const mask last = Z::first(tail - int64_t{tail_vectors - 1} * Z::lanes);
  if (n <= width) {
    with_vectors<1, NVmax>(tail_vectors, [&](auto nv) {
      rows_one_chunk<T, BH, BW, decltype(nv)::value, Banded>(p, row_begin, row_end, last, fast_store);
    });
    return;
  }
  if constexpr (!Banded) {
    if (p.panel_min_b_rows > 0) return rows_panels<T, BH, BW>(p, row_begin, row_end);
  }
  const int64_t tail_begin = n - tail;
  const int32_t height = Banded ? p.block_height : BH;
  // Bands inside chunks: a block row's B rows under one chunk serve every band while cached.
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t j0 = 0; j0 < tail_begin; j0 += width)
      for (int32_t band = 0; band < height; band += BH)
        chunk<T, BH, BW, NVmax, Banded>(p, r, band, j0, Z::first(Z::lanes), fast_store);
    with_vectors<1, NVmax>(tail_vectors, [&](auto nv) {
      for (int32_t band = 0; band < height; band += BH)
        chunk<T, BH, BW, decltype(nv)::value, Banded>(p, r, band, tail_begin, last, fast_store);
    });
  }
}

// Blocks taller than rowwise_max_height (a multiple of rowwise_band_height high): bands of that
// many rows; widths 8 and 16 unrolled whole, other multiples of 8 in steps of 8, the rest at run
// time.
template <typename T>
void rows_tall(const RowwiseProblem& p, int64_t row_begin, int64_t row_end) {
  constexpr int band = rowwise_band_height;
  if (p.block_width == 8) return rows_shaped<T, band, 8, true>(p, row_begin, row_end);
  if (p.block_width == 16) return rows_shaped<T, band, 16, true>(p, row_begin, row_end);
  if (p.block_width % 8 == 0) return rows_shaped<T, band, width_multiple_of_8, true>(p, row_begin, row_end);
  rows_shaped<T, band, 0, true>(p, row_begin, row_end);
}

template <typename T, int BH>
void rows_height(const RowwiseProblem& p, int64_t row_begin, int64_t row_end) {
  if (p.block_width == BH) {
    rows_shaped<T, BH, BH>(p, row_begin, row_end);
  } else {
    rows_shaped<T, BH, 0>(p, row_begin, row_end);
  }
}

template <typename T>
void rows_any(const RowwiseProblem& p, int64_t row_begin, int64_t row_end) {
  switch (p.block_height) {
    case 1: return rows_height<T, 1>(p, row_begin, row_end);
    case 2: return rows_height<T, 2>(p, row_begin, row_end);
    case 3: return rows_height<T, 3>(p, row_begin, row_end);
    case 4: return rows_height<T, 4>(p, row_begin, row_end);
    case 5: return rows_height<T, 5>(p, row_begin, row_end);
    case 6: return rows_height<T, 6>(p, row_begin, row_end);
    case 7: return rows_height<T, 7>(p, row_begin, row_end);
    case 8: return rows_height<T, 8>(p, row_begin, row_end);
    default: return rows_tall<T>(p, row_begin, row_end);  // the caller checked the height
  }
}

}  // namespace
}  // namespace bsrmm::cpu
