// The CPU backend: C = alpha * A * B + beta * C (+ bias, activation) on host memory, with op(A)
// already applied by the caller (a transposed multiply passes the plan's A^T). Operands are
// validated before they arrive here. Three variants:
//   cpu_reference_f64acc  plain loops, f64 accumulation for every dtype: the slow, obvious one.
//   cpu_blocked_simd      the fast path: the rows of B under A's used block columns packed in
//                         column strips of the compute type, a register-blocked SIMD
//                         micro-kernel (AVX2+FMA chosen at run time),
//                         block rows split across the pool by work. Accumulates in f32 for
//                         f32/f16/bf16 and in f64 for f64.
//   cpu_rowwise_simd      small blocks (at most 8 high, or a multiple of 8 in 8-row bands), any
//                         N: each block's columns scale B's rows (read in place) into C's rows
//                         in masked vectors, a CSR SpMM for blocks (rowwise.hpp); AVX-512,
//                         else AVX2 + FMA.
//   cpu_dense_blas        one BLAS GEMM (loaded at run time, blas_library.hpp) over the plan's
//                         dense copy of op(A), then bsrmm's epilogue; where A is dense enough.
#pragma once

#include "../backend/backend.hpp"
#include "../common/thread_pool.hpp"
#include "../device/buffer.hpp"
#include "workers.hpp"

#include <bsrmm/bsrmm.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bsrmm::cpu {

namespace blas {
class Library;
}
struct KernelSet;

// The shared operand views (src/backend/operands.hpp), by the names the CPU kernels use.
using BsrView = backend::BsrView;
using MatmulArgs = backend::MatmulArgs;

constexpr const char* reference_variant = "cpu_reference_f64acc";
constexpr const char* blocked_variant = "cpu_blocked_simd";
constexpr const char* dense_variant = "cpu_dense_blas";
constexpr const char* rowwise_variant = "cpu_rowwise_simd";

// The matmul variants, then the SDDMM ones (sddmm.hpp: the pick first).
std::vector<std::string> variant_names();
std::vector<std::string> sddmm_variant_names();

// Every dtype, fp8 included: fp8 operands (A and B both fp8, C f32/f16/bf16) run through
// reference_fp8_rows (reference_fp8.cpp), the only CPU path that takes them.
void matmul_reference(const MatmulArgs& args, detail::ThreadPool& pool);
void reference_fp8_rows(const MatmulArgs& args, int64_t row_begin, int64_t row_end);
// `workspace` (host memory) is grown as needed and kept for the next call.
void matmul_blocked(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace);
// With the given instruction set's kernels (blocked_rows.hpp; tests run each).
void matmul_blocked(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace,
                    const KernelSet& kernels);

// cpu_rowwise_simd (rowwise.cpp): why it cannot run ("" when it can), whether the heuristic
// takes it over cpu_blocked_simd (then it is the tuner's only variant), and the multiply.
std::string rowwise_refusal(const MatmulArgs& args);
bool rowwise_preferred(const MatmulArgs& args);
void matmul_rowwise(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace);
// Its walk: block rows that bring at least this many B rows walk in panels (rowwise_panels.hpp),
// 0: none (where B stays cached). The overload takes the threshold (tests force the panels).
int64_t rowwise_panel_min_b_rows(const MatmulArgs& args);
void matmul_rowwise(const MatmulArgs& args, detail::ThreadPool& pool, detail::Buffer& workspace,
                    int64_t panel_min_b_rows);

// Where cpu_dense_blas stands for a product (dense_heuristic.cpp): not a candidate (too sparse,
// or it cannot run: `refusal` says why), a candidate the tuner times, or the untuned default.
enum class DensePlacement { none, candidate, first };
struct DenseDecision {
  DensePlacement placement;
  std::string refusal;  // why it cannot run at all ("" when it can)
};
// `blas` null: no BLAS was found (the variant declines with `missing`, which says why).
DenseDecision dense_decision(const MatmulArgs& args, const blas::Library* blas,
                             const std::string& missing);
// The dense copy's element: f64 for f64 matrices, f32 for the others.
bsrmm_dtype dense_copy_dtype(bsrmm_dtype dtype);
// `dense_a` is op(A) as a row-major C.rows x B.rows array of dense_copy_dtype (the plan's).
void matmul_dense(const MatmulArgs& args, const void* dense_a, const blas::Library& blas,
                  detail::ThreadPool& pool, detail::Buffer& workspace);

// The Backend (src/backend/backend.hpp) over these variants, for one call's context: the
// heuristic (cpu_dense_blas where A is dense enough and a BLAS is there, else cpu_blocked_simd),
// the tuner's candidates (variants x thread counts) and their wall-clock timing.
class CpuBackend final : public backend::Backend {
 public:
  // `threads`: the context's setting (0: workers.default_threads and, when tuning, fewer).
  CpuBackend(detail::CpuWorkers& workers, int32_t threads) : workers_(workers), threads_(threads) {}

  std::string arch() const override { return "cpu"; }
  std::string device_name() const override;
  backend::Clock clock() const override { return backend::Clock::host; }

  std::string matmul(const MatmulArgs& args, const backend::Candidate& run) override;
  std::vector<backend::Candidate> matmul_candidates(const MatmulArgs& args) override;
  double time_matmul(const MatmulArgs& args, const backend::Candidate& run) override;

  // cpu_sddmm_blocked (the pick) or cpu_sddmm_reference_f64acc (forced), sddmm.hpp.
  std::string sddmm(const backend::SddmmArgs& args, const backend::Candidate& run) override;

 private:
  // cpu_dense_blas's placement for the call's product (computed once: a backend serves one call).
  const DenseDecision& dense_decision(const MatmulArgs& args);

  detail::CpuWorkers& workers_;
  const int32_t threads_;
  std::optional<DenseDecision> dense_decision_;
};

}  // namespace bsrmm::cpu
