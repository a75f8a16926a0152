// Shared by the CPU backend's tests: finds a CBLAS for cpu_dense_blas before any test runs, and
// builds the backend's own arguments (cpu::MatmulArgs) from test operands, for tests that call a
// kernel directly rather than through the C ABI.
#pragma once

#include "../../src/cpu/cpu_backend.hpp"
#include "../support/host_arrays.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bsrmm::test {

// The plan's CPU parts, computed here independently: used block columns, each block's index
// into them, f32 values.
struct CpuOperands {
  std::vector<int32_t> row_ptr, col_idx, used, packed;
  std::vector<float> values_f32;
  cpu::MatmulArgs args{};

  CpuOperands(const HostBsr& a, HostDense& b, HostDense& c) {
    row_ptr.assign(a.row_ptr.begin(), a.row_ptr.end());
    col_idx.assign(a.col_idx.begin(), a.col_idx.end());
    used = col_idx;
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    for (int32_t column : col_idx)
      packed.push_back(static_cast<int32_t>(std::lower_bound(used.begin(), used.end(), column) - used.begin()));
    const int64_t count = a.nnzb() * a.block_elements();
    for (int64_t e = 0; e < count; ++e)
      values_f32.push_back(static_cast<float>(load(a.dtype, a.values.data() + e * dtype_size(a.dtype))));
    args.a.block_row_count = a.rows / a.block_height;
    args.a.block_col_count = a.cols / a.block_width;
    args.a.block_height = a.block_height;
    args.a.block_width = a.block_width;
    args.a.nnzb = a.nnzb();
    args.a.row_ptr = row_ptr.data();
    args.a.col_idx = col_idx.data();
    args.a.values = a.values.empty() ? nullptr : a.values.data();
    args.a.dtype = a.dtype;
    args.a.values_f32 = values_f32.empty() ? nullptr : values_f32.data();
    args.a.used_columns = used.data();
    args.a.used_column_count = static_cast<int64_t>(used.size());
    args.a.packed_col_idx = packed.data();
    args.b = b.desc();
    args.c = c.desc();
    args.alpha = 1.0;
    args.beta = 0.0;
    args.bias = nullptr;
    args.activation = BSRMM_ACTIVATION_NONE;
  }
};

// A bias of `rows` values uniform in [-1, 1) rounded to `dtype`: as doubles for the reference
// and as `dtype` elements for the kernel's args.bias.
struct HostBias {
  std::vector<double> values;
  std::vector<unsigned char> bytes;
};

template <typename Rng>
HostBias random_bias(int64_t rows, bsrmm_dtype dtype, Rng& rng) {
  HostBias bias;
  bias.bytes.resize(static_cast<size_t>(rows) * dtype_size(dtype));
  for (int64_t i = 0; i < rows; ++i) {
    bias.values.push_back(round_to(dtype, rng.uniform(-1, 1)));
    store(dtype, bias.bytes.data() + i * dtype_size(dtype), bias.values.back());
  }
  return bias;
}

}  // namespace bsrmm::test
