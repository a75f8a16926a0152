#include "gpu_test_support.hpp"

#include "../support/dense_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <sstream>

namespace bsrmm::test {

const char* dtype_label(bsrmm_dtype dtype) {
  switch (dtype) {
    case BSRMM_DTYPE_F32: return "f32";
    case BSRMM_DTYPE_F16: return "f16";
    case BSRMM_DTYPE_BF16: return "bf16";
    case BSRMM_DTYPE_F64: return "f64";
  }
  return "?";
}

uint64_t test_seed() {
  static const uint64_t seed = [] {
    if (const char* text = std::getenv("BSRMM_TEST_SEED")) return uint64_t(std::strtoull(text, nullptr, 0));
    std::random_device device;
    return (uint64_t(device()) << 32) | device();
  }();
  return seed;
}

std::string Problem::describe() const {
  std::ostringstream text;
  text << dtype_label(dtype) << (dtype == BSRMM_DTYPE_F32 ? (f32_mode == BSRMM_F32_TF32 ? "/tf32" : "/exact") : "")
       << " A " << block_rows << "x" << block_cols << " blocks of " << block_height << "x"
       << block_width << " density " << density << (empty_rows ? " (empty rows)" : "")
       << (op == BSRMM_OP_TRANSPOSE ? " transposed" : "") << ", N " << n << ", B "
       << (b_layout == BSRMM_LAYOUT_ROW_MAJOR ? "row" : "col") << " pad " << b_ld_pad << "/" << b_ld_align
       << " offset " << b_offset << ", C " << (c_layout == BSRMM_LAYOUT_ROW_MAJOR ? "row" : "col")
       << " pad " << c_ld_pad << "/" << c_ld_align << ", alpha " << alpha << " beta " << beta
       << (bias ? " bias" : "") << " activation " << int(activation)
       << (variant.empty() ? "" : ", variant " + variant) << (device_arrays ? ", device arrays" : "") << (borrow_values ? " (values borrowed)" : "")
       << (sm_budget > 0 ? ", SM budget " + std::to_string(sm_budget) : "");
  return text.str();
}

Problem shaped_problem(bsrmm_dtype dtype, int64_t block_rows, int64_t block_cols, int32_t bh,
                       int32_t bw, int64_t n, double density) {
  Problem p;
  p.dtype = dtype;
  p.block_rows = block_rows;
  p.block_cols = block_cols;
  p.block_height = bh;
  p.block_width = bw;
  p.n = n;
  p.density = density;
  return p;
}

double tolerance(const Problem& problem) {
  switch (problem.dtype) {
    case BSRMM_DTYPE_F16: return 1e-3;
    case BSRMM_DTYPE_BF16: return 1e-2;
    case BSRMM_DTYPE_F32: return problem.f32_mode == BSRMM_F32_TF32 ? 1e-3 : 1e-5;
    case BSRMM_DTYPE_F64: return 1e-12;
  }
  return 0.0;
}

namespace {

// A dense matrix stored as the C ABI sees it, plus its exact values in float64.
struct StagedDense {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  bsrmm_layout layout = BSRMM_LAYOUT_ROW_MAJOR;
  int64_t offset = 0;  // elements before (0, 0)
  std::vector<unsigned char> bytes;

  StagedDense(int64_t rows_, int64_t cols_, int64_t pad, int64_t align, int64_t offset_,
              bsrmm_layout layout_, bsrmm_dtype dtype)
      : rows(rows_), cols(cols_), layout(layout_), offset(offset_) {
    const int64_t inner = layout == BSRMM_LAYOUT_ROW_MAJOR ? cols : rows;
    const int64_t outer = layout == BSRMM_LAYOUT_ROW_MAJOR ? rows : cols;
    ld = std::max<int64_t>((inner + pad + align - 1) / align * align, 1);
    // Exactly as many elements as the operand spans: reading past it is an out-of-bounds access.
    const int64_t elements = offset + (outer > 0 ? (outer - 1) * ld + inner : 0);
    bytes.resize(std::size_t(std::max<int64_t>(elements, 1)) * dtype_size(dtype));
    const double poison = std::numeric_limits<double>::quiet_NaN();
    for (int64_t e = 0; e < elements; ++e) store(dtype, &bytes[std::size_t(e) * dtype_size(dtype)], poison);
  }
  int64_t index(int64_t i, int64_t j) const {
    return offset + (layout == BSRMM_LAYOUT_ROW_MAJOR ? i * ld + j : j * ld + i);
  }
};

}  // namespace

Outcome run_and_check(const Problem& pb) {
  Outcome outcome;
  const uint64_t seed = test_seed() ^ std::hash<std::string>{}(pb.describe());
  SCOPED_TRACE("problem: " + pb.describe() + "; replay with BSRMM_TEST_SEED=" + std::to_string(test_seed()));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::bernoulli_distribution keep(pb.density);
  const bsrmm_dtype dtype = pb.dtype;
  const std::size_t esize = dtype_size(dtype);

  // A: random pattern and values, rounded to the dtype.
  const int64_t bh = pb.block_height;
  const int64_t bw = pb.block_width;
  std::vector<int32_t> row_ptr{0};
  std::vector<int32_t> col_idx;
  for (int64_t r = 0; r < pb.block_rows; ++r) {
    const bool empty = pb.empty_rows && (r % 3 == 1 || r == pb.block_rows - 1);
    for (int64_t c = 0; c < pb.block_cols && !empty; ++c)
      if (pb.density >= 1.0 || keep(rng)) col_idx.push_back(int32_t(c));
    row_ptr.push_back(int32_t(col_idx.size()));
  }
  const int64_t nnzb = int64_t(col_idx.size());
  std::vector<double> a_values(std::size_t(nnzb * bh * bw));
  std::vector<unsigned char> a_bytes(std::max<std::size_t>(a_values.size() * esize, 1));
  for (std::size_t e = 0; e < a_values.size(); ++e) {
    a_values[e] = round_to(dtype, uniform(rng));
    store(dtype, &a_bytes[e * esize], a_values[e]);
  }

  const int64_t a_rows = pb.block_rows * bh;
  const int64_t a_cols = pb.block_cols * bw;
  const bool transposed = pb.op == BSRMM_OP_TRANSPOSE;
  const int64_t m = transposed ? a_cols : a_rows;
  const int64_t k = transposed ? a_rows : a_cols;
  const int64_t n = pb.n;

  StagedDense b(k, n, pb.b_ld_pad, pb.b_ld_align, pb.b_offset, pb.b_layout, dtype);
  std::vector<double> b_values(std::size_t(k * n));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double v = round_to(dtype, uniform(rng));
      b_values[std::size_t(i * n + j)] = v;
      store(dtype, &b.bytes[std::size_t(b.index(i, j)) * esize], v);
    }
  StagedDense c(m, n, pb.c_ld_pad, pb.c_ld_align, 0, pb.c_layout, dtype);
  std::vector<double> c_old(std::size_t(m * n), 0.0);
  if (pb.beta != 0.0)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double v = round_to(dtype, uniform(rng));
        c_old[std::size_t(i * n + j)] = v;
        store(dtype, &c.bytes[std::size_t(c.index(i, j)) * esize], v);
      }
  const std::vector<unsigned char> c_before = c.bytes;
  std::vector<double> bias(std::size_t(m), 0.0);
  std::vector<unsigned char> bias_bytes(std::max<std::size_t>(std::size_t(m) * esize, 1));
  if (pb.bias)
    for (int64_t i = 0; i < m; ++i) {
      bias[std::size_t(i)] = round_to(dtype, uniform(rng));
      store(dtype, &bias_bytes[std::size_t(i) * esize], bias[std::size_t(i)]);
    }

  // Device side.
  DeviceBuffer b_device(b.bytes.size());
  DeviceBuffer c_device(c.bytes.size());
  DeviceBuffer bias_device(bias_bytes.size());
  b_device.upload(b.bytes.data(), b.bytes.size());
  c_device.upload(c.bytes.data(), c.bytes.size());
  bias_device.upload(bias_bytes.data(), bias_bytes.size());

  bsrmm_context_t raw_ctx = nullptr;
  [&] { ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CUDA, 0}, &raw_ctx)); }();
  if (!raw_ctx) return outcome;
  ContextHandle ctx(raw_ctx);
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_tuning_mode(ctx.get(), BSRMM_TUNING_OFF));
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_f32_mode(ctx.get(), pb.f32_mode));
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_stream(ctx.get(), pb.stream));
  EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_sm_budget(ctx.get(), pb.sm_budget));
  if (!pb.variant.empty())
    EXPECT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_set_variant(ctx.get(), pb.variant.c_str()));

  DeviceBuffer row_ptr_device, col_idx_device, values_device;
  bsrmm_bsr_desc desc{};
  desc.rows = a_rows;
  desc.cols = a_cols;
  desc.block_height = pb.block_height;
  desc.block_width = pb.block_width;
  desc.nnzb = nnzb;
  desc.index_type = BSRMM_INDEX_I32;
  desc.dtype = dtype;
  if (pb.device_arrays) {
    row_ptr_device = DeviceBuffer(row_ptr.size() * 4);
    col_idx_device = DeviceBuffer(std::max<std::size_t>(col_idx.size() * 4, 4));
    values_device = DeviceBuffer(a_bytes.size());
    row_ptr_device.upload(row_ptr.data(), row_ptr.size() * 4);
    if (!col_idx.empty()) col_idx_device.upload(col_idx.data(), col_idx.size() * 4);
    values_device.upload(a_bytes.data(), a_bytes.size());
    desc.row_ptr = row_ptr_device.get();
    desc.col_idx = col_idx_device.get();
    desc.values = values_device.get();
    desc.device = bsrmm_device{BSRMM_DEVICE_CUDA, 0};
  } else {
    desc.row_ptr = row_ptr.data();
    desc.col_idx = col_idx.data();
    desc.values = a_bytes.data();
    desc.device = bsrmm_device{BSRMM_DEVICE_CPU, 0};
  }
  bsrmm_matrix_t raw_matrix = nullptr;
  [&] { ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matrix_create(ctx.get(), &desc, pb.borrow_values ? BSRMM_CREATE_BORROW_VALUES : BSRMM_CREATE_DEFAULT, &raw_matrix)); }();
  if (!raw_matrix) return outcome;
  MatrixHandle matrix(raw_matrix);

  const bsrmm_device gpu{BSRMM_DEVICE_CUDA, 0};
  bsrmm_dense b_desc{static_cast<char*>(b_device.get()) + b.offset * esize, k, n, b.ld, b.layout, dtype, gpu};
  bsrmm_dense c_desc{c_device.get(), m, n, c.ld, c.layout, dtype, gpu};
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.op_a = pb.op;
  options.alpha = pb.alpha;
  options.beta = pb.beta;
  options.bias = pb.bias ? bias_device.get() : nullptr;
  options.activation = pb.activation;
  bool ran = false;
  [&] {
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_matmul(ctx.get(), matrix.get(), &b_desc, &c_desc, &options));
    ASSERT_BSRMM(BSRMM_STATUS_SUCCESS, bsrmm_context_synchronize(ctx.get()));
    ran = true;
  }();
  if (!ran) return outcome;
  outcome.variant = bsrmm_context_last_variant(ctx.get());
  if (!pb.variant.empty()) EXPECT_EQ(outcome.variant, pb.variant);
  SCOPED_TRACE("variant that ran: " + outcome.variant);

  std::vector<unsigned char> c_after(c.bytes.size());
  c_device.download(c_after.data(), c_after.size());

  // float64 reference from the same (rounded) inputs.
  std::vector<double> ref(std::size_t(m * n), 0.0);
  for (int64_t r = 0; r < pb.block_rows; ++r)
    for (int32_t blk = row_ptr[std::size_t(r)]; blk < row_ptr[std::size_t(r + 1)]; ++blk) {
      const int64_t cb = col_idx[std::size_t(blk)];
      for (int64_t i = 0; i < bh; ++i)
        for (int64_t kk = 0; kk < bw; ++kk) {
          const double a = a_values[std::size_t((blk * bh + i) * bw + kk)];
          const int64_t out_row = transposed ? cb * bw + kk : r * bh + i;
          const int64_t in_row = transposed ? r * bh + i : cb * bw + kk;
          const double* b_row = &b_values[std::size_t(in_row * n)];
          double* c_row = &ref[std::size_t(out_row * n)];
          for (int64_t j = 0; j < n; ++j) c_row[j] += a * b_row[j];
        }
    }
  double ref_squares = 0.0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double& value = ref[std::size_t(i * n + j)];
      value = pb.alpha * value + (pb.beta != 0.0 ? pb.beta * c_old[std::size_t(i * n + j)] : 0.0) +
              bias[std::size_t(i)];
      value = reference_activation(value, pb.activation);
      ref_squares += value * value;
    }

  // Every element: finite where the reference is, close elementwise (scaled by the tile's rms
  // so tiny references do not demand impossible relative accuracy), and in the Frobenius norm.
  const double tol = tolerance(pb);
  const double rms = m * n > 0 ? std::sqrt(ref_squares / double(m * n)) : 0.0;
  double diff_squares = 0.0;
  int reported = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double got = load(dtype, &c_after[std::size_t(c.index(i, j)) * esize]);
      const double want = ref[std::size_t(i * n + j)];
      const double diff = got - want;
      diff_squares += diff * diff;
      const bool ok = std::isfinite(got) && std::abs(diff) <= 16.0 * tol * (std::abs(want) + rms) + 1e-30;
      if (!ok) {
        ++bad;
        if (reported++ < 5) ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", reference " << want;
      }
    }
  EXPECT_EQ(bad, 0) << "elements of C outside the tolerance (of " << m * n << ")";
  // Padding and the elements before B's offset must be untouched.
  int64_t touched = 0;
  for (int64_t e = 0; e < int64_t(c_after.size() / esize); ++e) {
    const int64_t inner = e % c.ld;
    const int64_t extent = c.layout == BSRMM_LAYOUT_ROW_MAJOR ? c.cols : c.rows;
    if (inner < extent) continue;
    if (std::memcmp(&c_after[std::size_t(e) * esize], &c_before[std::size_t(e) * esize], esize) != 0) ++touched;
  }
  EXPECT_EQ(touched, 0) << "elements of C's padding (past each " << (c.layout == BSRMM_LAYOUT_ROW_MAJOR ? "row" : "column") << ") were written";
  outcome.relative_error = ref_squares > 0.0 ? std::sqrt(diff_squares / ref_squares) : std::sqrt(diff_squares);
  EXPECT_LT(outcome.relative_error, tol) << "relative Frobenius error";
  return outcome;
}

bool hopper(std::string* why) {
  if (!gpu_available(why)) return false;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9 || prop.minor != 0) {
    *why = "the sm90 kernels need compute capability 9.0; device 0 is " + std::to_string(prop.major) +
           "." + std::to_string(prop.minor);
    return false;
  }
  return true;
}

}  // namespace bsrmm::test
