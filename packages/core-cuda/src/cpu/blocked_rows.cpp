#include "blocked_rows.hpp"

#include "../common/half.hpp"
#include "../common/limits.hpp"
#include "epilogue.hpp"

#include <algorithm>
#include <cstring>

// On x86-64 Linux the entry points are compiled twice, for x86-64-v3 (AVX2 + FMA) and the
// baseline, and the loader picks one per machine (ifunc). Everything they call is
// always_inline, so the whole loop nest is compiled for the chosen instruction set. A shipped
// build never uses -march=native. Not under ThreadSanitizer: the loader runs ifunc resolvers
// before the TSan runtime is initialised, and an instrumented resolver crashes there.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BSRMM_CPU_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define BSRMM_CPU_THREAD_SANITIZER 1
#endif
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(BSRMM_CPU_THREAD_SANITIZER)
#define BSRMM_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BSRMM_CPU_CLONES
#endif

#define BSRMM_INLINE inline __attribute__((always_inline))

namespace bsrmm::cpu {

namespace {

using detail::bf16_t;
using detail::f16_t;

// `vec` for arithmetic; `unaligned` for loads and stores anywhere (element alignment, may alias
// the element type).
template <typename T>
struct Simd;
template <>
struct Simd<float> {
  typedef float vec __attribute__((vector_size(vector_bytes)));
  typedef float unaligned __attribute__((vector_size(vector_bytes), aligned(4), may_alias));
};
template <>
struct Simd<double> {
  typedef double vec __attribute__((vector_size(vector_bytes)));
  typedef double unaligned __attribute__((vector_size(vector_bytes), aligned(8), may_alias));
};

// tile[MR x NV vectors] (+)= sum over `count` blocks and k of A[i0 + m][k] * B[col * bw + k][j0..]:
// `a` points at row i0 of the first block, `b` at column j0 of B's first row, `tile` (rows
// tile_cols apart) holds the running sums when `accumulate`.
template <typename T, int MR, int NV>
BSRMM_INLINE void micro_tile(bool accumulate, const T* a, const int32_t* cols, int32_t count,
                             int64_t block_stride, int32_t bw, const T* b, int64_t ldb, T* tile) {
  using V = typename Simd<T>::vec;
  using U = typename Simd<T>::unaligned;
  constexpr int L = lanes<T>();
  // Fully unrolled so the accumulators live in registers for the whole block row.
  V acc[MR][NV];
#pragma GCC unroll 4
  for (int m = 0; m < MR; ++m) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      acc[m][v] = accumulate ? V(*reinterpret_cast<const U*>(tile + m * tile_cols<T>() + v * L)) : V{};
    }
  }
  for (int32_t p = 0; p < count; ++p) {
    const T* block = a + p * block_stride;
    const T* panel = b + int64_t{cols[p]} * bw * ldb;
    for (int32_t k = 0; k < bw; ++k) {
      const T* b_row = panel + k * ldb;
      V bv[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) bv[v] = *reinterpret_cast<const U*>(b_row + v * L);
#pragma GCC unroll 4
      for (int m = 0; m < MR; ++m) {
        const T s = block[m * bw + k];
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[m][v] += s * bv[v];
      }
    }
  }
#pragma GCC unroll 4
  for (int m = 0; m < MR; ++m) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) *reinterpret_cast<U*>(tile + m * tile_cols<T>() + v * L) = acc[m][v];
  }
}

template <typename T, int MR>
BSRMM_INLINE void micro_tile_nv(int nv, bool accumulate, const T* a, const int32_t* cols,
                                int32_t count, int64_t block_stride, int32_t bw, const T* b,
                                int64_t ldb, T* tile) {
  switch (nv) {
    case 1: micro_tile<T, MR, 1>(accumulate, a, cols, count, block_stride, bw, b, ldb, tile); break;
    case 2: micro_tile<T, MR, 2>(accumulate, a, cols, count, block_stride, bw, b, ldb, tile); break;
    default: micro_tile<T, MR, 3>(accumulate, a, cols, count, block_stride, bw, b, ldb, tile); break;
  }
}

template <typename T>
BSRMM_INLINE void micro_tile_any(int mr, int nv, bool accumulate, const T* a, const int32_t* cols,
                                 int32_t count, int64_t block_stride, int32_t bw, const T* b,
                                 int64_t ldb, T* tile) {
  static_assert(tile_rows == 4 && tile_vectors == 3, "the dispatch below covers a 4 x 3 tile");
  switch (mr) {
    case 1: micro_tile_nv<T, 1>(nv, accumulate, a, cols, count, block_stride, bw, b, ldb, tile); break;
    case 2: micro_tile_nv<T, 2>(nv, accumulate, a, cols, count, block_stride, bw, b, ldb, tile); break;
    case 3: micro_tile_nv<T, 3>(nv, accumulate, a, cols, count, block_stride, bw, b, ldb, tile); break;
    default: micro_tile_nv<T, 4>(nv, accumulate, a, cols, count, block_stride, bw, b, ldb, tile); break;
  }
}

// Rows of B taken per pass down a block row: their strip (rows x tile_cols) is ~12 KiB, so it
// stays in L1 while every micro-tile of the block row reuses it.
template <typename T>
constexpr int32_t strip_rows() {
  return 12 * 1024 / (tile_cols<T>() * static_cast<int32_t>(sizeof(T)));
}

template <typename T>
BSRMM_INLINE T load(float x) { return x; }
template <typename T>
BSRMM_INLINE T load(double x) { return static_cast<T>(x); }
template <typename T>
BSRMM_INLINE T load(f16_t x) { return detail::to_float(x); }
template <typename T>
BSRMM_INLINE T load(bf16_t x) { return detail::to_float(x); }

// Writes rows x cols of the tile into C at (row0, col0) through the epilogue; C elements are S.
template <typename T, typename S>
BSRMM_INLINE void store_tile(const T* tile, int rows, int cols, const BlockedProblem& problem,
                             int64_t row0, int64_t col0) {
  const bsrmm_dense& c = problem.c;
  S* out = static_cast<S*>(c.data);
  const T alpha = static_cast<T>(problem.alpha);
  const T beta = static_cast<T>(problem.beta);
  const bool read_c = problem.beta != 0.0;
  const bool row_major = c.layout == BSRMM_LAYOUT_ROW_MAJOR;
  for (int m = 0; m < rows; ++m) {
    const int64_t row = row0 + m;
    const T bias = problem.bias ? load<T>(static_cast<const S*>(problem.bias)[row]) : T(0);
    for (int j = 0; j < cols; ++j) {
      const int64_t at = row_major ? row * c.ld + col0 + j : (col0 + j) * c.ld + row;
      T value = alpha * tile[m * tile_cols<T>() + j];
      if (read_c) value += beta * load<T>(out[at]);
      if (problem.bias) value += bias;
      out[at] = detail::Store<S>::from(activate(value, problem.activation));
    }
  }
}

template <typename T, typename S>
BSRMM_INLINE void rows_typed(const BlockedProblem& problem, int64_t row_begin, int64_t row_end,
                             int64_t col_begin, int64_t col_end) {
  constexpr int NR = tile_cols<T>();
  constexpr int L = lanes<T>();
  const int32_t bh = problem.block_height;
  const int32_t bw = problem.block_width;
  const int64_t block_stride = int64_t{bh} * bw;
  const T* values = static_cast<const T*>(problem.a_values);
  const T* b = static_cast<const T*>(problem.b);
  const int64_t k_rows = problem.b_rows;
  const int64_t n = problem.c.cols;
  // The block row's accumulators for one column strip (at most 24 KiB): written by the
  // micro-tiles pass after pass, then once through the epilogue.
  alignas(vector_bytes) T panel[detail::max_block_side * NR];
  const int32_t blocks_per_pass = std::max<int32_t>(1, strip_rows<T>() / bw);

  for (int64_t r = row_begin; r < row_end; ++r) {
    const int32_t first = problem.row_ptr[r];
    const int32_t count = problem.row_ptr[r + 1] - first;
    const T* row_values = values + first * block_stride;
    const int32_t* cols = problem.col_idx + first;
    for (int64_t j0 = col_begin; j0 < col_end; j0 += NR) {
      const int nv = static_cast<int>(std::min<int64_t>(NR, col_end - j0) + L - 1) / L;
      const int stored = static_cast<int>(std::min<int64_t>(nv * L, n - j0));
      if (stored <= 0) break;
      // The strip's rows are contiguous and only as wide as the strip: no cache-set conflicts
      // from a power-of-two leading dimension, and the hardware prefetcher sees one stream.
      // No blocks, no staged B (b may be NULL, and NULL + offset is undefined).
      const T* strip = count == 0 ? nullptr : b + j0 * k_rows;
      const int64_t ldb = std::min<int64_t>(NR, problem.b_width - j0);
      if (count == 0) std::fill(panel, panel + int64_t{bh} * NR, T(0));
      for (int32_t pass = 0; pass < count; pass += blocks_per_pass) {
        const int32_t blocks = std::min(blocks_per_pass, count - pass);
        for (int32_t i0 = 0; i0 < bh; i0 += tile_rows) {
          micro_tile_any<T>(std::min(tile_rows, bh - i0), nv, pass > 0,
                            row_values + pass * block_stride + int64_t{i0} * bw, cols + pass, blocks,
                            block_stride, bw, strip, ldb, panel + int64_t{i0} * NR);
        }
      }
      store_tile<T, S>(panel, bh, stored, problem, r * bh, j0);
    }
  }
}

// The clones live in the anonymous namespace: GCC gives a target_clones function's dispatcher
// default visibility whatever is asked for, and internal linkage is the way to keep it out of
// the library's exported symbols.
BSRMM_CPU_CLONES
void rows_f32(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
              int64_t col_end) {
  switch (problem.c.dtype) {
    case BSRMM_DTYPE_F16:
      rows_typed<float, f16_t>(problem, row_begin, row_end, col_begin, col_end);
      break;
    case BSRMM_DTYPE_BF16:
      rows_typed<float, bf16_t>(problem, row_begin, row_end, col_begin, col_end);
      break;
    default:
      rows_typed<float, float>(problem, row_begin, row_end, col_begin, col_end);
      break;
  }
}

BSRMM_CPU_CLONES
void rows_f64(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
              int64_t col_end) {
  rows_typed<double, double>(problem, row_begin, row_end, col_begin, col_end);
}

}  // namespace

void blocked_rows_f32(const BlockedProblem& problem, int64_t row_begin, int64_t row_end,
                      int64_t col_begin, int64_t col_end) {
  rows_f32(problem, row_begin, row_end, col_begin, col_end);
}

void blocked_rows_f64(const BlockedProblem& problem, int64_t row_begin, int64_t row_end,
                      int64_t col_begin, int64_t col_end) {
  rows_f64(problem, row_begin, row_end, col_begin, col_end);
}

}  // namespace bsrmm::cpu
