#include "fp8_widen.hpp"

#include "../common/float8.hpp"
#include "../matrix/value_scales.hpp"

#include <algorithm>
#include <cstdint>

namespace bsrmm::cpu {

backend::MatmulArgs widened_fp8(const backend::MatmulArgs& args, detail::Buffer& scratch,
                                detail::ThreadPool& pool) {
  const bsrmm_dense& b = args.b;
  const int64_t rows = b.rows, cols = b.cols;
  const std::size_t bytes = static_cast<std::size_t>(std::max<int64_t>(1, rows * cols)) * sizeof(float);
  if (scratch.size() < bytes) scratch = detail::Buffer::allocate(bytes, scratch.device());
  float* out = scratch.as<float>();
  const float* table = detail::fp8_table(b.dtype == BSRMM_DTYPE_FLOAT8_E4M3);
  const uint8_t* in = static_cast<const uint8_t*>(b.data);
  const bool row_major = b.layout == BSRMM_LAYOUT_ROW_MAJOR;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(rows, pool.size()));
  pool.run(parts, [&](int64_t part) {
    for (int64_t k = rows * part / parts; k < rows * (part + 1) / parts; ++k) {
      for (int64_t j = 0; j < cols; ++j) {
        const uint8_t x = row_major ? in[k * b.ld + j] : in[j * b.ld + k];
        out[k * cols + j] = table[x] * matrix::dense_scale(args.b_scales, args.b_scale_kind, j);
      }
    }
  });
  backend::MatmulArgs widened = args;
  widened.b = bsrmm_dense{out, rows, cols, std::max<int64_t>(1, cols), BSRMM_LAYOUT_ROW_MAJOR,
                          BSRMM_DTYPE_F32, b.device};
  widened.b_scales = nullptr;
  widened.device_b_scales = nullptr;
  widened.b_scale_kind = BSRMM_SCALE_PER_TENSOR;
  return widened;
}

}  // namespace bsrmm::cpu
