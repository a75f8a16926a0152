// fp8 operands for tests: random A and B in an fp8 dtype with random fp32 scales of every kind,
// and their dequantised images (fp8 value times scale, in float64) for the reference.
#pragma once

#include "host_arrays.hpp"
#include "random.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <vector>

namespace bsrmm::test {

// Scales drawn from [0.25, 4): every element of an operand is multiplied by a different-looking
// number, so a scale applied to the wrong block, row or column shows.
inline std::vector<float> random_scales(Random& rng, int64_t count) {
  std::vector<float> scales(static_cast<size_t>(count));
  for (float& s : scales) s = static_cast<float>(rng.uniform(0.25, 4.0));
  return scales;
}

inline bsrmm_scales scales_of(const std::vector<float>& values, bsrmm_scale_kind kind) {
  bsrmm_scales scales = bsrmm_scales_default();
  scales.kind = kind;
  scales.data = values.data();
  scales.count = static_cast<int64_t>(values.size());
  return scales;
}

// How many scales A of `a` takes with `kind` (PER_TENSOR, PER_BLOCK, PER_BLOCK_ROW).
inline int64_t scale_count(const HostBsr& a, bsrmm_scale_kind kind) {
  if (kind == BSRMM_SCALE_PER_BLOCK) return a.nnzb();
  if (kind == BSRMM_SCALE_PER_BLOCK_ROW) return static_cast<int64_t>(a.row_ptr.size()) - 1;
  return 1;
}

// A dense row-major: each stored element times its block's scale.
inline std::vector<double> dequantised(const HostBsr& a, const std::vector<float>& scales,
                                       bsrmm_scale_kind kind) {
  std::vector<double> dense(static_cast<size_t>(a.rows * a.cols), 0.0);
  for (int64_t r = 0; r + 1 < static_cast<int64_t>(a.row_ptr.size()); ++r) {
    for (int64_t p = a.row_ptr[static_cast<size_t>(r)]; p < a.row_ptr[static_cast<size_t>(r) + 1]; ++p) {
      const double s = kind == BSRMM_SCALE_PER_BLOCK       ? scales[static_cast<size_t>(p)]
                       : kind == BSRMM_SCALE_PER_BLOCK_ROW ? scales[static_cast<size_t>(r)]
                                                           : scales[0];
      for (int32_t i = 0; i < a.block_height; ++i)
        for (int32_t j = 0; j < a.block_width; ++j)
          dense[static_cast<size_t>((r * a.block_height + i) * a.cols +
                                    a.col_idx[static_cast<size_t>(p)] * a.block_width + j)] =
              a.value(p, i, j) * s;
    }
  }
  return dense;
}

// B as float64: each element times its column's scale (or the one scale).
inline HostDense dequantised(const HostDense& b, const std::vector<float>& scales) {
  HostDense out(b.rows(), b.cols(), BSRMM_DTYPE_F64);
  for (int64_t i = 0; i < b.rows(); ++i)
    for (int64_t j = 0; j < b.cols(); ++j)
      out.set(i, j, b.get(i, j) * scales[scales.size() == 1 ? 0 : static_cast<size_t>(j)]);
  return out;
}

}  // namespace bsrmm::test
