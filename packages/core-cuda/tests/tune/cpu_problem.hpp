// A random CPU multiply for the tuning tests, fully determined by its seed and spec (a child
// process rebuilds it from the same numbers; two seeds with one spec share the block pattern and
// so the problem key), with its float64 reference. C is random when beta reads it and NaN otherwise; the padding of B and
// C is NaN, so a stray read or write shows.
#pragma once

#include "../support/dense_reference.hpp"
#include "../support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <cstdint>
#include <vector>

namespace bsrmm::test {

struct CpuProblemSpec {
  int64_t block_rows = 12, block_cols = 10;
  int32_t bh = 8, bw = 4;
  double density = 0.4;
  int64_t n = 24;
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  bsrmm_op op = BSRMM_OP_NONE;
  double alpha = 1.5, beta = 0.0;
  bool bias = false;
  bsrmm_activation activation = BSRMM_ACTIVATION_NONE;
  uint64_t pattern_seed = 1;
};

struct CpuProblem {
  CpuProblemSpec spec;
  HostBsr a;
  HostDense b, c, c_before;
  std::vector<double> bias;
  std::vector<unsigned char> bias_bytes;

  CpuProblem(uint64_t seed, const CpuProblemSpec& s)
      : spec(s), b(1, 1, s.dtype), c(1, 1, s.dtype), c_before(1, 1, s.dtype) {
    // The pattern, and with it the problem key, depends on the spec alone; the values on `seed`.
    Random pattern(s.pattern_seed);
    a = random_bsr(pattern, s.block_rows, s.block_cols, s.bh, s.bw, s.density, s.dtype);
    Random rng(seed);
    for (int64_t p = 0; p < a.nnzb(); ++p)
      for (int32_t i = 0; i < s.bh; ++i)
        for (int32_t j = 0; j < s.bw; ++j) a.set_value(p, i, j, round_to(s.dtype, rng.uniform(-1, 1)));
    const bool t = s.op == BSRMM_OP_TRANSPOSE;
    const int64_t m = t ? a.cols : a.rows;
    const int64_t k = t ? a.rows : a.cols;
    b = HostDense(k, s.n, s.dtype, BSRMM_LAYOUT_ROW_MAJOR, 3);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < s.n; ++j) b.set(i, j, round_to(s.dtype, rng.uniform(-1, 1)));
    c = HostDense(m, s.n, s.dtype, BSRMM_LAYOUT_COL_MAJOR, 2);
    if (s.beta != 0)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < s.n; ++j) c.set(i, j, round_to(s.dtype, rng.uniform(-1, 1)));
    c_before = c;
    if (s.bias) {
      bias_bytes.resize(static_cast<size_t>(m) * dtype_size(s.dtype));
      for (int64_t i = 0; i < m; ++i) {
        bias.push_back(round_to(s.dtype, rng.uniform(-1, 1)));
        store(s.dtype, bias_bytes.data() + i * dtype_size(s.dtype), bias.back());
      }
    }
  }

  bsrmm_matmul_options options() const {
    bsrmm_matmul_options o = bsrmm::matmul_options();
    o.op_a = spec.op;
    o.alpha = spec.alpha;
    o.beta = spec.beta;
    o.bias = spec.bias ? bias_bytes.data() : nullptr;
    o.activation = spec.activation;
    return o;
  }

  Expected expected() const {
    return reference_matmul(a.to_dense(), a.rows, a.cols, spec.op, b, c_before, spec.alpha,
                            spec.beta, spec.bias ? &bias : nullptr, spec.activation);
  }

  // Poisons C again (NaN, or its original values when beta reads them) for another run.
  void reset_c() { c = c_before; }
};

}  // namespace bsrmm::test
