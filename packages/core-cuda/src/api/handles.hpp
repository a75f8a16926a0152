// What the opaque C handles hold. A context is a device plus the settings and CPU execution
// state of the multiplies run through it; a matrix is a validated BsrMatrix.
//
// Thread safety: every bsrmm_* call may be made from several threads at once, on the same
// handles, except bsrmm_*_destroy, which must not race with any other use of that handle.
// Setters apply to multiplies that start after them. CPU multiplies through one context run one
// at a time (they share its worker pool and workspace); CUDA multiplies are only enqueued.
#pragma once

#include "../cpu/workers.hpp"
#include "../matrix/bsr_matrix.hpp"

#include <bsrmm/bsrmm.h>

#include <memory>
#include <mutex>
#include <string>

struct bsrmm_context_s {
  explicit bsrmm_context_s(bsrmm_device d) : device(d) {}

  const bsrmm_device device;

  std::mutex settings_mutex;  // guards the settings and last_variant
  void* stream = nullptr;
  int32_t num_threads = 0;  // 0: cpu.default_threads
  bsrmm_f32_mode f32_mode = BSRMM_F32_EXACT;
  bsrmm_tuning_mode tuning_mode = BSRMM_TUNING_AUTO;
  std::string forced_variant;
  int32_t sm_budget = 0;  // 0: every SM (CUDA only)
  std::string last_variant;

  // Worker pools and workspace of the CPU multiplies, one at a time (cpu/workers.hpp).
  bsrmm::detail::CpuWorkers cpu;
};

struct bsrmm_matrix_s {
  std::unique_ptr<bsrmm::matrix::BsrMatrix> matrix;
};

namespace bsrmm::api {

// The settings a call runs with, read once under the lock.
struct ContextSettings {
  void* stream;
  int32_t num_threads;
  bsrmm_f32_mode f32_mode;
  bsrmm_tuning_mode tuning_mode;
  std::string forced_variant;
  int32_t sm_budget;
};

inline ContextSettings snapshot(bsrmm_context_s& ctx) {
  std::lock_guard<std::mutex> lock(ctx.settings_mutex);
  return ContextSettings{ctx.stream, ctx.num_threads, ctx.f32_mode, ctx.tuning_mode,
                         ctx.forced_variant, ctx.sm_budget};
}

inline void* stream_of(bsrmm_context_s& ctx) {
  std::lock_guard<std::mutex> lock(ctx.settings_mutex);
  return ctx.stream;
}

}  // namespace bsrmm::api
