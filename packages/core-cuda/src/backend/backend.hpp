// The one interface the core runs every operation through: a CPU backend (src/cpu) and a CUDA
// backend (src/cuda) implement it; src/api picks one per call by the context's device and calls
// only this. Plain C++ (no CUDA header, no type of src/api, src/matrix or src/tune), so both
// backends and the core include it.
//
// Adding an operation: its arguments struct beside MatmulArgs in operands.hpp, one group of
// methods below (run, candidates, time, as for matmul), one implementation per backend
// (src/cpu/cpu_backend.cpp, src/cuda/cuda_backend.cpp), and its entry point in src/api.
#pragma once

#include "operands.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bsrmm::backend {

// One way to run an operation: a variant name (empty: the backend's heuristic picks) and, for
// CPU variants, the worker threads (0: the context's setting; GPU variants ignore it).
struct Candidate {
  std::string variant;
  int32_t threads = 0;
};

// How a backend's runs are timed, which decides how the tuner measures them (tune/measure.hpp).
enum class Clock {
  host,    // wall time around the run: it runs on the calling thread and its workers
  device,  // GPU events around the enqueued work: launch and host overhead excluded
};

class Backend {
 public:
  virtual ~Backend() = default;

  // ---- identity: what the tuner files its choices under ----
  // "cpu", or the GPU's "sm_90".
  virtual std::string arch() const = 0;
  // The device's name and arch, e.g. "AMD EPYC 7B13 (2 hardware threads)".
  virtual std::string device_name() const = 0;
  virtual Clock clock() const = 0;

  // ---- matmul: C = alpha * op(A) * B + beta * C (+ bias, activation) ----
  // Runs `run` (its variant empty: the heuristic's pick) and returns the variant that ran.
  // Throws UNSUPPORTED, naming the arguments, when the variant cannot take them.
  virtual std::string matmul(const MatmulArgs& args, const Candidate& run) = 0;
  // Every way to run these arguments worth timing, the heuristic's pick first.
  virtual std::vector<Candidate> matmul_candidates(const MatmulArgs& args) = 0;
  // One run of `run` on these arguments, in milliseconds by clock().
  virtual double time_matmul(const MatmulArgs& args, const Candidate& run) = 0;

  // ---- sddmm: values[b] = alpha * (X Y)[block b] + beta * values[b] (not tuned) ----
  // Runs `run` (its variant empty: the backend's pick) and returns the variant that ran.
  virtual std::string sddmm(const SddmmArgs& args, const Candidate& run) = 0;
};

}  // namespace bsrmm::backend
