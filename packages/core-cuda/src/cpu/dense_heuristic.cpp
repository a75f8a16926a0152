// Where cpu_dense_blas is worth running. A dense GEMM costs the same at every density; the
// sparse kernel costs in proportion to the stored values, at a rate that grows with the block's
// area. So there is a break-even density per block area and dtype: the sparse kernel's rate
// over the dense GEMM's. Fitted on a 2-core Xeon (AVX-512) against numpy's OpenBLAS 0.3.31,
// docs/perf-log.md entry "CPU dense fallback: break-even". At or above it the dense GEMM is the
// untuned default (when the BLAS is a known optimised one); from half of it the tuner times it.
#include "../common/dtype.hpp"
#include "blas_library.hpp"
#include "cpu_backend.hpp"

#include <algorithm>
#include <cmath>

#if defined(__unix__)
#include <unistd.h>
#endif

namespace bsrmm::cpu {

namespace {

// The break-even density for N >= 32; smaller N moves it up (a GEMM with few columns runs
// further below its peak than the sparse kernel; at N = 1 the matrix-vector loop streams only
// the stored blocks). Measured on one core of the AVX-512 machine it was fitted on (full-density
// matrices 1536^2, N 1-256, tests/perf/cpu_dense_break_even.py --cpu-time): blocks of 8 and more
// run at OpenBLAS's rate (break-even 0.9-1.1 f32, 0.95-1.4 f64), 4x4 at 0.8-0.93, 3x3 at
// 0.52-0.59 f32 and 0.57-0.86 f64 (perf-log entry "CPU dense fallback: break-even").
double break_even(bsrmm_dtype dtype, int64_t area, int64_t n) {
  const bool f64 = dtype == BSRMM_DTYPE_F64;
  double density;
  if (area >= 8 * 8) density = f64 ? 0.95 : 1.0;
  else if (area >= 4 * 4) density = f64 ? 0.8 : 0.85;
  else density = f64 ? 0.55 : 0.5;
  if (n < 4) density *= 2.0;
  else if (n < 32) density *= 1.3;
  return density;
}

// Bytes of host memory the dense copy may take: a quarter of the machine's.
double dense_copy_limit() {
#if defined(__unix__)
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return 0.25 * double(pages) * double(page);
#endif
  return double(int64_t{1} << 31);
}

}  // namespace

bsrmm_dtype dense_copy_dtype(bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_F64 ? BSRMM_DTYPE_F64 : BSRMM_DTYPE_F32;
}

DenseDecision dense_decision(const MatmulArgs& args, const blas::Library* blas,
                             const std::string& missing) {
  if (blas == nullptr) return {DensePlacement::none, missing};
  const double m = double(args.c.rows);
  const double k = double(args.b.rows);
  const double bytes = m * k * double(detail::element_size(dense_copy_dtype(args.a.dtype)));
  if (bytes > dense_copy_limit()) {
    return {DensePlacement::none, "the dense copy of A (" + std::to_string(int64_t(bytes)) +
                                      " bytes) would exceed a quarter of the machine's memory"};
  }
  if (m * k == 0.0) return {DensePlacement::none, ""};
  const int64_t area = int64_t{args.a.block_height} * args.a.block_width;
  const double density = double(args.a.nnzb) * double(area) / (m * k);
  const double even = break_even(args.a.dtype, area, args.c.cols);
  if (density >= even && blas->optimized()) return {DensePlacement::first, ""};
  if (density >= 0.5 * even) return {DensePlacement::candidate, ""};
  return {DensePlacement::none, ""};
}

}  // namespace bsrmm::cpu
