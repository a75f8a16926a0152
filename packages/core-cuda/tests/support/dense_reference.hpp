// The independent float64 reference every test checks against: a dense triple loop over the
// dense image of A, with the epilogue written out again here (not the library's), plus the
// comparison with per-dtype error bounds.
#pragma once

#include "host_arrays.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace bsrmm::test {

struct Expected {
  int64_t rows = 0, cols = 0;
  std::vector<double> value;      // row-major
  std::vector<double> magnitude;  // |alpha| sum |a||b| + |beta c| + |bias|: scales the error bound
};

inline double reference_activation(double x, bsrmm_activation activation) {
  switch (activation) {
    case BSRMM_ACTIVATION_RELU: return std::isnan(x) ? x : (x > 0 ? x : 0.0);
    case BSRMM_ACTIVATION_GELU:
      if (std::isinf(x)) return x > 0 ? x : 0.0;
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case BSRMM_ACTIVATION_SILU:
      if (std::isinf(x)) return x > 0 ? x : 0.0;
      return x / (1.0 + std::exp(-x));
    case BSRMM_ACTIVATION_NONE: break;
  }
  return x;
}

// C = act(alpha * op(A) B + beta * C + bias). `a` is A densely, row-major, a_rows x a_cols.
inline Expected reference_matmul(const std::vector<double>& a, int64_t a_rows, int64_t a_cols,
                                 bsrmm_op op, const HostDense& b, const HostDense& c_before,
                                 double alpha, double beta, const std::vector<double>* bias,
                                 bsrmm_activation activation) {
  const bool t = op == BSRMM_OP_TRANSPOSE;
  const int64_t m = t ? a_cols : a_rows;
  const int64_t k = t ? a_rows : a_cols;
  Expected e;
  e.rows = m;
  e.cols = b.cols();
  e.value.assign(static_cast<size_t>(m * e.cols), 0.0);
  e.magnitude.assign(e.value.size(), 0.0);
  // B as float64, column by column, read once (HostDense::get converts on every call).
  std::vector<double> b_columns(static_cast<size_t>(k * e.cols));
  for (int64_t j = 0; j < e.cols; ++j)
    for (int64_t p = 0; p < k; ++p) b_columns[static_cast<size_t>(j * k + p)] = b.get(p, j);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < e.cols; ++j) {
      double sum = 0, mag = 0;
      const double* b_column = b_columns.data() + j * k;
      for (int64_t p = 0; p < k; ++p) {
        const double av = t ? a[static_cast<size_t>(p * a_cols + i)] : a[static_cast<size_t>(i * a_cols + p)];
        const double bv = b_column[p];
        sum += av * bv;
        mag += std::fabs(av * bv);
      }
      double out = alpha * sum;
      mag = std::fabs(alpha) * mag;
      if (beta != 0) {
        out += beta * c_before.get(i, j);
        mag += std::fabs(beta * c_before.get(i, j));
      }
      if (bias) {
        out += (*bias)[static_cast<size_t>(i)];
        mag += std::fabs((*bias)[static_cast<size_t>(i)]);
      }
      e.value[static_cast<size_t>(i * e.cols + j)] = reference_activation(out, activation);
      e.magnitude[static_cast<size_t>(i * e.cols + j)] = mag;
    }
  }
  return e;
}

// Relative accuracy of the accumulation and half an ulp of the output format.
inline double accumulation_epsilon(bsrmm_dtype dtype) { return dtype == BSRMM_DTYPE_F64 ? 1e-12 : 1e-5; }
inline double output_epsilon(bsrmm_dtype dtype) {
  switch (dtype) {
    case BSRMM_DTYPE_F16: return 0x1p-11;
    case BSRMM_DTYPE_BF16: return 0x1p-8;
    case BSRMM_DTYPE_F32: return 0x1p-24;
    default: return 0x1p-53;
  }
}

// The fp8 tensor cores' accumulation: products summed to about 14 bits of the largest partial
// sum within a block (the sm90 fp8 kernels promote each block's product to f32; 2^-15 of the
// magnitude measured over 128-deep blocks on an H100): a bound with margin on that.
constexpr double kFp8TensorCoreEpsilon = 0x1p-13;

// fp8 widened onto the bf16 / f32 kernels (src/cuda/fp8_widened): each operand value times its
// folded scale is rounded once to `widened` (unit roundoff u), so each product is off by up to
// 2u + u^2 of itself; the kernel that multiplies them is allowed 2u more for its own sums (the
// f16 / bf16 kernels' tests allow more still), and f32 accumulation its own.
inline double fp8_widened_epsilon(bsrmm_dtype widened) {
  const double u = output_epsilon(widened);
  return 4 * u + u * u + accumulation_epsilon(widened);
}

// Checks every element of `got` against `expected`: NaN where NaN is expected, equal infinities,
// otherwise within the dtype's bound (`accumulation`: the relative error of the sum, when not
// the f32 / f64 one of `got`'s dtype). Reports the first few mismatches.
inline void expect_matches(const HostDense& got, const Expected& expected, const std::string& what,
                           double accumulation = 0.0) {
  ASSERT_EQ(got.rows(), expected.rows);
  ASSERT_EQ(got.cols(), expected.cols);
  const bsrmm_dtype dtype = got.dtype();
  int64_t failures = 0;
  std::ostringstream report;
  for (int64_t i = 0; i < expected.rows; ++i) {
    for (int64_t j = 0; j < expected.cols; ++j) {
      const double want = expected.value[static_cast<size_t>(i * expected.cols + j)];
      const double mag = expected.magnitude[static_cast<size_t>(i * expected.cols + j)];
      const double have = got.get(i, j);
      bool ok;
      if (std::isnan(want)) {
        ok = std::isnan(have);
      } else if (std::isinf(want)) {
        ok = have == want;
      } else {
        const double acc = 1.2 * (accumulation > 0 ? accumulation : accumulation_epsilon(dtype)) * mag;
        const double bound = acc + output_epsilon(dtype) * (std::fabs(want) + acc) * 1.01 + 0x1p-25;
        ok = std::fabs(have - want) <= bound;
      }
      if (!ok && failures++ < 5) {
        report << "\n  C(" << i << ", " << j << ") = " << have << ", expected " << want
               << " (magnitude " << mag << ")";
      }
    }
  }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " of " << expected.rows * expected.cols
                         << " elements differ" << report.str();
}

}  // namespace bsrmm::test
