// cpu_reference_f64acc: the obvious loops, accumulating in f64 whatever the dtype. Slow by
// design; it exists to be easy to trust. fp8 operands go to reference_fp8.cpp.
#include "../common/half.hpp"
#include "cpu_backend.hpp"
#include "epilogue.hpp"
#include "partition.hpp"

namespace bsrmm::cpu {

namespace {

using detail::bf16_t;
using detail::f16_t;

inline int64_t offset(const bsrmm_dense& d, int64_t row, int64_t col) {
  return d.layout == BSRMM_LAYOUT_ROW_MAJOR ? row * d.ld + col : col * d.ld + row;
}

template <typename S>
void reference_rows(const MatmulArgs& args, int64_t row_begin, int64_t row_end) {
  const BsrView& a = args.a;
  const S* values = static_cast<const S*>(a.values);
  const S* b = static_cast<const S*>(args.b.data);
  S* c = static_cast<S*>(args.c.data);
  const S* bias = static_cast<const S*>(args.bias);
  const int64_t n = args.c.cols;
  const int64_t block = int64_t{a.block_height} * a.block_width;
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int32_t i = 0; i < a.block_height; ++i) {
      const int64_t row = r * a.block_height + i;
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
          const S* block_row = values + p * block + int64_t{i} * a.block_width;
          const int64_t k0 = int64_t{a.col_idx[p]} * a.block_width;
          for (int32_t k = 0; k < a.block_width; ++k) {
            acc += detail::to_double(block_row[k]) * detail::to_double(b[offset(args.b, k0 + k, j)]);
          }
        }
        double out = args.alpha * acc;
        const int64_t at = offset(args.c, row, j);
        if (args.beta != 0.0) out += args.beta * detail::to_double(c[at]);
        if (bias) out += detail::to_double(bias[row]);
        c[at] = detail::Store<S>::from(activate(out, args.activation));
      }
    }
  }
}

}  // namespace

void matmul_reference(const MatmulArgs& args, detail::ThreadPool& pool) {
  const std::vector<RowRange> ranges =
      split_rows(args.a.work_prefix, args.a.block_row_count, pool.size());
  pool.run(static_cast<int64_t>(ranges.size()), [&](int64_t t) {
    const RowRange range = ranges[static_cast<size_t>(t)];
    switch (args.a.dtype) {
      case BSRMM_DTYPE_F32: reference_rows<float>(args, range.begin, range.end); break;
      case BSRMM_DTYPE_F64: reference_rows<double>(args, range.begin, range.end); break;
      case BSRMM_DTYPE_F16: reference_rows<f16_t>(args, range.begin, range.end); break;
      case BSRMM_DTYPE_BF16: reference_rows<bf16_t>(args, range.begin, range.end); break;
      case BSRMM_DTYPE_FLOAT8_E4M3:
      case BSRMM_DTYPE_FLOAT8_E5M2: reference_fp8_rows(args, range.begin, range.end); break;
    }
  });
}

}  // namespace bsrmm::cpu
