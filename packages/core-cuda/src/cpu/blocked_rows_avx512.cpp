// cpu_blocked_simd's AVX-512 kernels (F, VL, BW, DQ): 64-byte vectors and 32 registers. Only
// this file is compiled for AVX-512, through the target pragma below (never -march=native, never
// a per-file -m flag: inline functions of shared headers would then be AVX-512 code the linker
// could pick for every caller); kernels() runs it only where the CPU has it.
#include "blocked_rows.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

// Everything shared with other TUs first, under the baseline target.
#include "../common/half.hpp"
#include "../common/limits.hpp"
#include "epilogue.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2,f16c")
// The target pragma does not define __AVX512F__; this tells blocked_kernel.hpp it may use
// AVX-512 intrinsics.
#define BSRMM_CPU_AVX512_TU 1
#include "blocked_kernel.hpp"

namespace bsrmm::cpu {
namespace {

// 8 rows x 3 vectors: 24 of the 32 registers accumulate, 3 hold B; A's element is broadcast from
// memory inside the FMA. 8 rows divide the common block heights (8..256).
using F32 = Tile<float, 64, 8, 3>;
using F64 = Tile<double, 64, 8, 3>;
// Blocks up to 3 high (3x3 stencils): 3 rows x 8 vectors, again 24 accumulators.
using TinyF32 = Tile<float, 64, 3, 8, 3>;
using TinyF64 = Tile<double, 64, 3, 8, 3>;

void tiny_rows_f32(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
                   int64_t col_end) {
  TinyF32::rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

void tiny_rows_f64(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
                   int64_t col_end) {
  TinyF64::rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

void rows_f32(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
              int64_t col_end) {
  F32::rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

void rows_f64(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
              int64_t col_end) {
  F64::rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

void vector_rows_f32(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
                     int64_t col_end) {
  F32::vector_rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

void vector_rows_f64(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
                     int64_t col_end) {
  F64::vector_rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

}  // namespace
}  // namespace bsrmm::cpu

#pragma GCC pop_options

namespace bsrmm::cpu {

const KernelSet* avx512_kernels() {
  static const KernelSet set{"avx512", {F32::lanes, F64::lanes}, {F32::cols, F64::cols}, {rows_f32, rows_f64}, {vector_rows_f32, vector_rows_f64},
                             3, {TinyF32::cols, TinyF64::cols}, {tiny_rows_f32, tiny_rows_f64}};
  return &set;
}

}  // namespace bsrmm::cpu

#else

namespace bsrmm::cpu {
const KernelSet* avx512_kernels() { return nullptr; }
}  // namespace bsrmm::cpu

#endif
