// One checked multiply, ready to run any variant on its backend. bsrmm_matmul runs it with the
// forced, heuristic or tuned choice; the tuner times the candidates through tuner::Trials, each
// run writing a scratch copy of C (refreshed from the caller's C before every run when beta
// reads it), so tuning never changes the caller's C: only the final run() writes it.
//
// The backend (src/backend/backend.hpp) is picked once, by the context's device; the operands
// become one MatmulArgs once; every method below calls through the backend.
#pragma once

#include "../backend/backend.hpp"
#include "../device/buffer.hpp"
#include "../matrix/bsr_matrix.hpp"
#include "../tune/tuner.hpp"
#include "handles.hpp"

#include <bsrmm/bsrmm.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace bsrmm::api {

// The backend of `ctx`'s device for one call: the CPU backend over the context's workers, or
// the CUDA backend of its ordinal (NO_DEVICE in a build without CUDA).
std::unique_ptr<backend::Backend> backend_for(bsrmm_context_s& ctx, const ContextSettings& settings);

class Execution final : public tuner::Trials {
 public:
  // `op_a` is the matrix the kernels run on (the plan's A^T for a transposed multiply); the
  // operands are already checked against each other and C is not empty.
  // `b_scales` (fp8 B only, else null) must outlive the execution.
  Execution(bsrmm_context_s& ctx, const ContextSettings& settings, const matrix::BsrMatrix& op_a,
            const bsrmm_dense& b, const bsrmm_dense& c, const bsrmm_matmul_options& options,
            const matrix::ValueScales* b_scales);
  // args_ points into this object (the dense copy).
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  // Into the caller's C, after releasing the scratch C of measuring. An empty variant runs the
  // heuristic's pick; threads 0 runs with the context's setting. Returns the variant that ran.
  std::string run(const tuner::Choice& choice);

  tuner::ProblemShape shape() const;
  // Everything shape(), device() and candidates() depend on, as numbers (tuner::recall).
  tuner::CallSignature signature() const;

  // tuner::Trials
  const std::vector<tuner::Choice>& candidates() override;
  double time_once(std::size_t index) override;
  tuner::MeasurePolicy policy() const override;
  std::string device() const override;

 private:
  // The plan's dense copy of op(A), for the dense variants: built only if one asks.
  class PlanDenseCopy final : public backend::DenseCopy {
   public:
    explicit PlanDenseCopy(const matrix::BsrMatrix& a) : a_(a) {}
    const void* get(void* stream) override;
    bool kept() const override;

   private:
    const matrix::BsrMatrix& a_;
  };

  // The arguments with C at `c` (the caller's, or the scratch copy while measuring).
  backend::MatmulArgs args_into(const bsrmm_dense& c) const;
  const bsrmm_dense& scratch_c();

  bsrmm_context_s& ctx_;
  const ContextSettings settings_;
  const matrix::BsrMatrix& op_a_;
  const bsrmm_dense b_;
  const bsrmm_dense c_;
  const bsrmm_matmul_options options_;

  PlanDenseCopy dense_copy_{op_a_};
  const std::unique_ptr<backend::Backend> backend_;
  backend::MatmulArgs args_;
  bool have_candidates_ = false;
  std::vector<tuner::Choice> candidates_;
  detail::Buffer scratch_;
  bsrmm_dense scratch_c_{};
};

}  // namespace bsrmm::api
