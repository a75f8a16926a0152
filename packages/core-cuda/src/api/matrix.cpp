// Matrix entry points: construction (validated), conversion, export and copies.
#include "../common/dtype.hpp"
#include "../device/device_runtime.hpp"
#include "../matrix/dense_conversion.hpp"
#include "../matrix/plan.hpp"
#include "../matrix/transpose.hpp"
#include "guard.hpp"
#include "handles.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
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

// The context's device must be the matrix's: the new values go where the matrix is.
void require_on_context(const BsrMatrix& m, const bsrmm_context_s& context) {
  if (!bsrmm::detail::same_device(m.device(), context.device)) {
    bsrmm::detail::invalid_argument("a is on ", bsrmm::detail::describe(m.device()),
                                    " but the context is on ", bsrmm::detail::describe(context.device),
                                    "; copy it there first (bsrmm_matrix_copy_to)");
  }
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

bsrmm_status bsrmm_matrix_transpose(bsrmm_context_t ctx, bsrmm_matrix_t a, bsrmm_matrix_t* out) {
  return guarded(__func__, [&] {
    bsrmm_matrix_t& result = require(out, "out");
    result = nullptr;
    bsrmm_context_s& context = require(ctx, "ctx");
    const BsrMatrix& m = *require(a, "a").matrix;
    require_on_context(m, context);
    void* stream = bsrmm::api::stream_of(context);
    result = wrap(bsrmm::matrix::build_transposed(m, m.plan().transposed_structure(stream), stream));
  });
}

bsrmm_status bsrmm_matrix_transpose_values(bsrmm_context_t ctx, bsrmm_matrix_t a, void* out) {
  return guarded(__func__, [&] {
    bsrmm_context_s& context = require(ctx, "ctx");
    const BsrMatrix& m = *require(a, "a").matrix;
    require_on_context(m, context);
    if (bsrmm::detail::is_fp8(m.dtype())) {
      bsrmm::detail::fail(BSRMM_STATUS_UNSUPPORTED, "a is ", bsrmm::detail::name(m.dtype()),
                          ": fp8 values without their scales are not the matrix (use "
                          "bsrmm_matrix_transpose, which moves both)");
    }
    const std::size_t bytes = m.value_bytes();
    if (bytes == 0) return;
    if (out == nullptr) bsrmm::detail::invalid_argument("out is NULL but a has ", m.shape().nnzb, " blocks");
    const std::size_t element = bsrmm::detail::element_size(m.dtype());
    if (reinterpret_cast<std::uintptr_t>(out) % element != 0)
      bsrmm::detail::invalid_argument("out is not aligned to ", element, " bytes (its element size)");
    bsrmm::detail::check_pointer_on(out, m.device(), "out");
    const auto* first = static_cast<const unsigned char*>(out);
    const auto* values = static_cast<const unsigned char*>(m.values().data());
    if (first < values + bytes && values < first + bytes)
      bsrmm::detail::invalid_argument("out overlaps a's values: A^T's blocks are read from them while out is written");
    void* stream = bsrmm::api::stream_of(context);
    // The structure's transposition is planned on first use (host work, an upload and a wait),
    // which a CUDA graph capture cannot hold.
    if (bsrmm::detail::stream_capturing(m.device(), stream) && !m.plan().has_transposed_structure()) {
      bsrmm::detail::fail(BSRMM_STATUS_UNSUPPORTED,
                          "the context's CUDA stream is being captured into a CUDA graph, but a's "
                          "structure was never transposed: the first bsrmm_matrix_transpose_values "
                          "(or bsrmm_matrix_transpose) of a structure plans it (device memory and a "
                          "wait on the stream). Call it once before capturing");
    }
    bsrmm::matrix::write_transposed_values(m, m.plan().transposed_structure(stream), out, stream);
  });
}

}  // extern "C"
