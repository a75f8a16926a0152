// The C++ side of the cxx bridge: free functions over bsrmm.hpp that cxx can call. The bridge's
// plain structs (Dense, BsrDesc, ...) are defined by cxx in the generated header; this file only
// translates them into the C ABI's descriptors.
#pragma once

#include <bsrmm/bsrmm.hpp>

#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "rust/cxx.h"

// cxx turns a C++ exception into Err(cxx::Exception) carrying only a message. The status code must
// survive too, so every failure is encoded as "<status name>\x1f<message>"; bsrmm-sys splits it.
namespace rust {
namespace behavior {
template <typename Try, typename Fail>
static void trycatch(Try&& func, Fail&& fail) noexcept try {
  func();
} catch (const bsrmm::Error& e) {
  fail((std::string(e.code()) + '\x1f' + e.what()).c_str());
} catch (const std::bad_alloc& e) {
  fail((std::string(bsrmm_status_name(BSRMM_STATUS_OUT_OF_MEMORY)) + '\x1f' + e.what()).c_str());
} catch (const std::exception& e) {
  fail((std::string(bsrmm_status_name(BSRMM_STATUS_INTERNAL)) + '\x1f' + e.what()).c_str());
}
}  // namespace behavior
}  // namespace rust

namespace bsrmm_sys {

struct Device;
struct Dense;
struct BsrDesc;
struct MatrixInfo;
struct MatmulOptions;
struct Scales;
struct ScalesInfo;
struct SddmmOptions;

using Context = bsrmm::Context;
using Matrix = bsrmm::Matrix;

rust::String version();
rust::String status_name(int32_t status);
bool cuda_compiled();
int32_t cuda_device_count();

std::unique_ptr<Context> context_new(const Device& device);
Device context_device(const Context& ctx);
void context_set_stream(Context& ctx, size_t stream);
size_t context_stream(const Context& ctx);
void context_set_num_threads(Context& ctx, int32_t threads);
void context_set_f32_mode(Context& ctx, int32_t mode);
void context_set_tuning_mode(Context& ctx, int32_t mode);
void context_set_variant(Context& ctx, rust::Str name);
rust::String context_last_variant(const Context& ctx);
void context_synchronize(Context& ctx);

std::unique_ptr<Matrix> matrix_new(Context& ctx, const BsrDesc& desc, uint32_t flags);
std::unique_ptr<Matrix> matrix_new_scaled(Context& ctx, const BsrDesc& desc, const Scales& scales,
                                          uint32_t flags);
ScalesInfo matrix_export_scales(const Matrix& matrix, size_t data);
std::unique_ptr<Matrix> matrix_from_dense(Context& ctx, const Dense& dense, int32_t block_height,
                                          int32_t block_width);
std::unique_ptr<Matrix> matrix_copy_to(Context& ctx, const Matrix& matrix);
std::unique_ptr<Matrix> matrix_with_values(Context& ctx, const Matrix& like, size_t values,
                                           const Device& values_device, uint32_t flags);
MatrixInfo matrix_info(const Matrix& matrix);
void matrix_export(const Matrix& matrix, int32_t index_type, size_t row_ptr, size_t col_idx,
                   size_t values);
void matrix_to_dense(Context& ctx, const Matrix& matrix, const Dense& out);

void matmul(Context& ctx, const Matrix& a, const Dense& b, const Dense& c,
            const MatmulOptions& options);

void sddmm(Context& ctx, const Matrix& pattern, const Dense& x, const Dense& y, const Dense& values,
           const SddmmOptions& options);

int32_t variant_count();
rust::String variant_name(int32_t index);
bool variant_is_sddmm(int32_t index);

}  // namespace bsrmm_sys
