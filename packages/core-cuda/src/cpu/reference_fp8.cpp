// cpu_reference_f64acc for fp8 operands: each element dequantised (fp8 value times its scale)
// and the products accumulated in f64 before C's rounding. The reference against which any
// faster fp8 path will be checked, so it stays the obvious loops.
#include "../common/float8.hpp"
#include "../common/half.hpp"
#include "../matrix/value_scales.hpp"
#include "cpu_backend.hpp"
#include "epilogue.hpp"

namespace bsrmm::cpu {

namespace {

using detail::bf16_t;
using detail::f16_t;
using detail::f8e4m3_t;
using detail::f8e5m2_t;
using matrix::dense_scale;
using matrix::matrix_scale;

inline int64_t offset(const bsrmm_dense& d, int64_t row, int64_t col) {
  return d.layout == BSRMM_LAYOUT_ROW_MAJOR ? row * d.ld + col : col * d.ld + row;
}

// One element of C: sum over the blocks of block row r of (a * a_scale) * (b * b_scale).
template <typename A, typename B>
double dot(const MatmulArgs& args, int64_t r, int32_t i, int64_t j) {
  const BsrView& a = args.a;
  const A* values = static_cast<const A*>(a.values);
  const B* b = static_cast<const B*>(args.b.data);
  const int64_t block = int64_t{a.block_height} * a.block_width;
  const double b_scale = dense_scale(args.b_scales, args.b_scale_kind, j);
  double acc = 0.0;
  for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
    const double a_scale = matrix_scale(a.scales, a.scale_kind, r, p);
    const A* block_row = values + p * block + int64_t{i} * a.block_width;
    const int64_t k0 = int64_t{a.col_idx[p]} * a.block_width;
    for (int32_t k = 0; k < a.block_width; ++k) {
      acc += detail::to_double(block_row[k]) * a_scale *
             (detail::to_double(b[offset(args.b, k0 + k, j)]) * b_scale);
    }
  }
  return acc;
}

template <typename A, typename B, typename C>
void fp8_rows(const MatmulArgs& args, int64_t row_begin, int64_t row_end) {
  const BsrView& a = args.a;
  C* c = static_cast<C*>(args.c.data);
  const C* bias = static_cast<const C*>(args.bias);
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int32_t i = 0; i < a.block_height; ++i) {
      const int64_t row = r * a.block_height + i;
      for (int64_t j = 0; j < args.c.cols; ++j) {
        double out = args.alpha * dot<A, B>(args, r, i, j);
        const int64_t at = offset(args.c, row, j);
        if (args.beta != 0.0) out += args.beta * detail::to_double(c[at]);
        if (bias) out += detail::to_double(bias[row]);
        c[at] = detail::Store<C>::from(activate(out, args.activation));
      }
    }
  }
}

template <typename A, typename B>
void fp8_rows_into(const MatmulArgs& args, int64_t row_begin, int64_t row_end) {
  switch (args.c.dtype) {
    case BSRMM_DTYPE_F16: fp8_rows<A, B, f16_t>(args, row_begin, row_end); break;
    case BSRMM_DTYPE_BF16: fp8_rows<A, B, bf16_t>(args, row_begin, row_end); break;
    default: fp8_rows<A, B, float>(args, row_begin, row_end); break;  // f32, checked by the API
  }
}

template <typename A>
void fp8_rows_of(const MatmulArgs& args, int64_t row_begin, int64_t row_end) {
  if (args.b.dtype == BSRMM_DTYPE_FLOAT8_E4M3) {
    fp8_rows_into<A, f8e4m3_t>(args, row_begin, row_end);
  } else {
    fp8_rows_into<A, f8e5m2_t>(args, row_begin, row_end);
  }
}

}  // namespace

void reference_fp8_rows(const MatmulArgs& args, int64_t row_begin, int64_t row_end) {
  if (args.a.dtype == BSRMM_DTYPE_FLOAT8_E4M3) {
    fp8_rows_of<f8e4m3_t>(args, row_begin, row_end);
  } else {
    fp8_rows_of<f8e5m2_t>(args, row_begin, row_end);
  }
}

}  // namespace bsrmm::cpu
