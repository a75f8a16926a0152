#include "cpu_backend.hpp"

#include "../common/dtype.hpp"
#include "../common/error.hpp"
#include "../tune/cpu_identity.hpp"
#include "blas_library.hpp"
#include "fp8_widen.hpp"
#include "sddmm.hpp"

#include <chrono>
#include <mutex>

namespace bsrmm::cpu {

namespace {

// The thread counts worth measuring when the context leaves the choice to bsrmm: its default
// count first (the heuristic: every CPU unless the environment limits it), then powers of two
// below it, descending (small problems lose more to waking workers than they gain; a loaded
// machine favours fewer). The tuner stops descending where fewer threads are clearly slower, so
// a large problem on a many-core machine times two or three counts, not every one down to a
// single thread.
std::vector<int32_t> thread_candidates(int32_t setting, int32_t default_threads) {
  if (setting > 0) return {setting};
  const int32_t all = default_threads;
  std::vector<int32_t> counts{all};
  int32_t power = 1;
  while (power * 2 < all) power *= 2;
  for (int32_t t = power; t >= 1 && t < all; t /= 2) counts.push_back(t);
  return counts;
}

// The reference variant is the correctness oracle, not a contender: it runs 5-60x slower than
// the blocked one on every problem measured, tiny ones included (docs/perf-log.md, "CPU tuning
// cost"; entry 46: timed on tiny products, it won by the noise of a loaded machine and then ran
// 3x slower than the blocked variant), so the tuner never times it (it can still be forced).

// op(A)'s dense copy for cpu_dense_blas: the plan's (built on first request).
const void* dense_values(const MatmulArgs& args) {
  if (args.a_dense == nullptr)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, dense_variant, " cannot run: no dense copy of A is offered");
  return args.a_dense->get(nullptr);
}

// fp8 operands: the reference reads them as they are; the blocked and rowwise variants take A's
// dequantised f32 values and B widened to f32 (fp8_widen.hpp); the dense GEMM declines.
bool fp8_operands(const MatmulArgs& args) { return detail::is_fp8(args.a.dtype); }

}  // namespace

std::vector<std::string> variant_names() {
  return {reference_variant, blocked_variant, dense_variant, rowwise_variant};
}

std::vector<std::string> sddmm_variant_names() { return {sddmm_blocked_variant, sddmm_reference_variant}; }

std::string CpuBackend::device_name() const { return tuner::cpu_identity(); }

const DenseDecision& CpuBackend::dense_decision(const MatmulArgs& args) {
  if (!dense_decision_) {
    std::string missing;
    const blas::Library* blas = blas::library(&missing);
    dense_decision_ = cpu::dense_decision(args, blas, missing);
  }
  return *dense_decision_;
}

std::string CpuBackend::matmul(const MatmulArgs& args, const backend::Candidate& run) {
  std::string variant = run.variant;
  const void* dense_a = nullptr;
  const bool fp8 = fp8_operands(args);
  if (fp8) {
    if (variant.empty()) variant = rowwise_preferred(args) ? rowwise_variant : blocked_variant;
    if (variant == dense_variant)
      detail::fail(BSRMM_STATUS_UNSUPPORTED, "variant '", variant, "' does not take ",
                   detail::name(args.a.dtype), " operands: on the CPU ", blocked_variant, ", ",
                   rowwise_variant, " and ", reference_variant, " multiply fp8");
  } else if (variant.empty()) {
    // The heuristic: the dense GEMM where A is dense enough and a BLAS is there, else rowwise
    // for tiny blocks where it wins (rowwise.cpp), else blocked (also when the dense copy finds
    // no memory).
    variant = rowwise_preferred(args) ? rowwise_variant : blocked_variant;
    if (dense_decision(args).placement == DensePlacement::first) {
      try {
        dense_a = dense_values(args);
        variant = dense_variant;
      } catch (const detail::Error& error) {
        if (error.status() != BSRMM_STATUS_OUT_OF_MEMORY) throw;
      }
    }
  }
  const bool blocked = variant == blocked_variant;
  const bool dense = variant == dense_variant;
  const bool rowwise = variant == rowwise_variant;
  if (!blocked && !dense && !rowwise && variant != reference_variant)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "variant '", variant,
                 "' is not a CPU variant (bsrmm_variant_name lists them)");
  const blas::Library* blas = nullptr;
  if (dense) {
    const DenseDecision& decision = dense_decision(args);
    if (!decision.refusal.empty())
      detail::fail(BSRMM_STATUS_UNSUPPORTED, dense_variant, " cannot run: ", decision.refusal);
    blas = blas::library(nullptr);
    if (dense_a == nullptr) dense_a = dense_values(args);
  }
  std::lock_guard<std::mutex> lock(workers_.mutex);
  detail::ThreadPool& pool = workers_.pool(run.threads > 0 ? run.threads : threads_);
  if (dense) {
    matmul_dense(args, dense_a, *blas, pool, workers_.workspace);
  } else if (blocked || rowwise) {
    const MatmulArgs fast = fp8 ? widened_fp8(args, workers_.fp8_b, pool) : args;
    if (blocked) matmul_blocked(fast, pool, workers_.workspace);
    else matmul_rowwise(fast, pool, workers_.workspace);
  } else {
    matmul_reference(args, pool);
  }
  return variant;
}

std::vector<backend::Candidate> CpuBackend::matmul_candidates(const MatmulArgs& args) {
  // Where the heuristic prefers cpu_rowwise_simd it is the only variant (it ran 1.2-4x the
  // blocked one there and was never more than 5% behind, while timing both on a loaded machine
  // picked the blocked one by noise, 25% slower: docs/perf-log.md entry 46; so did taller
  // blocks in bands at N 2-64, entry 53); elsewhere the blocked variant, and rowwise after it
  // where it can run at N > 1.
  std::vector<const char*> variants;
  if (rowwise_preferred(args)) {
    variants.push_back(rowwise_variant);
  } else {
    variants.push_back(blocked_variant);
    if (args.c.cols > 1 && rowwise_refusal(args).empty()) variants.push_back(rowwise_variant);
  }
  std::vector<backend::Candidate> candidates;
  for (const char* variant : variants)
    for (int32_t threads : thread_candidates(threads_, workers_.default_threads))
      candidates.push_back(backend::Candidate{variant, threads});
  return candidates;
}

double CpuBackend::time_matmul(const MatmulArgs& args, const backend::Candidate& run) {
  const auto start = std::chrono::steady_clock::now();
  matmul(args, run);
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count();
}

std::string CpuBackend::sddmm(const backend::SddmmArgs& args, const backend::Candidate& run) {
  const bool reference = run.variant == sddmm_reference_variant;
  if (!run.variant.empty() && !reference && run.variant != sddmm_blocked_variant)
    detail::fail(BSRMM_STATUS_UNSUPPORTED, "variant '", run.variant, "' is not a CPU SDDMM variant (",
                 sddmm_blocked_variant, ", ", sddmm_reference_variant, ")");
  std::lock_guard<std::mutex> lock(workers_.mutex);
  detail::ThreadPool& pool = workers_.pool(run.threads > 0 ? run.threads : threads_);
  if (reference) {
    sddmm_reference(args, pool);
    return sddmm_reference_variant;
  }
  sddmm_blocked(args, pool, workers_.workspace);
  return sddmm_blocked_variant;
}

}  // namespace bsrmm::cpu
