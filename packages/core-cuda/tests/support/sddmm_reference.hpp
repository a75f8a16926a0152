// The independent float64 SDDMM reference the CPU and GPU tests check against: every stored
// block of the pattern as dot products of X's rows and Y's columns, written out again here (not
// the library's), in the Expected form that expect_matches compares (nnzb rows of bh * bw); and
// the randomized problem (pattern, X, Y, poisoned or random values) both suites build.
#pragma once

#include "dense_reference.hpp"
#include "host_arrays.hpp"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace bsrmm::test {

// `count` rows of X from `row0` (x_rows) or columns of Y from `col0` (y_columns), each as T
// contiguous doubles: the reference converts every element once per block row or block instead
// of twice per multiply-add (a T = 4096 case of the GPU suite took 18 s with get() in its
// inner loop).
inline std::vector<double> x_rows(const HostDense& x, int64_t row0, int32_t count) {
  const int64_t t_len = x.cols();
  std::vector<double> out(static_cast<size_t>(count * t_len));
  for (int32_t i = 0; i < count; ++i)
    for (int64_t t = 0; t < t_len; ++t) out[static_cast<size_t>(i * t_len + t)] = x.get(row0 + i, t);
  return out;
}

inline std::vector<double> y_columns(const HostDense& y, int64_t col0, int32_t count) {
  const int64_t t_len = y.rows();
  std::vector<double> out(static_cast<size_t>(count * t_len));
  for (int32_t j = 0; j < count; ++j)
    for (int64_t t = 0; t < t_len; ++t) out[static_cast<size_t>(j * t_len + t)] = y.get(t, col0 + j);
  return out;
}

// values[b] = alpha * (X Y)[block b of `pattern`] + beta * before[b]; `before` is read only
// when beta != 0.
inline Expected reference_sddmm(const HostBsr& pattern, const HostDense& x, const HostDense& y,
                                const HostDense& before, double alpha, double beta) {
  const int32_t bh = pattern.block_height;
  const int32_t bw = pattern.block_width;
  const int64_t t_len = x.cols();
  Expected e;
  e.rows = pattern.nnzb();
  e.cols = int64_t{bh} * bw;
  e.value.assign(static_cast<size_t>(e.rows * e.cols), 0.0);
  e.magnitude.assign(e.value.size(), 0.0);
  for (size_t r = 0; r + 1 < pattern.row_ptr.size(); ++r) {
    if (pattern.row_ptr[r] == pattern.row_ptr[r + 1]) continue;
    const std::vector<double> rows = x_rows(x, static_cast<int64_t>(r) * bh, bh);
    for (int64_t b = pattern.row_ptr[r]; b < pattern.row_ptr[r + 1]; ++b) {
      const std::vector<double> cols = y_columns(y, int64_t{pattern.col_idx[static_cast<size_t>(b)]} * bw, bw);
      for (int32_t i = 0; i < bh; ++i) {
        for (int32_t j = 0; j < bw; ++j) {
          const double* xi = rows.data() + i * t_len;
          const double* yj = cols.data() + j * t_len;
          double sum = 0, mag = 0;
          for (int64_t t = 0; t < t_len; ++t) {
            sum += xi[t] * yj[t];
            mag += std::fabs(xi[t] * yj[t]);
          }
          double out = alpha * sum;
          mag *= std::fabs(alpha);
          const int64_t e_col = int64_t{i} * bw + j;
          if (beta != 0) {
            out += beta * before.get(b, e_col);
            mag += std::fabs(beta * before.get(b, e_col));
          }
          e.value[static_cast<size_t>(b * e.cols + e_col)] = out;
          e.magnitude[static_cast<size_t>(b * e.cols + e_col)] = mag;
        }
      }
    }
  }
  return e;
}

// One randomized SDDMM problem of a test case (a CPU or GPU case struct: block_rows, block_cols,
// bh, bw, density, t, dtype, x_layout, y_layout, x_pad, y_pad, alpha, beta): the pattern, X and Y
// uniform in [-1, 1), the values random when beta != 0 and left NaN-poisoned otherwise (beta = 0
// must not read them), and the values as they were before the call, for the reference.
struct SddmmProblem {
  HostBsr pattern;
  HostDense x, y, values, before;
  double alpha, beta;

  // The float64 reference of what the call must leave in `values`.
  Expected expected() const { return reference_sddmm(pattern, x, y, before, alpha, beta); }
};

// The operands of a test case over a pattern drawn beforehand (by make_sddmm_problem, or a test
// that needs a pattern of its own).
template <typename Case, typename Rng>
SddmmProblem sddmm_problem_over(HostBsr pattern, const Case& tc, Rng& rng) {
  HostDense x(pattern.rows, tc.t, tc.dtype, tc.x_layout, tc.x_pad);
  HostDense y(tc.t, pattern.cols, tc.dtype, tc.y_layout, tc.y_pad);
  fill_random(x, rng);
  fill_random(y, rng);
  HostDense values(pattern.nnzb(), pattern.block_elements(), tc.dtype);
  if (tc.beta != 0) fill_random(values, rng);
  HostDense before = values;
  return SddmmProblem{std::move(pattern), std::move(x),      std::move(y), std::move(values),
                      std::move(before),  tc.alpha, tc.beta};
}

template <typename Case, typename Rng>
SddmmProblem make_sddmm_problem(const Case& tc, Rng& rng) {
  HostBsr pattern = random_bsr(rng, tc.block_rows, tc.block_cols, tc.bh, tc.bw, tc.density, tc.dtype);
  return sddmm_problem_over(std::move(pattern), tc, rng);
}

}  // namespace bsrmm::test
