// cpu_rowwise_simd's kernels: a CSR-style SpMM for small blocks (1x1 to 8 high whole, taller ones
// a multiple of 8 high in 8-row bands) and any N, B read
// in place (rowwise_kernel.hpp). AVX-512 only: its masked loads and stores are what let N = 2 or
// N = 20 run without padding B or C to whole vectors; where the CPU lacks AVX-512 the variant
// declines and cpu_blocked_simd runs.
#pragma once

#include <bsrmm/bsrmm.h>

#include <cstdint>

namespace bsrmm::cpu {

// The tallest block the kernels take whole (any width); taller blocks run in bands of
// rowwise_band_height rows, so their height must be a multiple of it.
constexpr int32_t rowwise_max_height = 8;
constexpr int32_t rowwise_band_height = 8;

struct RowwiseProblem {
  int32_t block_height;
  int32_t block_width;
  const int32_t* row_ptr;
  const int32_t* col_idx;  // B's own block columns
  const void* a_values;    // compute type (f32 for f32/f16/bf16, f64 for f64), blocks row-major
  const void* b;           // row-major, compute type, rows b_ld apart (at least C.cols wide)
  int64_t b_ld;
  bsrmm_dense c;  // output in the operation's dtype, any layout
  double alpha;
  double beta;
  const void* bias;
  bsrmm_activation activation;
};

// Block rows [row_begin, row_end) of C, every column.
using RowwiseFunction = void (*)(const RowwiseProblem& problem, int64_t row_begin, int64_t row_end);

struct RowwiseKernels {
  RowwiseFunction rows[2];  // f32 compute, f64 compute
};

// Null where AVX-512 was not compiled in, the CPU lacks it, or BSRMM_CPU_ISA=avx2 keeps it out.
const RowwiseKernels* rowwise_kernels();

}  // namespace bsrmm::cpu
