// libFuzzer target: bsrmm_matrix_create on a CPU context with arbitrary sizes, block shapes,
// index types, indices, flags, dtypes and devices. The BSR rules are stated again here,
// independently of src/matrix, and predict the verdict: the library must agree, fail only with
// INVALID_ARGUMENT (NO_DEVICE for a CUDA description) and a message naming the call, and a matrix
// it accepts must read back exactly as given (info, export in both index widths, to_dense,
// from_dense, copy_to).
#include "fuzz_input.hpp"
#include "host_buffer.hpp"

#include <bsrmm/bsrmm.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace bsrmm::fuzz {
namespace {

constexpr int64_t int32_max = std::numeric_limits<int32_t>::max();
constexpr int32_t max_block_side = 256;  // the C ABI's documented limit
// Arrays past these sizes are not built: the case passes NULL instead, which is then invalid.
constexpr int64_t max_block_rows = 1 << 12;
constexpr int64_t max_nnzb = 1 << 12;
constexpr int64_t max_value_bytes = int64_t{1} << 22;
constexpr int64_t max_dense_elements = int64_t{1} << 16;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "matrix_create_fuzzer: %s\n", what.c_str());
  std::abort();
}

void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

void check_status(bsrmm_status status, const char* call) {
  if (status != BSRMM_STATUS_SUCCESS) {
    fail(std::string(call) + " failed on an accepted matrix: " + bsrmm_status_name(status) + ": " +
         bsrmm_last_error());
  }
}

size_t element_bytes(int32_t dtype) { return dtype == BSRMM_DTYPE_F64 ? 8 : dtype == BSRMM_DTYPE_F32 ? 4 : 2; }

// The shape rules: what the library must decide before reading any array.
struct ShapeVerdict {
  bool valid = false;
  int64_t block_rows = 0, block_cols = 0;
};

ShapeVerdict judge_shape(const bsrmm_bsr_desc& d, uint32_t flags) {
  ShapeVerdict v;
  const int32_t dtype = enum_value(d.dtype);
  const int32_t index_type = enum_value(d.index_type);
  const int32_t device_type = enum_value(d.device.type);
  if (dtype < 0 || dtype > 3 || index_type < 0 || index_type > 1) return v;
  if ((flags & ~3u) != 0 || (flags & BSRMM_CREATE_BORROW_VALUES) != 0) return v;  // CPU target
  if (device_type == BSRMM_DEVICE_CPU ? d.device.ordinal != 0
                                      : device_type != BSRMM_DEVICE_CUDA || d.device.ordinal < 0) {
    return v;
  }
  if (d.rows < 0 || d.cols < 0) return v;
  if (d.block_height < 1 || d.block_height > max_block_side) return v;
  if (d.block_width < 1 || d.block_width > max_block_side) return v;
  if (d.rows % d.block_height != 0 || d.cols % d.block_width != 0) return v;
  v.block_rows = d.rows / d.block_height;
  v.block_cols = d.cols / d.block_width;
  if (v.block_rows > int32_max || v.block_cols > int32_max) return v;
  if (d.nnzb < 0 || d.nnzb > int32_max) return v;
  // nnzb <= int32_max and the counts <= int32_max, so nothing below overflows.
  if (static_cast<__int128>(v.block_rows) * v.block_cols < d.nnzb) return v;
  if (v.block_rows > 0 && d.row_ptr == nullptr) return v;
  if (d.nnzb > 0 && (d.col_idx == nullptr || d.values == nullptr)) return v;
  v.valid = true;
  return v;
}

int64_t read_index(const void* data, int32_t index_type, int64_t i) {
  return index_type == BSRMM_INDEX_I32 ? static_cast<const int32_t*>(data)[i]
                                       : static_cast<const int64_t*>(data)[i];
}

// The array rules, for a description whose shape passed.
bool judge_arrays(const bsrmm_bsr_desc& d, uint32_t flags, const ShapeVerdict& shape) {
  const int32_t type = enum_value(d.index_type);
  if (d.values != nullptr &&
      reinterpret_cast<uintptr_t>(d.values) % element_bytes(enum_value(d.dtype)) != 0) {
    return false;
  }
  if (d.row_ptr == nullptr) return true;  // only with zero block rows, hence nnzb == 0
  if (read_index(d.row_ptr, type, 0) != 0) return false;
  for (int64_t r = 1; r <= shape.block_rows; ++r) {
    const int64_t value = read_index(d.row_ptr, type, r);
    if (value < read_index(d.row_ptr, type, r - 1) || value > d.nnzb) return false;
  }
  if (read_index(d.row_ptr, type, shape.block_rows) != d.nnzb) return false;
  const bool sort = (flags & BSRMM_CREATE_SORT_INDICES) != 0;
  for (int64_t r = 0; r < shape.block_rows; ++r) {
    std::vector<int64_t> columns;
    for (int64_t p = read_index(d.row_ptr, type, r); p < read_index(d.row_ptr, type, r + 1); ++p) {
      const int64_t column = read_index(d.col_idx, type, p);
      if (column < 0 || column >= shape.block_cols) return false;
      if (!sort && !columns.empty() && column <= columns.back()) return false;
      columns.push_back(column);
    }
    std::sort(columns.begin(), columns.end());
    if (std::adjacent_find(columns.begin(), columns.end()) != columns.end()) return false;
  }
  return true;
}

struct CreateCase {
  bsrmm_bsr_desc desc{};
  uint32_t flags = 0;
  std::vector<int32_t> row_ptr32, col_idx32;
  std::vector<int64_t> row_ptr64, col_idx64;
  HostBuffer values;
};

// Block counts per row, then a sorted, duplicate-free choice of that many columns per row
// (selection sampling), then the perturbations that make indices unsorted, repeated or wild.
void fill_indices(FuzzInput& in, CreateCase& c, const ShapeVerdict& shape) {
  const int64_t rows = shape.block_rows;
  const int64_t nnzb = c.desc.nnzb;
  std::vector<int64_t> row_ptr(static_cast<size_t>(rows) + 1, 0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t left = nnzb - row_ptr[static_cast<size_t>(r)];
    const int64_t take = r + 1 == rows ? left : std::min<int64_t>(left, in.byte() % (shape.block_cols + 1));
    row_ptr[static_cast<size_t>(r) + 1] = row_ptr[static_cast<size_t>(r)] + take;
  }
  std::vector<int64_t> col_idx;
  col_idx.reserve(static_cast<size_t>(nnzb));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t need = row_ptr[static_cast<size_t>(r) + 1] - row_ptr[static_cast<size_t>(r)];
    for (int64_t j = 0; j < shape.block_cols && need > 0; ++j) {
      if (static_cast<int64_t>(in.byte()) * (shape.block_cols - j) < need * 256) {
        col_idx.push_back(j);
        --need;
      }
    }
    for (; need > 0; --need) col_idx.push_back(in.in_range(0, std::max<int64_t>(shape.block_cols - 1, 0)));
    const size_t begin = static_cast<size_t>(row_ptr[static_cast<size_t>(r)]);
    if (col_idx.size() - begin >= 2 && in.chance(24)) {
      std::swap(col_idx[begin + in.byte() % (col_idx.size() - begin)], col_idx.back());
    }
  }
  if (!col_idx.empty() && in.chance(16)) col_idx[in.byte() % col_idx.size()] = in.edge_int64();
  if (rows > 0 && in.chance(16)) row_ptr[in.byte() % row_ptr.size()] = in.edge_int64();

  const bool wide = enum_value(c.desc.index_type) == BSRMM_INDEX_I64;
  if (wide) {
    c.row_ptr64 = row_ptr;
    c.col_idx64 = col_idx;
    c.desc.row_ptr = c.row_ptr64.data();
    c.desc.col_idx = c.col_idx64.empty() ? nullptr : c.col_idx64.data();
  } else {
    // A narrow caller truncates wild values to int32 before bsrmm sees them.
    c.row_ptr32.assign(row_ptr.begin(), row_ptr.end());
    for (int64_t v : col_idx) c.col_idx32.push_back(static_cast<int32_t>(v));
    c.desc.row_ptr = c.row_ptr32.data();
    c.desc.col_idx = c.col_idx32.empty() ? nullptr : c.col_idx32.data();
  }
}

void decode(FuzzInput& in, CreateCase& c) {
  bsrmm_bsr_desc& d = c.desc;
  store_enum(d.dtype, in.chance(16) ? in.raw<int32_t>() : in.byte() % 4);
  store_enum(d.index_type, in.chance(16) ? in.raw<int32_t>() : in.byte() % 2);
  c.flags = in.chance(16) ? in.raw<uint32_t>() : (in.chance(32) ? in.byte() % 4u : in.byte() % 2u);
  if (in.chance(16)) {
    store_enum(d.device.type, in.chance(128) ? BSRMM_DEVICE_CUDA : in.raw<int32_t>());
    d.device.ordinal = in.chance(128) ? 0 : in.raw<int32_t>();
  } else {
    d.device = bsrmm_device{BSRMM_DEVICE_CPU, 0};
  }
  auto side = [&] {
    if (in.chance(12)) return in.raw<int32_t>();
    if (in.chance(16)) return static_cast<int32_t>(in.in_range(1, max_block_side + 2));
    return static_cast<int32_t>(1 + in.byte() % 8);
  };
  d.block_height = side();
  d.block_width = side();
  if (in.chance(24)) {  // sizes anywhere, mostly near the limits that break arithmetic
    d.rows = in.edge_int64();
    d.cols = in.edge_int64();
    d.nnzb = in.edge_int64();
  } else {
    const int64_t block_rows = in.byte() % 9;
    const int64_t block_cols = in.byte() % 9;
    d.rows = block_rows * std::max(d.block_height, 1) + (in.chance(12) ? in.in_range(-2, 2) : 0);
    d.cols = block_cols * std::max(d.block_width, 1) + (in.chance(12) ? in.in_range(-2, 2) : 0);
    d.nnzb = in.byte() % (block_rows * block_cols + 1) + (in.chance(12) ? in.in_range(-2, 2) : 0);
  }
}

// Export, dense image and copies of an accepted matrix agree with what the caller passed.
void check_read_back(bsrmm_context_t ctx, bsrmm_matrix_t matrix, const CreateCase& c,
                     const ShapeVerdict& shape) {
  const bsrmm_bsr_desc& d = c.desc;
  const int32_t type = enum_value(d.index_type);
  const size_t esize = element_bytes(enum_value(d.dtype));
  const int64_t block_elements = int64_t{d.block_height} * d.block_width;
  const size_t block_bytes = static_cast<size_t>(block_elements) * esize;

  bsrmm_matrix_info info;
  check_status(bsrmm_matrix_get_info(matrix, &info), "bsrmm_matrix_get_info");
  check(info.rows == d.rows && info.cols == d.cols && info.block_height == d.block_height &&
            info.block_width == d.block_width && info.nnzb == d.nnzb &&
            enum_value(info.dtype) == enum_value(d.dtype) && info.device.type == BSRMM_DEVICE_CPU,
        "bsrmm_matrix_get_info differs from the description");

  // Expected stored order: each row's blocks sorted by column (they are unique).
  std::vector<int64_t> order(static_cast<size_t>(d.nnzb));
  std::iota(order.begin(), order.end(), int64_t{0});
  for (int64_t r = 0; r < shape.block_rows; ++r) {
    const int64_t begin = read_index(d.row_ptr, type, r), end = read_index(d.row_ptr, type, r + 1);
    std::sort(order.begin() + begin, order.begin() + end, [&](int64_t x, int64_t y) {
      return read_index(d.col_idx, type, x) < read_index(d.col_idx, type, y);
    });
  }
  const auto* given = static_cast<const unsigned char*>(d.values);

  std::vector<int64_t> row_ptr(static_cast<size_t>(shape.block_rows) + 1);
  std::vector<int64_t> col_idx(static_cast<size_t>(d.nnzb) + 1);
  std::vector<int32_t> row_ptr32(row_ptr.size()), col_idx32(col_idx.size());
  std::vector<unsigned char> values(static_cast<size_t>(d.nnzb) * block_bytes + 1);
  check_status(bsrmm_matrix_export(matrix, BSRMM_INDEX_I64, row_ptr.data(), col_idx.data(), values.data()),
               "bsrmm_matrix_export");
  check_status(bsrmm_matrix_export(matrix, BSRMM_INDEX_I32, row_ptr32.data(), col_idx32.data(), nullptr),
               "bsrmm_matrix_export");
  for (int64_t r = 0; r <= shape.block_rows; ++r) {
    const int64_t want = d.row_ptr == nullptr ? 0 : read_index(d.row_ptr, type, r);
    check(row_ptr[static_cast<size_t>(r)] == want && row_ptr32[static_cast<size_t>(r)] == want,
          "exported row_ptr differs at " + std::to_string(r));
  }
  for (int64_t p = 0; p < d.nnzb; ++p) {
    const int64_t source = order[static_cast<size_t>(p)];
    const int64_t want = read_index(d.col_idx, type, source);
    check(col_idx[static_cast<size_t>(p)] == want && col_idx32[static_cast<size_t>(p)] == want,
          "exported col_idx differs at " + std::to_string(p));
    check(std::memcmp(values.data() + p * block_bytes, given + source * block_bytes, block_bytes) == 0,
          "exported block " + std::to_string(p) + " differs from the caller's block " +
              std::to_string(source));
  }

  bsrmm_matrix_t copy = nullptr;
  check_status(bsrmm_matrix_copy_to(ctx, matrix, &copy), "bsrmm_matrix_copy_to");
  std::vector<unsigned char> copied(values.size());
  check_status(bsrmm_matrix_export(copy, BSRMM_INDEX_I64, nullptr, nullptr, copied.data()),
               "bsrmm_matrix_export");
  bsrmm_matrix_destroy(copy);
  check(std::memcmp(copied.data(), values.data(), values.size() - 1) == 0, "bsrmm_matrix_copy_to changed values");

  if (d.rows * d.cols > max_dense_elements) return;
  // Dense image with one element of padding per row, both layouts by turns.
  const bool row_major = (d.nnzb + d.rows) % 2 == 0;
  const int64_t ld = (row_major ? d.cols : d.rows) + 1;
  const int64_t outer = row_major ? d.rows : d.cols;
  std::vector<unsigned char> dense(static_cast<size_t>(outer * ld) * esize + esize, 0xA5);
  bsrmm_dense out{dense.data(), d.rows, d.cols, ld,
                  row_major ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR, d.dtype,
                  bsrmm_device{BSRMM_DEVICE_CPU, 0}};
  check_status(bsrmm_matrix_to_dense(ctx, matrix, &out), "bsrmm_matrix_to_dense");
  std::vector<unsigned char> image(static_cast<size_t>(d.rows * d.cols) * esize, 0);  // row-major
  for (int64_t r = 0; r < shape.block_rows; ++r) {
    for (int64_t p = row_ptr[static_cast<size_t>(r)]; p < row_ptr[static_cast<size_t>(r) + 1]; ++p) {
      for (int32_t i = 0; i < d.block_height; ++i) {
        for (int32_t j = 0; j < d.block_width; ++j) {
          const int64_t row = r * d.block_height + i;
          const int64_t col = col_idx[static_cast<size_t>(p)] * d.block_width + j;
          std::memcpy(image.data() + (row * d.cols + col) * esize,
                      values.data() + p * block_bytes + (int64_t{i} * d.block_width + j) * esize, esize);
        }
      }
    }
  }
  for (int64_t i = 0; i < d.rows; ++i) {
    for (int64_t j = 0; j < d.cols; ++j) {
      const int64_t at = row_major ? i * ld + j : j * ld + i;
      check(std::memcmp(dense.data() + at * esize, image.data() + (i * d.cols + j) * esize, esize) == 0,
            "bsrmm_matrix_to_dense element (" + std::to_string(i) + ", " + std::to_string(j) + ") differs");
    }
  }
  const int64_t inner = row_major ? d.cols : d.rows;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t b = static_cast<size_t>(o * ld + inner) * esize; b < static_cast<size_t>(o * ld + ld) * esize; ++b) {
      check(dense[b] == 0xA5, "bsrmm_matrix_to_dense wrote the padding of line " + std::to_string(o));
    }
  }

  // from_dense keeps exactly the blocks holding a non-zero magnitude (NaN counts), so its dense
  // image equals this one up to the sign of zeros in dropped blocks.
  bsrmm_matrix_t rebuilt = nullptr;
  check_status(bsrmm_matrix_from_dense(ctx, &out, d.block_height, d.block_width, &rebuilt),
               "bsrmm_matrix_from_dense");
  std::vector<unsigned char> again(dense.size(), 0x5A);
  bsrmm_dense back = out;
  back.data = again.data();
  check_status(bsrmm_matrix_to_dense(ctx, rebuilt, &back), "bsrmm_matrix_to_dense");
  bsrmm_matrix_destroy(rebuilt);
  for (int64_t i = 0; i < d.rows; ++i) {
    for (int64_t j = 0; j < d.cols; ++j) {
      const int64_t at = (row_major ? i * ld + j : j * ld + i) * static_cast<int64_t>(esize);
      uint64_t x = 0, y = 0;
      std::memcpy(&x, dense.data() + at, esize);
      std::memcpy(&y, again.data() + at, esize);
      const uint64_t sign = uint64_t{1} << (8 * esize - 1);
      const bool same = x == y || ((x | sign) == sign && (y | sign) == sign);
      check(same, "bsrmm_matrix_from_dense round trip differs at (" + std::to_string(i) + ", " +
                      std::to_string(j) + ")");
    }
  }
}

bsrmm_context_t cpu_context() {
  static bsrmm_context_t ctx = [] {
    bsrmm_context_t c = nullptr;
    if (bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CPU, 0}, &c) != BSRMM_STATUS_SUCCESS) {
      fail(std::string("cannot create a CPU context: ") + bsrmm_last_error());
    }
    return c;
  }();
  return ctx;
}

bool cuda_devices_present() {
  static const bool present = [] {
    int32_t count = 0;
    return bsrmm_cuda_device_count(&count) == BSRMM_STATUS_SUCCESS && count > 0;
  }();
  return present;
}

}  // namespace
}  // namespace bsrmm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bsrmm::fuzz;
  FuzzInput in(data, size);
  CreateCase c;
  decode(in, c);
  bsrmm_bsr_desc& d = c.desc;

  // Arrays exist where the shape calls for them and their size is reasonable; a shape that
  // fails its own rules gets small arrays (or none), which the library must not read.
  const bool null_row_ptr = in.chance(8), null_col_idx = in.chance(8), null_values = in.chance(8);
  const size_t misalign = in.chance(8) ? 1 : 0;
  d.row_ptr = d.col_idx = d.values = nullptr;
  ShapeVerdict plan = judge_shape(d, c.flags);
  {
    bsrmm_bsr_desc probe = d;  // the shape rules with every array present
    int64_t dummy = 0;
    probe.row_ptr = probe.col_idx = probe.values = &dummy;
    plan = judge_shape(probe, c.flags);
  }
  const int32_t dtype = enum_value(d.dtype);
  const bool sized = plan.valid && plan.block_rows <= max_block_rows && d.nnzb <= max_nnzb &&
                     d.nnzb * int64_t{d.block_height} * d.block_width * 8 <= max_value_bytes;
  if (sized) {
    fill_indices(in, c, plan);
    const size_t bytes = static_cast<size_t>(d.nnzb * d.block_height * d.block_width) * element_bytes(dtype);
    c.values = HostBuffer(bytes, misalign);
    uint32_t state = 0x9e3779b9u ^ in.raw<uint32_t>();
    for (size_t i = 0; i < bytes; ++i) {  // arbitrary bits: NaNs, infinities, subnormals, zeros
      state = state * 1664525u + 1013904223u;
      c.values.data()[i] = static_cast<unsigned char>(state >> 24);
    }
    d.values = bytes == 0 ? (in.chance(128) ? c.values.data() : nullptr) : c.values.data();
  } else if (!plan.valid) {
    static int64_t small[4] = {0, 0, 0, 0};
    d.row_ptr = d.col_idx = d.values = small;
  }
  if (null_row_ptr) d.row_ptr = nullptr;
  if (null_col_idx) d.col_idx = nullptr;
  if (null_values) d.values = nullptr;

  const ShapeVerdict shape = judge_shape(d, c.flags);
  const bool expect_valid = shape.valid && (sized || (d.row_ptr == nullptr && d.col_idx == nullptr)) &&
                            judge_arrays(d, c.flags, shape);
  const bool cuda_description = enum_value(d.device.type) == BSRMM_DEVICE_CUDA && d.device.ordinal >= 0;

  bsrmm_context_t ctx = cpu_context();
  bsrmm_matrix_t matrix = reinterpret_cast<bsrmm_matrix_t>(&c);  // must be overwritten
  const bsrmm_status status = bsrmm_matrix_create(ctx, &d, c.flags, &matrix);
  const std::string message = bsrmm_last_error();

  if (cuda_description && cuda_devices_present()) {
    // Host arrays under a CUDA description: any clean verdict will do (GPU machines only).
    check(status != BSRMM_STATUS_INTERNAL, "INTERNAL for a CUDA description: " + message);
  } else if (status == BSRMM_STATUS_SUCCESS) {
    check(expect_valid, "accepted a description the rules reject");
    check(matrix != nullptr, "success without a matrix");
    check_read_back(ctx, matrix, c, shape);
  } else {
    check(!expect_valid || cuda_description,
          std::string("rejected a valid description: ") + bsrmm_status_name(status) + ": " + message);
    const bool expected_status = status == BSRMM_STATUS_INVALID_ARGUMENT ||
                                 (cuda_description && status == BSRMM_STATUS_NO_DEVICE);
    check(expected_status, std::string("unexpected status ") + bsrmm_status_name(status) + ": " + message);
    check(matrix == nullptr, "a failed bsrmm_matrix_create left *out set");
    check(message.rfind("bsrmm_matrix_create: ", 0) == 0 && message.size() > 22,
          "the error message does not name the call: \"" + message + "\"");
  }
  bsrmm_matrix_destroy(status == BSRMM_STATUS_SUCCESS ? matrix : nullptr);
  return 0;
}
