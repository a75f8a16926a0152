// cpu_rowwise_simd's kernels: a CSR-style SpMM for small blocks (1x1 to 8 high whole, taller ones
// a multiple of 8 high in 8-row bands) and any N, B read in place (rowwise_kernel.hpp). Two
// builds of one nest: AVX-512 (zmm, mask registers) and AVX2 + FMA (ymm: vmaskmov loads, stores
// in plain pieces); their partial loads and stores are what let N = 2 or N = 20 run without
// padding B or C to whole vectors.
// Where the CPU has neither the variant declines and cpu_blocked_simd runs.
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
  // Block rows whose blocks bring at least this many B rows (blocks x width) walk in panels
  // (rowwise_panels.hpp) where N spans several chunks; 0: every block row walks chunk by chunk.
  int64_t panel_min_b_rows;
};

// Block rows [row_begin, row_end) of C, every column.
using RowwiseFunction = void (*)(const RowwiseProblem& problem, int64_t row_begin, int64_t row_end);

struct RowwiseKernels {
  RowwiseFunction rows[2];  // f32 compute, f64 compute
};

// The AVX-512 build where the blocked kernels chose AVX-512 (cpuid, BSRMM_CPU_ISA), else the
// AVX2 + FMA build where the CPU has both; null where neither was compiled in (clang, another
// architecture) or the CPU lacks both.
const RowwiseKernels* rowwise_kernels();

// The two builds (rowwise_avx512.cpp, rowwise_avx2.cpp): null where not compiled in.
const RowwiseKernels* rowwise_kernels_avx512();
const RowwiseKernels* rowwise_kernels_avx2();

}  // namespace bsrmm::cpu
