// A CBLAS, loaded at run time for the dense fallback (cpu_dense_blas): bsrmm neither links one
// nor needs one installed. Looked for once per process: $BSRMM_BLAS (a path; the Python binding
// may point it at numpy's or scipy's bundled OpenBLAS) when set, else libopenblas.so.0,
// libmkl_rt.so.2 / .so.3, libblis.so.4, libflexiblas.so.3, libcblas.so.3, libblas.so.3 on the loader's
// search path. Each may export plain `cblas_sgemm` (LP64), or numpy/scipy's renamed
// `scipy_cblas_sgemm` / ILP64 `scipy_cblas_sgemm64_`. Without one the variant declines, saying
// why. The product runs on the library's own threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bsrmm::cpu::blas {

enum class Order { row_major, col_major };

class Library {
 public:
  virtual ~Library() = default;
  // C (m x n, in `order`) = alpha * op(A) * op(B) + beta * C, CBLAS semantics (beta == 0 does
  // not read C). false when a size does not fit the library's integer type.
  virtual bool gemm(Order order, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                    float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                    float beta, float* c, int64_t ldc) const = 0;
  virtual bool gemm(Order order, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                    double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
                    double beta, double* c, int64_t ldc) const = 0;
  // What was loaded, e.g. "libopenblas.so.0 (OpenBLAS, cblas_sgemm)".
  virtual const std::string& description() const = 0;
  // An optimised BLAS the heuristic may pick without timing it (OpenBLAS, MKL, BLIS); a
  // reference or unknown one is only ever chosen by the tuner's measurement.
  virtual bool optimized() const = 0;
};

// The process's library (loaded on first use, kept), or null with `why` saying what was tried
// and what failed.
const Library* library(std::string* why);

// The first of `names` (paths or sonames) that loads and exports CBLAS gemm, or null with `why`.
// library() is this over $BSRMM_BLAS or the default names; tests call it directly.
std::unique_ptr<Library> load(const std::vector<std::string>& names, std::string* why);

}  // namespace bsrmm::cpu::blas
