#include "bsrmm-sys/shim/bsrmm_shim.hpp"

#include "bsrmm-sys/src/lib.rs.h"

namespace bsrmm_sys {
namespace {

bsrmm_device to_c(const Device& d) {
  return bsrmm_device{static_cast<bsrmm_device_type>(d.kind), d.ordinal};
}

Device from_c(const bsrmm_device& d) { return Device{static_cast<int32_t>(d.type), d.ordinal}; }

bsrmm_dense to_c(const Dense& d) {
  return bsrmm_dense{reinterpret_cast<void*>(d.data),
                     d.rows,
                     d.cols,
                     d.ld,
                     static_cast<bsrmm_layout>(d.layout),
                     static_cast<bsrmm_dtype>(d.dtype),
                     to_c(d.device)};
}

bsrmm_bsr_desc to_c(const BsrDesc& desc) {
  return bsrmm_bsr_desc{desc.rows,
                        desc.cols,
                        desc.block_height,
                        desc.block_width,
                        desc.nnzb,
                        reinterpret_cast<const void*>(desc.row_ptr),
                        reinterpret_cast<const void*>(desc.col_idx),
                        static_cast<bsrmm_index_type>(desc.index_type),
                        reinterpret_cast<const void*>(desc.values),
                        static_cast<bsrmm_dtype>(desc.dtype),
                        to_c(desc.device)};
}

bsrmm_scales to_c(const Scales& s) {
  bsrmm_scales c = bsrmm_scales_default();
  c.kind = static_cast<bsrmm_scale_kind>(s.kind);
  c.data = reinterpret_cast<const float*>(s.data);
  c.count = s.count;
  c.device = to_c(s.device);
  return c;
}

}  // namespace

rust::String version() { return rust::String(bsrmm_version()); }

rust::String status_name(int32_t status) {
  return rust::String(bsrmm_status_name(static_cast<bsrmm_status>(status)));
}

bool cuda_compiled() { return bsrmm_cuda_compiled() != 0; }

int32_t cuda_device_count() {
  int32_t count = 0;
  bsrmm::check(bsrmm_cuda_device_count(&count));
  return count;
}

std::unique_ptr<Context> context_new(const Device& device) {
  return std::make_unique<Context>(to_c(device));
}

Device context_device(const Context& ctx) { return from_c(ctx.device()); }

void context_set_stream(Context& ctx, size_t stream) {
  ctx.set_stream(reinterpret_cast<void*>(stream));
}

size_t context_stream(const Context& ctx) { return reinterpret_cast<size_t>(ctx.stream()); }

void context_set_num_threads(Context& ctx, int32_t threads) { ctx.set_num_threads(threads); }

void context_set_f32_mode(Context& ctx, int32_t mode) {
  ctx.set_f32_mode(static_cast<bsrmm_f32_mode>(mode));
}

void context_set_tuning_mode(Context& ctx, int32_t mode) {
  ctx.set_tuning_mode(static_cast<bsrmm_tuning_mode>(mode));
}

void context_set_variant(Context& ctx, rust::Str name) { ctx.set_variant(std::string(name)); }

rust::String context_last_variant(const Context& ctx) { return rust::String(ctx.last_variant()); }

void context_synchronize(Context& ctx) { ctx.synchronize(); }

std::unique_ptr<Matrix> matrix_new(Context& ctx, const BsrDesc& desc, uint32_t flags) {
  return std::make_unique<Matrix>(ctx, to_c(desc), flags);
}

std::unique_ptr<Matrix> matrix_new_scaled(Context& ctx, const BsrDesc& desc, const Scales& scales,
                                          uint32_t flags) {
  return std::make_unique<Matrix>(Matrix::scaled(ctx, to_c(desc), to_c(scales), flags));
}

ScalesInfo matrix_export_scales(const Matrix& matrix, size_t data) {
  bsrmm_scale_kind kind = BSRMM_SCALE_PER_TENSOR;
  int64_t count = 0;
  bsrmm::check(bsrmm_matrix_export_scales(matrix.get(), &kind, &count, reinterpret_cast<float*>(data)));
  return ScalesInfo{static_cast<int32_t>(kind), count};
}

std::unique_ptr<Matrix> matrix_from_dense(Context& ctx, const Dense& dense, int32_t block_height,
                                          int32_t block_width) {
  return std::make_unique<Matrix>(
      Matrix::from_dense(ctx, to_c(dense), block_height, block_width));
}

std::unique_ptr<Matrix> matrix_copy_to(Context& ctx, const Matrix& matrix) {
  return std::make_unique<Matrix>(matrix.copy_to(ctx));
}

std::unique_ptr<Matrix> matrix_with_values(Context& ctx, const Matrix& like, size_t values,
                                           const Device& values_device, uint32_t flags) {
  return std::make_unique<Matrix>(
      like.with_values(ctx, reinterpret_cast<const void*>(values), to_c(values_device), flags));
}

MatrixInfo matrix_info(const Matrix& matrix) {
  const bsrmm_matrix_info i = matrix.info();
  return MatrixInfo{i.rows,      i.cols, i.block_height,        i.block_width,
                    i.nnzb, static_cast<int32_t>(i.dtype), from_c(i.device)};
}

void matrix_export(const Matrix& matrix, int32_t index_type, size_t row_ptr, size_t col_idx,
                   size_t values) {
  matrix.export_to(static_cast<bsrmm_index_type>(index_type), reinterpret_cast<void*>(row_ptr),
                   reinterpret_cast<void*>(col_idx), reinterpret_cast<void*>(values));
}

void matrix_to_dense(Context& ctx, const Matrix& matrix, const Dense& out) {
  bsrmm_dense c = to_c(out);
  matrix.to_dense(ctx, c);
}

void matmul(Context& ctx, const Matrix& a, const Dense& b, const Dense& c,
            const MatmulOptions& options) {
  bsrmm_matmul_options o = bsrmm::matmul_options();
  o.op_a = static_cast<bsrmm_op>(options.op_a);
  o.alpha = options.alpha;
  o.beta = options.beta;
  o.bias = reinterpret_cast<const void*>(options.bias);
  o.activation = static_cast<bsrmm_activation>(options.activation);
  const bsrmm_scales b_scales = to_c(options.b_scales);
  if (options.has_b_scales) o.b_scales = &b_scales;
  bsrmm_dense c_desc = to_c(c);
  bsrmm::matmul(ctx, a, to_c(b), c_desc, o);
}

void sddmm(Context& ctx, const Matrix& pattern, const Dense& x, const Dense& y, const Dense& values,
           const SddmmOptions& options) {
  bsrmm_dense values_desc = to_c(values);
  bsrmm::sddmm(ctx, pattern, to_c(x), to_c(y), values_desc, options.alpha, options.beta);
}

int32_t variant_count() { return bsrmm_variant_count(); }

rust::String variant_name(int32_t index) {
  const char* name = bsrmm_variant_name(index);
  return rust::String(name != nullptr ? name : "");
}

bool variant_is_sddmm(int32_t index) {
  bsrmm_variant_kind kind = BSRMM_VARIANT_MATMUL;
  bsrmm::check(bsrmm_variant_get_kind(index, &kind));
  return kind == BSRMM_VARIANT_SDDMM;
}

}  // namespace bsrmm_sys
