// cpu_rowwise_simd's AVX2 + FMA kernels (rowwise_kernel.hpp over rowwise_ymm.hpp), compiled for
// AVX2 through the target pragma below only (as rowwise_avx512.cpp: shared headers first, under
// the baseline target), run only where the CPU has AVX2 and FMA and the blocked kernels did not
// choose AVX-512 (rowwise_kernels() in rowwise.cpp).
#include "blocked_rows.hpp"
#include "rowwise.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

#include "../common/half.hpp"
#include "epilogue.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2,f16c")
#include "rowwise_ymm.hpp"
#include "rowwise_kernel.hpp"

namespace bsrmm::cpu {
namespace {

void rows_f32(const RowwiseProblem& problem, int64_t row_begin, int64_t row_end) {
  rows_any<float>(problem, row_begin, row_end);
}

void rows_f64(const RowwiseProblem& problem, int64_t row_begin, int64_t row_end) {
  rows_any<double>(problem, row_begin, row_end);
}

}  // namespace
}  // namespace bsrmm::cpu

#pragma GCC pop_options

namespace bsrmm::cpu {

const RowwiseKernels* rowwise_kernels_avx2() {
  static const RowwiseKernels set{{rows_f32, rows_f64}};
  return &set;
}

}  // namespace bsrmm::cpu

#else

namespace bsrmm::cpu {
const RowwiseKernels* rowwise_kernels_avx2() { return nullptr; }
}  // namespace bsrmm::cpu

#endif
