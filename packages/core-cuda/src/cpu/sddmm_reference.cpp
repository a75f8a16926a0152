// sddmm_reference: each stored block's elements as plain dot products over T, accumulated in
// f64 whatever the dtype, blocks split evenly over the pool. Slow by design; the oracle.
#include "../common/half.hpp"
#include "sddmm.hpp"

#include <algorithm>
#include <cstdint>

namespace bsrmm::cpu {

namespace {

using detail::bf16_t;
using detail::f16_t;

inline int64_t offset(const bsrmm_dense& d, int64_t row, int64_t col) {
  return d.layout == BSRMM_LAYOUT_ROW_MAJOR ? row * d.ld + col : col * d.ld + row;
}

template <typename S>
void reference_blocks(const SddmmArgs& args, int64_t begin, int64_t end) {
  const backend::BsrView& p = args.pattern;
  const S* x = static_cast<const S*>(args.x.data);
  const S* y = static_cast<const S*>(args.y.data);
  S* values = static_cast<S*>(args.values.data);
  const int64_t t_count = args.x.cols;
  int64_t row = std::upper_bound(p.row_ptr, p.row_ptr + p.block_row_count + 1, begin) - p.row_ptr - 1;
  for (int64_t b = begin; b < end; ++b) {
    while (p.row_ptr[row + 1] <= b) ++row;
    for (int32_t i = 0; i < p.block_height; ++i) {
      for (int32_t j = 0; j < p.block_width; ++j) {
        const int64_t xr = row * p.block_height + i;
        const int64_t yc = int64_t{p.col_idx[b]} * p.block_width + j;
        double acc = 0.0;
        for (int64_t t = 0; t < t_count; ++t)
          acc += detail::to_double(x[offset(args.x, xr, t)]) * detail::to_double(y[offset(args.y, t, yc)]);
        S& out = values[(b * p.block_height + i) * p.block_width + j];
        double v = args.alpha * acc;
        if (args.beta != 0.0) v += args.beta * detail::to_double(out);
        out = detail::Store<S>::from(v);
      }
    }
  }
}

}  // namespace

void sddmm_reference(const SddmmArgs& args, detail::ThreadPool& pool) {
  const int64_t nnzb = args.pattern.nnzb;
  const int64_t parts = std::min<int64_t>(nnzb, pool.size());
  pool.run(parts, [&](int64_t part) {
    const int64_t begin = nnzb * part / parts;
    const int64_t end = nnzb * (part + 1) / parts;
    switch (args.values.dtype) {
      case BSRMM_DTYPE_F32: reference_blocks<float>(args, begin, end); break;
      case BSRMM_DTYPE_F64: reference_blocks<double>(args, begin, end); break;
      case BSRMM_DTYPE_F16: reference_blocks<f16_t>(args, begin, end); break;
      case BSRMM_DTYPE_BF16: reference_blocks<bf16_t>(args, begin, end); break;
      case BSRMM_DTYPE_FLOAT8_E4M3:  // never here: fp8 SDDMM operands are refused
      case BSRMM_DTYPE_FLOAT8_E5M2: break;
    }
  });
}

}  // namespace bsrmm::cpu
