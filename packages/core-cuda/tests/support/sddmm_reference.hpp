// The independent float64 SDDMM reference the CPU and GPU tests check against: every stored
// block of the pattern as dot products of X's rows and Y's columns, written out again here (not
// the library's), in the Expected form that expect_matches compares (nnzb rows of bh * bw).
#pragma once

#include "dense_reference.hpp"
#include "host_arrays.hpp"

#include <cmath>
#include <cstdint>

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

// Uniform in [-1, 1) rounded to the operand's dtype, everywhere in its logical shape.
template <typename Rng>
void fill_random(HostDense& d, Rng& rng) {
  for (int64_t i = 0; i < d.rows(); ++i)
    for (int64_t j = 0; j < d.cols(); ++j) d.set(i, j, round_to(d.dtype(), rng.uniform(-1, 1)));
}

}  // namespace bsrmm::test
