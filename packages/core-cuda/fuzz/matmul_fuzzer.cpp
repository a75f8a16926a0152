// libFuzzer target: bsrmm_matmul on a CPU context with arbitrary B and C descriptors (sizes,
// leading dimensions from 0 to 2^30, layouts, dtypes, devices, NULL, misaligned and aliasing
// pointers), op, alpha/beta, bias, activation, options struct, thread count and variant, over a
// small random A. The operand rules are stated again here and predict the verdict. An accepted
// multiply must match a float64 reference over A's stored blocks element by element (values are
// quarter-integers, so f32 sums are exact; NaN and Inf propagate as IEEE says), leave C's
// padding, B and the bias untouched; a rejected one must leave C untouched and name the call.
#include "fuzz_input.hpp"
#include "host_buffer.hpp"
#include "tests/support/host_arrays.hpp"

#include <bsrmm/bsrmm.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace bsrmm::fuzz {
namespace {

using test::load;
using test::store;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "matmul_fuzzer: %s\n", what.c_str());
  std::abort();
}

void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

size_t element_bytes(int32_t dtype) { return dtype == BSRMM_DTYPE_F64 ? 8 : dtype == BSRMM_DTYPE_F32 ? 4 : 2; }

// A value every dtype holds exactly (a quarter-integer in [-4, 4]), or, when the case allows,
// NaN, +-Inf or -0.
double value_from(FuzzInput& in, bool specials) {
  const uint8_t b = in.byte();
  if (specials && b >= 248) {
    const double special[] = {std::nan(""), INFINITY, -INFINITY, -0.0};
    return special[b % 4];
  }
  return (static_cast<int>(b % 33) - 16) / 4.0;
}

double scalar_from(FuzzInput& in, bool specials) {
  const uint8_t b = in.byte();
  if (specials && b >= 240) {
    const double special[] = {std::nan(""), INFINITY, -INFINITY, -0.0};
    return special[b % 4];
  }
  const double table[] = {1, 0, -1, 0.5, 2, -0.25, 3, 1.5};
  return table[b % 8];
}

// A on the caller's side: row-major blocks in doubles, plus the pattern.
struct SparseA {
  int32_t dtype = BSRMM_DTYPE_F32;
  int32_t bh = 1, bw = 1;
  int64_t block_rows = 0, block_cols = 0;
  std::vector<int32_t> row_ptr{0}, col_idx;
  std::vector<double> values;
};

SparseA decode_a(FuzzInput& in, bool specials) {
  SparseA a;
  a.dtype = in.byte() % 4;
  a.bh = in.chance(16) ? static_cast<int32_t>(in.in_range(1, 33)) : 1 + in.byte() % 8;
  a.bw = in.chance(16) ? static_cast<int32_t>(in.in_range(1, 33)) : 1 + in.byte() % 8;
  a.block_rows = in.byte() % 7;
  a.block_cols = in.byte() % 7;
  const int density = in.byte();
  for (int64_t r = 0; r < a.block_rows; ++r) {
    for (int64_t c = 0; c < a.block_cols; ++c) {
      if (in.byte() < density) a.col_idx.push_back(static_cast<int32_t>(c));
    }
    a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
  }
  a.values.resize(a.col_idx.size() * static_cast<size_t>(a.bh) * static_cast<size_t>(a.bw));
  for (double& v : a.values) v = value_from(in, specials);
  return a;
}

bsrmm_matrix_t create_a(bsrmm_context_t ctx, const SparseA& a) {
  const size_t esize = element_bytes(a.dtype);
  std::vector<unsigned char> bytes(a.values.size() * esize);
  for (size_t i = 0; i < a.values.size(); ++i) {
    store(static_cast<bsrmm_dtype>(a.dtype), bytes.data() + i * esize, a.values[i]);
  }
  bsrmm_bsr_desc desc{};
  desc.rows = a.block_rows * a.bh;
  desc.cols = a.block_cols * a.bw;
  desc.block_height = a.bh;
  desc.block_width = a.bw;
  desc.nnzb = static_cast<int64_t>(a.col_idx.size());
  desc.row_ptr = a.row_ptr.data();
  desc.col_idx = a.col_idx.empty() ? nullptr : a.col_idx.data();
  desc.index_type = BSRMM_INDEX_I32;
  desc.values = bytes.empty() ? nullptr : bytes.data();
  store_enum(desc.dtype, a.dtype);
  desc.device = bsrmm_device{BSRMM_DEVICE_CPU, 0};
  bsrmm_matrix_t matrix = nullptr;
  if (bsrmm_matrix_create(ctx, &desc, BSRMM_CREATE_DEFAULT, &matrix) != BSRMM_STATUS_SUCCESS) {
    fail(std::string("a valid A was rejected: ") + bsrmm_last_error());
  }
  return matrix;
}

// A dense operand and the memory behind it. `extent` is -1 when it overflows.
struct Operand {
  bsrmm_dense desc{};
  int64_t extent = 0;  // elements from data to the last element
  HostBuffer memory;
};

bool is_row_major(const bsrmm_dense& d) { return enum_value(d.layout) == BSRMM_LAYOUT_ROW_MAJOR; }

int64_t extent_of(const bsrmm_dense& d) {
  if (d.rows <= 0 || d.cols <= 0) return 0;
  const int64_t outer = is_row_major(d) ? d.rows : d.cols;
  const int64_t inner = is_row_major(d) ? d.cols : d.rows;
  int64_t product = 0, sum = 0;
  if (__builtin_mul_overflow(outer - 1, d.ld, &product) || __builtin_add_overflow(product, inner, &sum)) return -1;
  return sum;
}

// The rules of one dense operand on its own.
bool judge_dense(const Operand& o) {
  const bsrmm_dense& d = o.desc;
  const int32_t dtype = enum_value(d.dtype), layout = enum_value(d.layout), type = enum_value(d.device.type);
  if (dtype < 0 || dtype > 3 || layout < 0 || layout > 1) return false;
  if (type != BSRMM_DEVICE_CPU && type != BSRMM_DEVICE_CUDA) return false;
  if (d.device.ordinal < 0 || (type == BSRMM_DEVICE_CPU && d.device.ordinal != 0)) return false;
  if (d.rows < 0 || d.cols < 0) return false;
  if (d.ld < (is_row_major(d) ? d.cols : d.rows)) return false;
  if (o.extent < 0 || static_cast<uint64_t>(o.extent) > uint64_t{INT64_MAX} / element_bytes(dtype)) return false;
  if (o.extent == 0) return true;
  return d.data != nullptr && reinterpret_cast<uintptr_t>(d.data) % element_bytes(dtype) == 0;
}

int64_t offset_of(const bsrmm_dense& d, int64_t i, int64_t j) {
  return is_row_major(d) ? i * d.ld + j : j * d.ld + i;
}

// Shape and layout from the case, with occasional wild values; memory sized to the extent
// (NULL when that is absurd, or when the case asks for it).
void decode_operand(FuzzInput& in, Operand& o, int64_t rows, int64_t cols, int32_t dtype) {
  bsrmm_dense& d = o.desc;
  d.rows = in.chance(10) ? (in.chance(128) ? rows + in.in_range(-1, 1) : in.edge_int64()) : rows;
  d.cols = in.chance(10) ? (in.chance(128) ? cols + in.in_range(-1, 1) : in.edge_int64()) : cols;
  store_enum(d.layout, in.chance(8) ? in.raw<int32_t>() : in.byte() % 2);
  const int64_t inner = is_row_major(d) ? d.cols : d.rows;
  if (in.chance(10)) {
    d.ld = in.edge_int64();
  } else if (in.chance(10)) {
    d.ld = (int64_t{1} << in.in_range(20, 30)) + in.byte() % 4;  // offsets past 2^31 elements
  } else {
    // Wrapping arithmetic: `inner` may itself be a wild value.
    const int64_t pad = in.byte() % 4 - (in.chance(8) ? 1 : 0);
    d.ld = static_cast<int64_t>(static_cast<uint64_t>(inner) + static_cast<uint64_t>(pad));
  }
  store_enum(d.dtype, in.chance(10) ? (in.chance(128) ? in.byte() % 4 : in.raw<int32_t>()) : dtype);
  d.device = bsrmm_device{BSRMM_DEVICE_CPU, 0};
  if (in.chance(8)) {
    store_enum(d.device.type, in.chance(128) ? BSRMM_DEVICE_CUDA : in.raw<int32_t>());
    d.device.ordinal = in.chance(128) ? 0 : in.raw<int32_t>();
  }
  o.extent = extent_of(d);
  const int32_t dt = enum_value(d.dtype);
  const size_t esize = dt >= 0 && dt <= 3 ? element_bytes(dt) : 4;
  const bool null_data = in.chance(6);
  const size_t misalign = in.chance(6) ? 1 : 0;
  if (o.extent > 0 && static_cast<uint64_t>(o.extent) <= HostBuffer::map_limit / esize) {
    o.memory = HostBuffer(static_cast<size_t>(o.extent) * esize, misalign);
    d.data = o.memory.data();
  }
  if (null_data) d.data = nullptr;
}

// Poison: every byte of C's memory is 0xFF first (a NaN in every float format), so a skipped
// write, a write to padding or a read of C when beta == 0 shows.
constexpr unsigned char poison = 0xFF;

// C = act(alpha * sum over A's stored blocks + beta * C + bias): structural zeros are never
// multiplied (a NaN or Inf in B under one does not spread), as in every sparse BLAS.
std::vector<double> reference(const SparseA& a, bool transpose, const bsrmm_dense& b,
                              const std::vector<double>& c_before, int64_t m, int64_t n,
                              double alpha, double beta, const std::vector<double>* bias,
                              int32_t activation) {
  const int32_t dtype = a.dtype;
  std::vector<double> acc(static_cast<size_t>(m * n), 0.0);
  for (int64_t r = 0; r < a.block_rows; ++r) {
    for (int32_t p = a.row_ptr[static_cast<size_t>(r)]; p < a.row_ptr[static_cast<size_t>(r) + 1]; ++p) {
      for (int32_t i = 0; i < a.bh; ++i) {
        for (int32_t k = 0; k < a.bw; ++k) {
          const double v = a.values[(static_cast<size_t>(p) * a.bh + i) * a.bw + k];
          const int64_t row = r * a.bh + i, col = int64_t{a.col_idx[static_cast<size_t>(p)]} * a.bw + k;
          const int64_t out_row = transpose ? col : row, inner = transpose ? row : col;
          for (int64_t j = 0; j < n; ++j) {
            const double bv = load(static_cast<bsrmm_dtype>(dtype),
                                   static_cast<const unsigned char*>(b.data) + offset_of(b, inner, j) * element_bytes(dtype));
            acc[static_cast<size_t>(out_row * n + j)] += v * bv;
          }
        }
      }
    }
  }
  std::vector<double> out(acc.size());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double x = alpha * acc[static_cast<size_t>(i * n + j)];
      if (beta != 0) x += beta * c_before[static_cast<size_t>(i * n + j)];
      if (bias) x += (*bias)[static_cast<size_t>(i)];
      switch (activation) {
        case BSRMM_ACTIVATION_RELU: x = std::isnan(x) ? x : (x > 0 ? x : 0.0); break;
        case BSRMM_ACTIVATION_GELU:
          x = std::isinf(x) ? (x > 0 ? x : 0.0)
                            : 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
          break;
        case BSRMM_ACTIVATION_SILU: x = std::isinf(x) ? (x > 0 ? x : 0.0) : x / (1.0 + std::exp(-x)); break;
        default: break;
      }
      out[static_cast<size_t>(i * n + j)] = x;
    }
  }
  return out;
}

double output_epsilon(int32_t dtype) {
  switch (dtype) {
    case BSRMM_DTYPE_F16: return 0x1p-11;
    case BSRMM_DTYPE_BF16: return 0x1p-8;
    case BSRMM_DTYPE_F32: return 0x1p-24;
    default: return 0x1p-53;
  }
}

bool spans_overlap(const void* x, size_t x_bytes, const void* y, size_t y_bytes) {
  const auto x0 = reinterpret_cast<uintptr_t>(x), y0 = reinterpret_cast<uintptr_t>(y);
  return x_bytes != 0 && y_bytes != 0 && x0 < y0 + y_bytes && y0 < x0 + x_bytes;
}

size_t extent_bytes(const Operand& o) {
  const int32_t dt = enum_value(o.desc.dtype);
  return o.extent <= 0 ? 0 : static_cast<size_t>(o.extent) * element_bytes(dt);
}

bsrmm_context_t cpu_context() {
  static bsrmm_context_t ctx = [] {
    bsrmm_context_t c = nullptr;
    if (bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CPU, 0}, &c) != BSRMM_STATUS_SUCCESS) {
      fail(std::string("cannot create a CPU context: ") + bsrmm_last_error());
    }
    // The heuristics choose when no variant is forced: tuning would time every input and write
    // a cache file.
    if (bsrmm_context_set_tuning_mode(c, BSRMM_TUNING_OFF) != BSRMM_STATUS_SUCCESS) fail(bsrmm_last_error());
    return c;
  }();
  return ctx;
}

// A variant name the context may be forced to: the default choice, each matmul variant (CPU
// ones run, CUDA ones are refused on this CPU context), or a name it must refuse. SDDMM variants
// are left out: bsrmm_matmul refuses them whatever the operands (tests/api/sddmm_variant_test.cpp).
std::string variant_from(FuzzInput& in) {
  std::vector<std::string> matmul;
  for (int32_t i = 0; i < bsrmm_variant_count(); ++i) {
    bsrmm_variant_kind kind = BSRMM_VARIANT_SDDMM;
    if (bsrmm_variant_get_kind(i, &kind) == BSRMM_STATUS_SUCCESS && kind == BSRMM_VARIANT_MATMUL)
      matmul.emplace_back(bsrmm_variant_name(i));
  }
  const uint8_t b = in.byte();
  if (b < 96 || matmul.empty()) return "";
  if (b < 250) return matmul[b % matmul.size()];
  return "cpu_no_such_variant";
}

struct Verdict {
  bool invalid = false;      // some rule gives INVALID_ARGUMENT
  bool unsupported = false;  // mixed dtypes give UNSUPPORTED
};

}  // namespace
}  // namespace bsrmm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bsrmm::fuzz;
  FuzzInput in(data, size);
  bsrmm_context_t ctx = cpu_context();
  if (bsrmm_context_set_num_threads(ctx, 1 + in.byte() % 4) != BSRMM_STATUS_SUCCESS) fail(bsrmm_last_error());
  const std::string variant = variant_from(in);
  const bool cpu_variant = variant.empty() || variant.rfind("cpu_", 0) == 0;
  const bool known_variant = variant != "cpu_no_such_variant";
  const bsrmm_status set_status = bsrmm_context_set_variant(ctx, variant.c_str());
  check((set_status == BSRMM_STATUS_SUCCESS) == (cpu_variant && known_variant),
        "bsrmm_context_set_variant(\"" + variant + "\") gave " + bsrmm_status_name(set_status));
  if (set_status != BSRMM_STATUS_SUCCESS) bsrmm_context_set_variant(ctx, "");

  const bool specials = in.chance(48);
  const SparseA a = decode_a(in, specials);
  const size_t esize = element_bytes(a.dtype);

  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  const bool null_options = in.chance(16);
  if (in.chance(8)) options.struct_size = in.raw<uint32_t>() % 128;
  store_enum(options.op_a, in.chance(8) ? in.raw<int32_t>() : in.byte() % 2);
  options.alpha = scalar_from(in, specials);
  options.beta = in.chance(128) ? 0.0 : scalar_from(in, specials);
  store_enum(options.activation, in.chance(8) ? in.raw<int32_t>() : in.byte() % 4);
  const bool transpose = !null_options && enum_value(options.op_a) == BSRMM_OP_TRANSPOSE;
  const int64_t a_rows = a.block_rows * a.bh, a_cols = a.block_cols * a.bw;
  const int64_t m = transpose ? a_cols : a_rows, k = transpose ? a_rows : a_cols;
  const int64_t n = in.chance(16) ? in.byte() % 3 : in.byte() % 40;

  Operand b, c;
  decode_operand(in, b, k, n, a.dtype);
  decode_operand(in, c, m, n, a.dtype);
  const bool c_in_b = in.chance(8) && b.memory.size() > 0;
  if (c_in_b) {
    c.memory = HostBuffer();
    c.desc.data = b.memory.data() + (in.byte() % 4) * esize;
  }
  const bool b_ok = judge_dense(b), c_ok = judge_dense(c);

  std::vector<double> bias_values;
  HostBuffer bias_memory;
  if (in.chance(64) && m > 0) {
    bias_memory = HostBuffer(static_cast<size_t>(m) * esize, in.chance(8) ? 1 : 0);
    for (int64_t i = 0; i < m; ++i) {
      bias_values.push_back(value_from(in, specials));
      store(static_cast<bsrmm_dtype>(a.dtype), bias_memory.data() + i * esize, bias_values.back());
    }
    options.bias = bias_memory.data();
    if (in.chance(8) && c_ok && extent_bytes(c) > 0) options.bias = c.desc.data;
  }

  // Contents: poison everywhere, then B's elements from the input, and C's when beta != 0
  // reads them (otherwise C keeps the poison, which must not reach the output).
  if (b.memory.size() > 0 && !b.memory.mapped()) std::memset(b.memory.data(), poison, b.memory.size());
  const bool b_filled = b_ok && b.desc.data != nullptr && b.desc.rows <= 256 && b.desc.cols <= 64;
  if (b_filled) {
    const int32_t dt = enum_value(b.desc.dtype);
    for (int64_t i = 0; i < b.desc.rows; ++i) {
      for (int64_t j = 0; j < b.desc.cols; ++j) {
        store(static_cast<bsrmm_dtype>(dt),
              static_cast<unsigned char*>(b.desc.data) + offset_of(b.desc, i, j) * element_bytes(dt),
              value_from(in, specials));
      }
    }
  }
  if (c.memory.size() > 0 && !c.memory.mapped()) std::memset(c.memory.data(), poison, c.memory.size());
  const int64_t c_rows = c.desc.rows, c_cols = c.desc.cols;
  const bool c_filled = c_ok && !c_in_b && c.desc.data != nullptr && enum_value(c.desc.dtype) == a.dtype &&
                        c_rows == m && c_cols <= 64 && m * c_cols <= 8192;
  std::vector<double> c_before;
  if (c_filled) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < c_cols; ++j) {
        const double v = options.beta != 0 ? value_from(in, specials) : std::nan("");
        if (options.beta != 0) {
          store(static_cast<bsrmm_dtype>(a.dtype),
                static_cast<unsigned char*>(c.desc.data) + offset_of(c.desc, i, j) * esize, v);
        }
        c_before.push_back(v);
      }
    }
  }

  // The verdict the rules give.
  Verdict v;
  if (!null_options) {
    // Below sizeof, only the size of the struct before b_scales was appended (an older
    // caller's) is valid.
    const bool older_size = options.struct_size == offsetof(bsrmm_matmul_options, b_scales);
    if (options.struct_size < sizeof(bsrmm_matmul_options) && !older_size) v.invalid = true;
    if (enum_value(options.op_a) < 0 || enum_value(options.op_a) > 1) v.invalid = true;
    if (enum_value(options.activation) < 0 || enum_value(options.activation) > 3) v.invalid = true;
  }
  if (!b_ok || !c_ok) v.invalid = true;
  // An fp8 dtype (4, 5) in B or C, which judge_dense calls invalid: the core may answer
  // UNSUPPORTED first (fp8 is a dtype, only not for C or beside a non-fp8 A; the fuzzer's A
  // is never fp8), so either refusal is right.
  for (const bsrmm_dtype dtype : {b.desc.dtype, c.desc.dtype})
    if (enum_value(dtype) == BSRMM_DTYPE_FLOAT8_E4M3 || enum_value(dtype) == BSRMM_DTYPE_FLOAT8_E5M2)
      v.unsupported = true;
  const bool off_context = b.desc.device.type != BSRMM_DEVICE_CPU || c.desc.device.type != BSRMM_DEVICE_CPU;
  if (off_context) v.invalid = true;
  if (b_ok && c_ok && !off_context) {
    if (enum_value(b.desc.dtype) != a.dtype || enum_value(c.desc.dtype) != a.dtype) v.unsupported = true;
    if (b.desc.rows != k || c_rows != m || c_cols != b.desc.cols) v.invalid = true;
    if (spans_overlap(b.desc.data, extent_bytes(b), c.desc.data, extent_bytes(c))) v.invalid = true;
    if (options.bias != nullptr && !null_options && !v.invalid) {
      if (reinterpret_cast<uintptr_t>(options.bias) % esize != 0) v.invalid = true;
      if (spans_overlap(c.desc.data, extent_bytes(c), options.bias, static_cast<size_t>(m) * esize)) {
        v.invalid = true;
      }
    }
  }
  const bool valid = !v.invalid && !v.unsupported;
  const bool empty = m == 0 || c_cols == 0;
  if (valid && !empty && (!b_filled || !c_filled)) return 0;  // too large to fill and check

  bsrmm_matrix_t matrix = create_a(ctx, a);
  std::vector<unsigned char> b_before, c_bytes_before;
  if (!b.memory.mapped()) b_before.assign(b.memory.data(), b.memory.data() + b.memory.size());
  if (!c.memory.mapped()) c_bytes_before.assign(c.memory.data(), c.memory.data() + c.memory.size());

  bsrmm_dense c_desc = c.desc;
  const bsrmm_status status = bsrmm_matmul(ctx, matrix, &b.desc, &c_desc, null_options ? nullptr : &options);
  const std::string message = bsrmm_last_error();
  bsrmm_matrix_destroy(matrix);

  const bool c_unchanged = c_bytes_before.empty() ||
                           std::memcmp(c_bytes_before.data(), c.memory.data(), c.memory.size()) == 0;
  // cpu_dense_blas forced where no CBLAS can be loaded declines, as the CUDA dense fallback does;
  // cpu_rowwise_simd forced on blocks over 8 high, or without AVX-512, declines too.
  const bool declined_dense = variant == "cpu_dense_blas" && message.find("no CBLAS") != std::string::npos;
  const bool declined_rowwise = variant == "cpu_rowwise_simd" && message.find("cannot run") != std::string::npos;
  if (valid && status == BSRMM_STATUS_UNSUPPORTED && (declined_dense || declined_rowwise)) {
    check(c_unchanged, "a declined multiply wrote C");
    return 0;
  }
  if (!valid) {
    const bool expected = (v.invalid && status == BSRMM_STATUS_INVALID_ARGUMENT) ||
                          (v.unsupported && status == BSRMM_STATUS_UNSUPPORTED);
    check(expected, std::string("a multiply the rules reject returned ") + bsrmm_status_name(status) + ": " + message);
    check(message.rfind("bsrmm_matmul: ", 0) == 0 && message.size() > 14,
          "the error message does not name the call: \"" + message + "\"");
    check(c_unchanged, "a rejected multiply wrote C");
    return 0;
  }
  check(status == BSRMM_STATUS_SUCCESS,
        std::string("a valid multiply failed: ") + bsrmm_status_name(status) + ": " + message);
  check(b_before.empty() || std::memcmp(b_before.data(), b.memory.data(), b.memory.size()) == 0, "B was written");
  if (empty) {
    check(c_unchanged, "an empty multiply wrote C");
    return 0;
  }

  const int32_t activation = null_options ? BSRMM_ACTIVATION_NONE : enum_value(options.activation);
  const std::vector<double> want =
      reference(a, transpose, b.desc, c_before, m, c_cols, null_options ? 1.0 : options.alpha,
                null_options ? 0.0 : options.beta, options.bias && !null_options ? &bias_values : nullptr,
                activation);
  const bool smooth = activation == BSRMM_ACTIVATION_GELU || activation == BSRMM_ACTIVATION_SILU;
  const unsigned char* out = static_cast<const unsigned char*>(c.desc.data);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < c_cols; ++j) {
      const double w = want[static_cast<size_t>(i * c_cols + j)];
      const double have = load(static_cast<bsrmm_dtype>(a.dtype), out + offset_of(c.desc, i, j) * esize);
      bool ok;
      if (std::isnan(w)) {
        ok = std::isnan(have);
      } else if (std::isinf(w)) {
        ok = have == w;
      } else {
        const double bound = (smooth ? 2.0 : 1.01) * output_epsilon(a.dtype) * std::fabs(w) +
                             (smooth ? 1e-5 * (1.0 + std::fabs(w)) : 0.0) + 0x1p-24;
        ok = std::fabs(have - w) <= bound;
      }
      check(ok, "C(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(have) +
                    ", expected " + std::to_string(w) + " (variant " + bsrmm_context_last_variant(ctx) + ")");
    }
  }
  if (!c_bytes_before.empty()) {  // each line's padding kept the poison
    const int64_t outer = is_row_major(c.desc) ? m : c_cols;
    const int64_t inner = is_row_major(c.desc) ? c_cols : m;
    for (int64_t line = 0; line + 1 < outer; ++line) {
      const size_t from = static_cast<size_t>(line * c.desc.ld + inner) * esize;
      const size_t to = static_cast<size_t>((line + 1) * c.desc.ld) * esize;
      check(std::memcmp(c.memory.data() + from, c_bytes_before.data() + from, to - from) == 0,
            "the padding after line " + std::to_string(line) + " of C was written");
    }
  }
  return 0;
}
