// Header-only C++ layer over the C ABI: RAII handles and exceptions. Bindings (pybind11, cxx)
// use this instead of checking statuses by hand; it adds no behaviour of its own.
#pragma once

#include <bsrmm/bsrmm.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace bsrmm {

// Thrown for every non-success status; carries the status and the core's message.
class Error : public std::runtime_error {
 public:
  Error(bsrmm_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  bsrmm_status status() const noexcept { return status_; }
  const char* code() const noexcept { return bsrmm_status_name(status_); }

 private:
  bsrmm_status status_;
};

inline void check(bsrmm_status status) {
  if (status != BSRMM_STATUS_SUCCESS) throw Error(status, bsrmm_last_error());
}

inline bsrmm_device cpu() { return bsrmm_device{BSRMM_DEVICE_CPU, 0}; }
inline bsrmm_device cuda(int32_t ordinal = 0) { return bsrmm_device{BSRMM_DEVICE_CUDA, ordinal}; }

class Context {
 public:
  explicit Context(bsrmm_device device = cpu()) { check(bsrmm_context_create(device, &handle_)); }
  ~Context() { bsrmm_context_destroy(handle_); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  Context(Context&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Context& operator=(Context&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }

  bsrmm_context_t get() const noexcept { return handle_; }
  bsrmm_device device() const {
    bsrmm_device d{};
    check(bsrmm_context_get_device(handle_, &d));
    return d;
  }
  void set_stream(void* stream) { check(bsrmm_context_set_stream(handle_, stream)); }
  void* stream() const {
    void* s = nullptr;
    check(bsrmm_context_get_stream(handle_, &s));
    return s;
  }
  void set_num_threads(int32_t threads) { check(bsrmm_context_set_num_threads(handle_, threads)); }
  int32_t num_threads() const {
    int32_t threads = 0;
    check(bsrmm_context_get_num_threads(handle_, &threads));
    return threads;
  }
  void set_f32_mode(bsrmm_f32_mode mode) { check(bsrmm_context_set_f32_mode(handle_, mode)); }
  void set_tuning_mode(bsrmm_tuning_mode mode) {
    check(bsrmm_context_set_tuning_mode(handle_, mode));
  }
  void set_variant(const std::string& name) {
    check(bsrmm_context_set_variant(handle_, name.c_str()));
  }
  void set_sm_budget(int32_t count) { check(bsrmm_context_set_sm_budget(handle_, count)); }
  int32_t sm_budget() const {
    int32_t count = 0;
    check(bsrmm_context_get_sm_budget(handle_, &count));
    return count;
  }
  std::string last_variant() const { return bsrmm_context_last_variant(handle_); }
  void synchronize() { check(bsrmm_context_synchronize(handle_)); }

 private:
  bsrmm_context_t handle_ = nullptr;
};

class Matrix {
 public:
  Matrix(Context& ctx, const bsrmm_bsr_desc& desc, uint32_t flags = BSRMM_CREATE_DEFAULT) {
    check(bsrmm_matrix_create(ctx.get(), &desc, flags, &handle_));
  }
  // An fp8 matrix with its scales (bsrmm_matrix_create_scaled).
  static Matrix scaled(Context& ctx, const bsrmm_bsr_desc& desc, const bsrmm_scales& scales,
                       uint32_t flags = BSRMM_CREATE_DEFAULT) {
    Matrix m;
    check(bsrmm_matrix_create_scaled(ctx.get(), &desc, &scales, flags, &m.handle_));
    return m;
  }
  static Matrix from_dense(Context& ctx, const bsrmm_dense& dense, int32_t block_height,
                           int32_t block_width) {
    Matrix m;
    check(bsrmm_matrix_from_dense(ctx.get(), &dense, block_height, block_width, &m.handle_));
    return m;
  }
  ~Matrix() { bsrmm_matrix_destroy(handle_); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  Matrix(Matrix&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Matrix& operator=(Matrix&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }

  bsrmm_matrix_t get() const noexcept { return handle_; }
  bsrmm_matrix_info info() const {
    bsrmm_matrix_info i{};
    check(bsrmm_matrix_get_info(handle_, &i));
    return i;
  }
  void export_to(bsrmm_index_type index_type, void* row_ptr, void* col_idx, void* values) const {
    check(bsrmm_matrix_export(handle_, index_type, row_ptr, col_idx, values));
  }
  void to_dense(Context& ctx, bsrmm_dense& out) const {
    check(bsrmm_matrix_to_dense(ctx.get(), handle_, &out));
  }
  Matrix copy_to(Context& ctx) const {
    Matrix m;
    check(bsrmm_matrix_copy_to(ctx.get(), handle_, &m.handle_));
    return m;
  }
  // Same structure, other values (see bsrmm_matrix_with_values).
  Matrix with_values(Context& ctx, const void* values, bsrmm_device values_device,
                     uint32_t flags = BSRMM_CREATE_DEFAULT) const {
    Matrix m;
    check(bsrmm_matrix_with_values(ctx.get(), handle_, values, values_device, flags, &m.handle_));
    return m;
  }
  // A^T as a matrix of its own (see bsrmm_matrix_transpose).
  Matrix transpose(Context& ctx) const {
    Matrix m;
    check(bsrmm_matrix_transpose(ctx.get(), handle_, &m.handle_));
    return m;
  }
  // A^T's values written into `out` on this matrix's device (see bsrmm_matrix_transpose_values).
  void transpose_values(Context& ctx, void* out) const {
    check(bsrmm_matrix_transpose_values(ctx.get(), handle_, out));
  }

 private:
  Matrix() = default;
  bsrmm_matrix_t handle_ = nullptr;
};

inline bsrmm_matmul_options matmul_options() { return bsrmm_matmul_options_default(); }

inline void matmul(Context& ctx, const Matrix& a, const bsrmm_dense& b, bsrmm_dense& c,
                   const bsrmm_matmul_options& options = matmul_options()) {
  check(bsrmm_matmul(ctx.get(), a.get(), &b, &c, &options));
}

// Measures every eligible variant, caches and runs the fastest; returns its name.
inline std::string tune(Context& ctx, const Matrix& a, const bsrmm_dense& b, bsrmm_dense& c,
                        const bsrmm_matmul_options& options = matmul_options()) {
  check(bsrmm_tune(ctx.get(), a.get(), &b, &c, &options));
  return ctx.last_variant();
}

inline bsrmm_sddmm_options sddmm_options() { return bsrmm_sddmm_options_default(); }

// values[b] = alpha * (X Y)[block b of pattern] + beta * values[b] (see bsrmm_sddmm).
inline void sddmm(Context& ctx, const Matrix& pattern, const bsrmm_dense& x, const bsrmm_dense& y,
                  bsrmm_dense& values, double alpha = 1.0, double beta = 0.0) {
  bsrmm_sddmm_options options = sddmm_options();
  options.alpha = alpha;
  options.beta = beta;
  check(bsrmm_sddmm(ctx.get(), pattern.get(), &x, &y, &values, &options));
}

namespace detail {
// Calls a (buf, len, needed) function of the C ABI until the text fits (it may grow between
// calls, as other threads and processes store entries).
template <typename Get>
std::string read_text(Get get) {
  std::string text;
  size_t needed = 0;
  check(get(nullptr, 0, &needed));
  for (;;) {
    text.resize(needed);
    const bsrmm_status status = get(text.data(), text.size(), &needed);
    if (status == BSRMM_STATUS_SUCCESS) break;
    if (needed <= text.size()) check(status);
  }
  text.resize(needed > 0 ? needed - 1 : 0);
  return text;
}
}  // namespace detail

inline std::string tuner_cache_path() { return detail::read_text(bsrmm_tuner_cache_path); }
inline std::string tuner_cache_entries() { return detail::read_text(bsrmm_tuner_cache_entries); }
inline std::string tuner_cache_warning() { return detail::read_text(bsrmm_tuner_cache_warning); }
inline void tuner_cache_clear() { check(bsrmm_tuner_cache_clear()); }

}  // namespace bsrmm
