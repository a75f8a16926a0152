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

namespace bsrmm::test {

// values[b] = alpha * (X Y)[block b of `pattern`] + beta * before[b]; `before` is read only
// when beta != 0.
inline Expected reference_sddmm(const HostBsr& pattern, const HostDense& x, const HostDense& y,
                                const HostDense& before, double alpha, double beta) {
  const int32_t bh = pattern.block_height;
  const int32_t bw = pattern.block_width;
  Expected e;
  e.rows = pattern.nnzb();
  e.cols = int64_t{bh} * bw;
  e.value.assign(static_cast<size_t>(e.rows * e.cols), 0.0);
  e.magnitude.assign(e.value.size(), 0.0);
  for (size_t r = 0; r + 1 < pattern.row_ptr.size(); ++r) {
    for (int64_t b = pattern.row_ptr[r]; b < pattern.row_ptr[r + 1]; ++b) {
      for (int32_t i = 0; i < bh; ++i) {
        for (int32_t j = 0; j < bw; ++j) {
          const int64_t row = static_cast<int64_t>(r) * bh + i;
          const int64_t col = pattern.col_idx[static_cast<size_t>(b)] * bw + j;
          double sum = 0, mag = 0;
          for (int64_t t = 0; t < x.cols(); ++t) {
            sum += x.get(row, t) * y.get(t, col);
            mag += std::fabs(x.get(row, t) * y.get(t, col));
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
