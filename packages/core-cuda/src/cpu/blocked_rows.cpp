// cpu_blocked_simd's AVX2+FMA and baseline kernels, and the choice between them and AVX-512.
#include "blocked_kernel.hpp"

#include <cstdlib>
#include <cstring>

// On x86-64 Linux the entry points are compiled twice, for x86-64-v3 (AVX2 + FMA) and the
// baseline, and the loader picks one per machine (ifunc). Everything they call is
// always_inline, so the whole loop nest is compiled for the chosen instruction set. A shipped
// build never uses -march=native. Not under ThreadSanitizer: the loader runs ifunc resolvers
// before the TSan runtime is initialised, and an instrumented resolver crashes there.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BSRMM_CPU_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define BSRMM_CPU_THREAD_SANITIZER 1
#endif
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(BSRMM_CPU_THREAD_SANITIZER)
#define BSRMM_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BSRMM_CPU_CLONES
#endif

namespace bsrmm::cpu {

namespace {

// 4 rows x 3 vectors of 32 bytes: 12 of AVX2's 16 registers for accumulators, 3 for B and 1 for
// the broadcast A element: 7 loads per 12 FMAs, within the two load ports of current cores.
using F32 = Tile<float, 32, 4, 3>;
using F64 = Tile<double, 32, 4, 3>;

// The clones live in the anonymous namespace: GCC gives a target_clones function's dispatcher
// default visibility whatever is asked for, and internal linkage is the way to keep it out of
// the library's exported symbols.
BSRMM_CPU_CLONES
void rows_f32(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
              int64_t col_end) {
  F32::rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

BSRMM_CPU_CLONES
void rows_f64(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
              int64_t col_end) {
  F64::rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

BSRMM_CPU_CLONES
void vector_rows_f32(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
                     int64_t col_end) {
  F32::vector_rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

BSRMM_CPU_CLONES
void vector_rows_f64(const BlockedProblem& problem, int64_t row_begin, int64_t row_end, int64_t col_begin,
                     int64_t col_end) {
  F64::vector_rows_by_output(problem, row_begin, row_end, col_begin, col_end);
}

bool has_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

}  // namespace

const KernelSet& avx2_kernels() {
  static const KernelSet set{"avx2", {F32::lanes, F64::lanes}, {F32::cols, F64::cols}, {rows_f32, rows_f64}, {vector_rows_f32, vector_rows_f64},
                             0, {0, 0}, {nullptr, nullptr}};
  return set;
}

const KernelSet& kernels() {
  static const KernelSet& chosen = [] () -> const KernelSet& {
    const char* isa = std::getenv("BSRMM_CPU_ISA");
    const bool avx2_only = isa != nullptr && std::strcmp(isa, "avx2") == 0;
    if (!avx2_only && avx512_kernels() != nullptr && has_avx512()) return *avx512_kernels();
    return avx2_kernels();
  }();
  return chosen;
}

}  // namespace bsrmm::cpu
