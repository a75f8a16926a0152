// Host operands for tests: a dense matrix in any dtype, layout and leading dimension, and a
// BSR matrix as the three arrays a caller would pass, each readable back as double.
// Padding elements (beyond the logical size within ld) hold a NaN sentinel so a test can tell
// whether the library read or wrote them.
#pragma once

#include "../../src/common/float8.hpp"
#include "../../src/common/half.hpp"

#include <bsrmm/bsrmm.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace bsrmm::test {

inline bool is_fp8(bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_FLOAT8_E4M3 || dtype == BSRMM_DTYPE_FLOAT8_E5M2;
}

inline size_t dtype_size(bsrmm_dtype dtype) {
  if (is_fp8(dtype)) return 1;
  return dtype == BSRMM_DTYPE_F64 ? 8 : dtype == BSRMM_DTYPE_F32 ? 4 : 2;
}

inline double fp8_value(bsrmm_dtype dtype, uint8_t bits) {
  return dtype == BSRMM_DTYPE_FLOAT8_E4M3 ? detail::to_double(detail::f8e4m3_t{bits})
                                          : detail::to_double(detail::f8e5m2_t{bits});
}
// The fp8 byte nearest `value` (NaN for NaN): a search of all 256 codes, slow and obviously right
// (ties, which random test values do not hit, go to the first code found).
inline uint8_t fp8_bits(bsrmm_dtype dtype, double value) {
  if (std::isnan(value)) return 0x7f;
  int best = 0;
  double best_error = std::numeric_limits<double>::infinity();
  for (int bits = 0; bits < 256; ++bits) {
    const double candidate = fp8_value(dtype, static_cast<uint8_t>(bits));
    if (std::isnan(candidate)) continue;
    const double error = candidate == value ? 0.0 : std::fabs(candidate - value);
    if (error < best_error) {
      best_error = error;
      best = bits;
    }
  }
  return static_cast<uint8_t>(best);
}

// Stores `value` (already representable) at `slot` in `dtype`.
inline void store(bsrmm_dtype dtype, void* slot, double value) {
  switch (dtype) {
    case BSRMM_DTYPE_F64: std::memcpy(slot, &value, 8); break;
    case BSRMM_DTYPE_F32: {
      const float f = static_cast<float>(value);
      std::memcpy(slot, &f, 4);
      break;
    }
    case BSRMM_DTYPE_F16: {
      const uint16_t h = detail::f32_to_f16_bits(static_cast<float>(value));
      std::memcpy(slot, &h, 2);
      break;
    }
    case BSRMM_DTYPE_BF16: {
      const uint16_t h = detail::f32_to_bf16_bits(static_cast<float>(value));
      std::memcpy(slot, &h, 2);
      break;
    }
    case BSRMM_DTYPE_FLOAT8_E4M3:
    case BSRMM_DTYPE_FLOAT8_E5M2: *static_cast<uint8_t*>(slot) = fp8_bits(dtype, value); break;
  }
}

inline double load(bsrmm_dtype dtype, const void* slot) {
  switch (dtype) {
    case BSRMM_DTYPE_F64: {
      double d;
      std::memcpy(&d, slot, 8);
      return d;
    }
    case BSRMM_DTYPE_F32: {
      float f;
      std::memcpy(&f, slot, 4);
      return f;
    }
    case BSRMM_DTYPE_F16: {
      uint16_t h;
      std::memcpy(&h, slot, 2);
      return detail::f16_bits_to_f32(h);
    }
    case BSRMM_DTYPE_BF16: {
      uint16_t h;
      std::memcpy(&h, slot, 2);
      return detail::bf16_bits_to_f32(h);
    }
    case BSRMM_DTYPE_FLOAT8_E4M3:
    case BSRMM_DTYPE_FLOAT8_E5M2: return fp8_value(dtype, *static_cast<const uint8_t*>(slot));
  }
  return 0;
}

// Rounds `value` to `dtype` and back: the number the library will actually see.
inline double round_to(bsrmm_dtype dtype, double value) {
  unsigned char slot[8];
  store(dtype, slot, value);
  return load(dtype, slot);
}

class HostDense {
 public:
  HostDense(int64_t rows, int64_t cols, bsrmm_dtype dtype, bsrmm_layout layout = BSRMM_LAYOUT_ROW_MAJOR,
            int64_t padding = 0)
      : rows_(rows), cols_(cols), dtype_(dtype), layout_(layout) {
    const int64_t inner = layout == BSRMM_LAYOUT_ROW_MAJOR ? cols : rows;
    const int64_t outer = layout == BSRMM_LAYOUT_ROW_MAJOR ? rows : cols;
    ld_ = inner + padding;
    // At least one element so data() is never null, even for an empty matrix.
    const int64_t count = outer * ld_ > 0 ? outer * ld_ : 1;
    bytes_.resize(static_cast<size_t>(count) * dtype_size(dtype));
    for (int64_t e = 0; e < count; ++e) store(dtype, element(e), std::nan(""));
  }

  bsrmm_dense desc() {
    return bsrmm_dense{bytes_.data(), rows_, cols_, ld_, layout_, dtype_, bsrmm_device{BSRMM_DEVICE_CPU, 0}};
  }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t ld() const { return ld_; }
  bsrmm_dtype dtype() const { return dtype_; }

  int64_t offset(int64_t i, int64_t j) const {
    return layout_ == BSRMM_LAYOUT_ROW_MAJOR ? i * ld_ + j : j * ld_ + i;
  }
  double get(int64_t i, int64_t j) const { return load(dtype_, element(offset(i, j))); }
  void set(int64_t i, int64_t j, double value) { store(dtype_, element(offset(i, j)), value); }
  void fill(double value) {
    for (int64_t i = 0; i < rows_; ++i)
      for (int64_t j = 0; j < cols_; ++j) set(i, j, value);
  }

  // True when every element outside the logical matrix still holds the NaN sentinel.
  bool padding_untouched() const {
    const int64_t inner = layout_ == BSRMM_LAYOUT_ROW_MAJOR ? cols_ : rows_;
    const int64_t outer = layout_ == BSRMM_LAYOUT_ROW_MAJOR ? rows_ : cols_;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t e = inner; e < ld_; ++e)
        if (!std::isnan(load(dtype_, element(o * ld_ + e)))) return false;
    return true;
  }

  std::vector<unsigned char>& bytes() { return bytes_; }

 private:
  unsigned char* element(int64_t e) { return bytes_.data() + static_cast<size_t>(e) * dtype_size(dtype_); }
  const unsigned char* element(int64_t e) const {
    return bytes_.data() + static_cast<size_t>(e) * dtype_size(dtype_);
  }

  int64_t rows_, cols_, ld_;
  bsrmm_dtype dtype_;
  bsrmm_layout layout_;
  std::vector<unsigned char> bytes_;
};

// A BSR matrix as caller-side arrays, with int64 indices so tests can also pass overflowing or
// negative ones; desc() converts to the requested index width.
struct HostBsr {
  int64_t rows = 0, cols = 0;
  int32_t block_height = 1, block_width = 1;
  bsrmm_dtype dtype = BSRMM_DTYPE_F32;
  std::vector<int64_t> row_ptr{0};
  std::vector<int64_t> col_idx;
  std::vector<unsigned char> values;  // nnzb blocks, row-major, in dtype

  int64_t nnzb() const { return static_cast<int64_t>(col_idx.size()); }
  int64_t block_elements() const { return int64_t{block_height} * block_width; }
  double value(int64_t block, int32_t i, int32_t j) const {
    return load(dtype, values.data() + static_cast<size_t>(block * block_elements() + i * block_width + j) *
                           dtype_size(dtype));
  }
  void set_value(int64_t block, int32_t i, int32_t j, double v) {
    store(dtype, values.data() + static_cast<size_t>(block * block_elements() + i * block_width + j) *
                     dtype_size(dtype),
          v);
  }

  bsrmm_bsr_desc desc(bsrmm_index_type type = BSRMM_INDEX_I32) {
    row_ptr32_.assign(row_ptr.begin(), row_ptr.end());
    col_idx32_.assign(col_idx.begin(), col_idx.end());
    const bool wide = type == BSRMM_INDEX_I64;
    return bsrmm_bsr_desc{rows,
                          cols,
                          block_height,
                          block_width,
                          nnzb(),
                          wide ? static_cast<const void*>(row_ptr.data()) : row_ptr32_.data(),
                          wide ? static_cast<const void*>(col_idx.data()) : col_idx32_.data(),
                          type,
                          values.empty() ? nullptr : values.data(),
                          dtype,
                          bsrmm_device{BSRMM_DEVICE_CPU, 0}};
  }

  // The matrix as a dense row-major array of doubles, built from the arrays directly.
  std::vector<double> to_dense() const {
    std::vector<double> dense(static_cast<size_t>(rows * cols), 0.0);
    for (int64_t r = 0; r + 1 < static_cast<int64_t>(row_ptr.size()); ++r)
      for (int64_t p = row_ptr[static_cast<size_t>(r)]; p < row_ptr[static_cast<size_t>(r) + 1]; ++p)
        for (int32_t i = 0; i < block_height; ++i)
          for (int32_t j = 0; j < block_width; ++j)
            dense[static_cast<size_t>((r * block_height + i) * cols + col_idx[static_cast<size_t>(p)] * block_width + j)] =
                value(p, i, j);
    return dense;
  }

 private:
  std::vector<int32_t> row_ptr32_;
  std::vector<int32_t> col_idx32_;
};

// A random BSR matrix: each block present with probability `density`, values uniform in
// [-1, 1) rounded to `dtype`.
template <typename Rng>
HostBsr random_bsr(Rng& rng, int64_t block_rows, int64_t block_cols, int32_t bh, int32_t bw,
                   double density, bsrmm_dtype dtype) {
  HostBsr m;
  m.rows = block_rows * bh;
  m.cols = block_cols * bw;
  m.block_height = bh;
  m.block_width = bw;
  m.dtype = dtype;
  for (int64_t r = 0; r < block_rows; ++r) {
    for (int64_t c = 0; c < block_cols; ++c)
      if (rng.chance(density)) m.col_idx.push_back(c);
    m.row_ptr.push_back(m.nnzb());
  }
  m.values.resize(static_cast<size_t>(m.nnzb() * m.block_elements()) * dtype_size(dtype));
  for (int64_t p = 0; p < m.nnzb(); ++p)
    for (int32_t i = 0; i < bh; ++i)
      for (int32_t j = 0; j < bw; ++j) m.set_value(p, i, j, round_to(dtype, rng.uniform(-1, 1)));
  return m;
}

// `structure` (its pattern kept) with fresh random values uniform in [-1, 1), rounded to its
// dtype: the next step of weights that change while their pattern stays.
template <typename Rng>
HostBsr with_fresh_values(HostBsr structure, Rng& rng) {
  for (int64_t p = 0; p < structure.nnzb(); ++p)
    for (int32_t i = 0; i < structure.block_height; ++i)
      for (int32_t j = 0; j < structure.block_width; ++j)
        structure.set_value(p, i, j, round_to(structure.dtype, rng.uniform(-1, 1)));
  return structure;
}

// Uniform in [-1, 1) rounded to the operand's dtype, everywhere in its logical shape.
template <typename Rng>
void fill_random(HostDense& d, Rng& rng) {
  for (int64_t i = 0; i < d.rows(); ++i)
    for (int64_t j = 0; j < d.cols(); ++j) d.set(i, j, round_to(d.dtype(), rng.uniform(-1, 1)));
}

}  // namespace bsrmm::test
