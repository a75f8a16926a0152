// Matrix entry points: construction (validated), conversion, export and copies.
#include "../common/dtype.hpp"
#include "../matrix/dense_conversion.hpp"
#include "guard.hpp"
#include "handles.hpp"

#include <bsrmm/bsrmm.h>

#include <cstring>
#include <memory>
#include <vector>

namespace {

using bsrmm::api::guarded;
using bsrmm::api::require;
using bsrmm::matrix::BsrMatrix;

bsrmm_matrix_t wrap(std::unique_ptr<BsrMatrix> matrix) {
  auto handle = std::make_unique<bsrmm_matrix_s>();
  handle->matrix = std::move(matrix);
  return handle.release();
}

// bsrmm_matrix_create and bsrmm_matrix_create_scaled: `out` is cleared before anything else is
// checked (a refused call leaves no stale handle), then ctx, desc and, when `scaled`, scales
// are required in that order.
void create_into(bsrmm_context_t ctx, const bsrmm_bsr_desc* desc, bool scaled,
                 const bsrmm_scales* scales, uint32_t flags, bsrmm_matrix_t* out) {
  bsrmm_matrix_t& result = require(out, "out");
  result = nullptr;
  bsrmm_context_s& context = require(ctx, "ctx");
  const bsrmm_bsr_desc& description = require(desc, "desc");
  const bsrmm_scales* given = scaled ? &require(scales, "scales") : nullptr;
  result = wrap(BsrMatrix::create(description, flags, context.device,
                                  bsrmm::api::stream_of(context), given));
}

}  // namespace

extern "C" {

bsrmm_status bsrmm_matrix_create(bsrmm_context_t ctx, const bsrmm_bsr_desc* desc, uint32_t flags,
                                 bsrmm_matrix_t* out) {
  return guarded(__func__, [&] { create_into(ctx, desc, false, nullptr, flags, out); });
}

bsrmm_scales bsrmm_scales_default(void) {
  bsrmm_scales scales{};
  scales.struct_size = sizeof(scales);
  scales.kind = BSRMM_SCALE_PER_TENSOR;
  scales.device = bsrmm_device{BSRMM_DEVICE_CPU, 0};
  return scales;
}

bsrmm_status bsrmm_matrix_create_scaled(bsrmm_context_t ctx, const bsrmm_bsr_desc* desc,
                                        const bsrmm_scales* scales, uint32_t flags,
                                        bsrmm_matrix_t* out) {
  return guarded(__func__, [&] { create_into(ctx, desc, true, scales, flags, out); });
}

bsrmm_status bsrmm_matrix_export_scales(bsrmm_matrix_t matrix, bsrmm_scale_kind* kind,
                                        int64_t* count, float* data) {
  return guarded(__func__, [&] {
    const BsrMatrix& m = *require(matrix, "matrix").matrix;
    bsrmm_scale_kind& kind_out = require(kind, "kind");
    int64_t& count_out = require(count, "count");
    if (m.scales() == nullptr) {
      bsrmm::detail::invalid_argument("matrix is ", bsrmm::detail::name(m.dtype()),
                                      ": only fp8 matrices have scales");
    }
    kind_out = m.scales()->kind;
    count_out = static_cast<int64_t>(m.scales()->values.size());
    if (data != nullptr && count_out > 0)
      std::memcpy(data, m.scales()->values.data(), m.scales()->values.size() * sizeof(float));
  });
}

bsrmm_status bsrmm_matrix_from_dense(bsrmm_context_t ctx, const bsrmm_dense* dense,
                                     int32_t block_height, int32_t block_width,
                                     bsrmm_matrix_t* out) {
  return guarded(__func__, [&] {
    bsrmm_matrix_t& result = require(out, "out");
    result = nullptr;
    bsrmm_context_s& context = require(ctx, "ctx");
    const bsrmm_dense& source = require(dense, "dense");
    result = wrap(bsrmm::matrix::from_dense(source, block_height, block_width, context.device,
                                            bsrmm::api::stream_of(context)));
  });
}

void bsrmm_matrix_destroy(bsrmm_matrix_t matrix) { delete matrix; }

bsrmm_status bsrmm_matrix_get_info(bsrmm_matrix_t matrix, bsrmm_matrix_info* out) {
  return guarded(__func__, [&] {
    bsrmm_matrix_info& info = require(out, "out");
    const BsrMatrix& m = *require(matrix, "matrix").matrix;
    const bsrmm::matrix::BsrShape& shape = m.shape();
    info = bsrmm_matrix_info{shape.rows, shape.cols, shape.block_height, shape.block_width,
                             shape.nnzb, m.dtype(), m.device()};
  });
}

bsrmm_status bsrmm_matrix_export(bsrmm_matrix_t matrix, bsrmm_index_type index_type,
                                 void* row_ptr, void* col_idx, void* values) {
  return guarded(__func__, [&] {
    require(matrix, "matrix").matrix->export_to(index_type, row_ptr, col_idx, values);
  });
}

bsrmm_status bsrmm_matrix_to_dense(bsrmm_context_t ctx, bsrmm_matrix_t matrix, bsrmm_dense* out) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    const BsrMatrix& m = *require(matrix, "matrix").matrix;
    const bsrmm_dense& target = require(out, "out");
    if (bsrmm::detail::is_fp8(m.dtype())) {
      bsrmm::detail::fail(BSRMM_STATUS_UNSUPPORTED, "matrix is ", bsrmm::detail::name(m.dtype()),
                          ": bsrmm_matrix_to_dense writes a matrix's own dtype, and fp8 values "
                          "without their scales are not the matrix (export values and scales)");
    }
    bsrmm::matrix::to_dense(m, target, context.device, bsrmm::api::stream_of(context));
  });
}

bsrmm_status bsrmm_matrix_copy_to(bsrmm_context_t ctx, bsrmm_matrix_t matrix, bsrmm_matrix_t* out) {
  return guarded(__func__, [&] {
    bsrmm_matrix_t& result = require(out, "out");
    result = nullptr;
    bsrmm_context_s& context = require(ctx, "ctx");
    const BsrMatrix& m = *require(matrix, "matrix").matrix;
    std::vector<unsigned char> values(m.value_bytes());
    m.copy_values_to_host(values.data());
    result = wrap(BsrMatrix::from_host(m.structure(), m.dtype(), values.data(), context.device,
                                       bsrmm::api::stream_of(context), m.scales()));
  });
}

bsrmm_status bsrmm_matrix_with_values(bsrmm_context_t ctx, bsrmm_matrix_t like,
                                      const void* values, bsrmm_device values_device,
                                      uint32_t flags, bsrmm_matrix_t* out) {
  return guarded(__func__, [&] {
    bsrmm_matrix_t& result = require(out, "out");
    result = nullptr;
    bsrmm_context_s& context = require(ctx, "ctx");
    const BsrMatrix& m = *require(like, "like").matrix;
    result = wrap(m.with_values(values, values_device, flags, context.device,
                                bsrmm::api::stream_of(context)));
  });
}

}  // extern "C"
