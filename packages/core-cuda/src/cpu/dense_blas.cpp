// cpu_dense_blas: one BLAS GEMM over the plan's dense copy of op(A), then bsrmm's own epilogue.
//
// A dense GEMM costs the same at every density and runs near the cores' peak; the sparse
// kernels cost in proportion to the stored blocks at a lower rate. Above a break-even density
// per block area and dtype (dense_heuristic.cpp) the GEMM is faster.
//
// Semantics match the sparse path: a dense product multiplies B by A's structural zeros too, and
// 0 * Inf = NaN. Every element of a product column j whose B column holds a NaN or an infinity
// sums a term with it (a stored value times it, or a structural zero times it: NaN), so the
// column is non-finite in every row, the first included. After the GEMM one look at the
// product's first row flags those columns, and only they are recomputed over A's stored blocks
// (as the CUDA dense fallback does, src/cuda/dense_fallback/nonfinite_columns.hpp). A column
// flagged because its first row overflowed with B finite is recomputed too, which only costs
// time.
#include "../common/error.hpp"
#include "../common/half.hpp"
#include "blas_library.hpp"
#include "cpu_backend.hpp"
#include "epilogue.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace bsrmm::cpu {

namespace {

using detail::bf16_t;
using detail::f16_t;

template <typename T>
inline T widen(float x) { return x; }
template <typename T>
inline T widen(double x) { return static_cast<T>(x); }
template <typename T>
inline T widen(f16_t x) { return detail::to_float(x); }
template <typename T>
inline T widen(bf16_t x) { return detail::to_float(x); }

inline int64_t offset(const bsrmm_dense& d, int64_t row, int64_t col) {
  return d.layout == BSRMM_LAYOUT_ROW_MAJOR ? row * d.ld + col : col * d.ld + row;
}

// B as the GEMM reads it: the caller's (f32/f64) or a row-major f32 copy (f16/bf16).
template <typename T>
struct GemmB {
  const T* data;
  int64_t ld;
  bool row_major;
};

// sum over A's stored blocks of row i of A[i][k] * B[k][j], in T.
template <typename T>
T sparse_dot(const BsrView& a, const T* values, const GemmB<T>& b, int64_t i, int64_t j) {
  const int64_t r = i / a.block_height;
  const int64_t within = i % a.block_height;
  const int64_t block = int64_t{a.block_height} * a.block_width;
  T sum = T(0);
  for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
    const T* row = values + p * block + within * a.block_width;
    const int64_t k0 = int64_t{a.col_idx[p]} * a.block_width;
    for (int32_t k = 0; k < a.block_width; ++k) {
      const int64_t at = b.row_major ? (k0 + k) * b.ld + j : j * b.ld + k0 + k;
      sum += row[k] * b.data[at];
    }
  }
  return sum;
}

template <typename T>
std::vector<int64_t> nonfinite_columns(const T* first_row, int64_t stride, int64_t columns) {
  std::vector<int64_t> flagged;
  for (int64_t j = 0; j < columns; ++j)
    if (!std::isfinite(first_row[j * stride])) flagged.push_back(j);
  return flagged;
}

template <typename T, typename S>
void convert_b(const bsrmm_dense& b, T* out, detail::ThreadPool& pool) {
  const S* in = static_cast<const S*>(b.data);
  const int64_t parts = std::min<int64_t>(b.rows, pool.size() * 4);
  pool.run(parts, [&](int64_t part) {
    for (int64_t k = b.rows * part / parts; k < b.rows * (part + 1) / parts; ++k)
      for (int64_t j = 0; j < b.cols; ++j) out[k * b.cols + j] = widen<T>(in[offset(b, k, j)]);
  });
}

// The staged path: product (alpha 1) in `stage` (row-major, ld n), then per element the
// epilogue, reading the sparse sum instead of the staged one in flagged columns.
template <typename T, typename S>
void staged_epilogue(const MatmulArgs& args, const T* values, const GemmB<T>& b, const T* stage,
                     const std::vector<char>& flagged, bool any_flagged, detail::ThreadPool& pool) {
  const bsrmm_dense& c = args.c;
  S* out = static_cast<S*>(c.data);
  const S* bias = static_cast<const S*>(args.bias);
  const T alpha = static_cast<T>(args.alpha);
  const T beta = static_cast<T>(args.beta);
  const bool read_c = args.beta != 0.0;
  const int64_t m = c.rows;
  const int64_t n = c.cols;
  const int64_t parts = std::min<int64_t>(m, pool.size() * 4);
  pool.run(parts, [&](int64_t part) {
    for (int64_t i = m * part / parts; i < m * (part + 1) / parts; ++i) {
      const T row_bias = bias ? widen<T>(bias[i]) : T(0);
      const T* staged = stage + i * n;
      for (int64_t j = 0; j < n; ++j) {
        const T product =
            any_flagged && flagged[static_cast<size_t>(j)] ? sparse_dot(args.a, values, b, i, j) : staged[j];
        const int64_t at = offset(c, i, j);
        T value = alpha * product;
        if (read_c) value += beta * widen<T>(out[at]);
        if (bias) value += row_bias;
        out[at] = detail::Store<S>::from(activate(value, args.activation));
      }
    }
  });
}

template <typename T>
void run(const MatmulArgs& args, const T* dense_a, const blas::Library& library,
         detail::ThreadPool& pool, detail::Buffer& workspace) {
  const int64_t m = args.c.rows;
  const int64_t n = args.c.cols;
  const int64_t k = args.b.rows;
  const T* values;
  if constexpr (sizeof(T) == 8) {
    values = static_cast<const T*>(args.a.values);
  } else {
    values = args.a.values_f32;
  }
  const bool b_native = args.b.dtype == (sizeof(T) == 8 ? BSRMM_DTYPE_F64 : BSRMM_DTYPE_F32);
  const bool c_native = args.c.dtype == args.b.dtype && b_native;
  // The product straight into C when the epilogue is only alpha: no staging pass. alpha == 0
  // still multiplies (NaN propagates), which a BLAS may skip.
  const bool direct = c_native && args.beta == 0.0 && args.bias == nullptr &&
                      args.activation == BSRMM_ACTIVATION_NONE && args.alpha != 0.0;

  const std::size_t b_bytes = b_native ? 0 : static_cast<std::size_t>(k * n) * sizeof(T);
  const std::size_t stage_bytes = direct ? 0 : static_cast<std::size_t>(m * n) * sizeof(T);
  const std::size_t bytes = b_bytes + (stage_bytes + 63) / 64 * 64;
  if (workspace.size() < bytes) workspace = detail::Buffer::allocate(bytes, workspace.device());
  unsigned char* scratch = workspace.as<unsigned char>();

  GemmB<T> b{static_cast<const T*>(args.b.data), args.b.ld, args.b.layout == BSRMM_LAYOUT_ROW_MAJOR};
  if (!b_native) {
    T* converted = reinterpret_cast<T*>(scratch);
    if (args.b.dtype == BSRMM_DTYPE_F16) convert_b<T, f16_t>(args.b, converted, pool);
    else convert_b<T, bf16_t>(args.b, converted, pool);
    b = GemmB<T>{converted, n, true};
  }

  if (direct) {
    T* c = static_cast<T*>(args.c.data);
    const bool c_row_major = args.c.layout == BSRMM_LAYOUT_ROW_MAJOR;
    // In C's order: A is row-major m x k (transposed when C is column-major), B in its own.
    const bool ok = library.gemm(c_row_major ? blas::Order::row_major : blas::Order::col_major,
                                 !c_row_major, b.row_major != c_row_major, m, n, k,
                                 static_cast<T>(args.alpha), dense_a, k, b.data, b.ld, T(0), c,
                                 args.c.ld);
    if (!ok) detail::fail(BSRMM_STATUS_INTERNAL, "cpu_dense_blas: a size exceeds the BLAS's integers");
    const int64_t stride = c_row_major ? 1 : args.c.ld;
    const std::vector<int64_t> flagged = nonfinite_columns(c, stride, n);
    if (flagged.empty()) return;
    const T alpha = static_cast<T>(args.alpha);
    pool.run(static_cast<int64_t>(flagged.size()), [&](int64_t f) {
      const int64_t j = flagged[static_cast<size_t>(f)];
      for (int64_t i = 0; i < m; ++i) c[offset(args.c, i, j)] = alpha * sparse_dot(args.a, values, b, i, j);
    });
    return;
  }

  T* stage = reinterpret_cast<T*>(scratch + b_bytes);
  if (!library.gemm(blas::Order::row_major, false, !b.row_major, m, n, k, T(1), dense_a, k, b.data,
                    b.ld, T(0), stage, n)) {
    detail::fail(BSRMM_STATUS_INTERNAL, "cpu_dense_blas: a size exceeds the BLAS's integers");
  }
  const std::vector<int64_t> list = nonfinite_columns(stage, 1, n);
  std::vector<char> flagged(list.empty() ? 0 : static_cast<size_t>(n), 0);
  for (int64_t j : list) flagged[static_cast<size_t>(j)] = 1;
  const bool any = !list.empty();
  if constexpr (sizeof(T) == 8) {
    staged_epilogue<T, double>(args, values, b, stage, flagged, any, pool);
  } else if (args.c.dtype == BSRMM_DTYPE_F16) {
    staged_epilogue<T, f16_t>(args, values, b, stage, flagged, any, pool);
  } else if (args.c.dtype == BSRMM_DTYPE_BF16) {
    staged_epilogue<T, bf16_t>(args, values, b, stage, flagged, any, pool);
  } else {
    staged_epilogue<T, float>(args, values, b, stage, flagged, any, pool);
  }
}

}  // namespace

void matmul_dense(const MatmulArgs& args, const void* dense_a, const blas::Library& library,
                  detail::ThreadPool& pool, detail::Buffer& workspace) {
  if (args.c.rows == 0 || args.c.cols == 0) return;
  if (args.a.dtype == BSRMM_DTYPE_F64) {
    run<double>(args, static_cast<const double*>(dense_a), library, pool, workspace);
  } else {
    if (args.a.values_f32 == nullptr && args.a.nnzb > 0)
      detail::fail(BSRMM_STATUS_INTERNAL, "cpu_dense_blas called without f32 values of A");
    run<float>(args, static_cast<const float*>(dense_a), library, pool, workspace);
  }
}

}  // namespace bsrmm::cpu
